/* labels.c — the words the diagnosis and the reports share (analysis/labels.h): a
 * kernel's short label, a list of ranks, and the same list of slots written as rank ids
 * (internal.h). Writes into the caller's buffer only.
 */
#include "analysis/internal.h"

#include <stdio.h>
#include <string.h>

void an_short_name(const struct argus_jobstore *js, uint64_t hash, char *buf, size_t len)
{
    static const char *const ops[] = { "ReduceScatter", "AllReduce", "AllGather", "AllToAll",
                                       "AlltoAll", "Broadcast", "SendRecv", "Send", "Recv",
                                       "Reduce" };
    const char *name = argus_jobstore_name(js, hash);
    if (!len)
        return;
    if (!name) {
        snprintf(buf, len, "kernel %016llx", (unsigned long long)hash);
        return;
    }
    if (strstr(name, "nccl") || strstr(name, "NCCL"))
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (strstr(name, ops[i])) {
                snprintf(buf, len, "%s", ops[i]);
                return;
            }
    size_t n = strcspn(name, "<(");
    if (n == 0)
        n = strlen(name);
    if (n > 60)
        snprintf(buf, len, "%.57s...", name);
    else
        snprintf(buf, len, "%.*s", (int)n, name);
}

void an_format_ranks(const uint32_t *r, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    if (!len)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at + 1 < len;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        int w;
        if (j >= i + 2)
            w = snprintf(buf + at, len - at, "%s%u-%u", i ? "," : "", r[i], r[j]);
        else if (j == i + 1)
            w = snprintf(buf + at, len - at, "%s%u,%u", i ? "," : "", r[i], r[j]);
        else
            w = snprintf(buf + at, len - at, "%s%u", i ? "," : "", r[i]);
        if (w < 0 || (size_t)w >= len - at) {
            buf[at] = '\0';
            break;
        }
        at += (size_t)w;
        i = j + 1;
    }
}

void an_format_slots(const struct an_ctx *c, const uint32_t *v, size_t n, char *buf,
                     size_t len)
{
    uint32_t id[ARGUS_ANOMALY_MAX_RANKS];
    n = n < ARGUS_ANOMALY_MAX_RANKS ? n : ARGUS_ANOMALY_MAX_RANKS;
    memcpy(id, v, n * sizeof *id);
    an_slots_to_ranks(c, id, (uint32_t)n);
    an_format_ranks(id, n, buf, len);
}
