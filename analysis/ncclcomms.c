/* ncclcomms.c — the NCCL communicators of a window and their members (ncclcomms.h). */
#include "analysis/ncclcomms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

_Static_assert(2 * AN_NCCL_COMMS_MAX == 128, "comm_index's hash takes 7 bits");

/* The index of hash x, added when new and there is room; -1 when none. */
static long comm_index(struct an_nccl_comms *q, uint64_t x, int add)
{
    size_t i = (size_t)((x * 0x9e3779b97f4a7c15ull) >> 57); /* 7 bits: 2 * 64 */
    for (;; i = (i + 1) % (2 * AN_NCCL_COMMS_MAX)) {
        if (!q->slot[i]) {
            if (!add || q->n == AN_NCCL_COMMS_MAX)
                return -1;
            q->h[q->n] = x;
            q->cnt[q->n] = q->stamp[q->n] = 0;
            q->slot[i] = (uint16_t)++q->n;
            return (long)q->n - 1;
        }
        if (q->h[q->slot[i] - 1] == x)
            return q->slot[i] - 1;
    }
}

int an_nccl_comms_scan(const struct an_ctx *c, size_t a, size_t b, struct an_nccl_comms *q)
{
    memset(q, 0, sizeof *q);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < q->n; k++)
            q->stamp[k] = 0;
        for (uint32_t r = 0; r < c->n; r++)
            for (size_t si = a; si <= b; si++) {
                const struct argus_step_summary *s = an_cell(c, r, si);
                for (uint32_t i = 0; s && i < s->nccl.n_comms && i < ARGUS_NCCL_SUM_COMMS; i++) {
                    const long k = comm_index(q, s->nccl.comm[i].comm_hash, !pass);
                    if (k < 0 || q->stamp[k] == r + 1)
                        continue;
                    q->stamp[k] = r + 1;
                    if (pass)
                        q->mem[q->off[k] + q->cnt[k]] = r;
                    q->cnt[k]++;
                }
            }
        if (pass)
            break;
        for (size_t k = 0; k < q->n; k++) {
            q->off[k + 1] = q->off[k] + q->cnt[k];
            q->cnt[k] = 0;
        }
        if (q->n && !(q->mem = malloc(((size_t)q->off[q->n] + 1) * sizeof *q->mem)))
            return -ENOMEM;
    }
    for (size_t i = 0; i < q->n; i++) { /* insertion sort of at most AN_NCCL_COMMS_MAX */
        size_t j = i;
        for (; j > 0 && q->h[q->order[j - 1]] > q->h[i]; j--)
            q->order[j] = q->order[j - 1];
        q->order[j] = i;
    }
    return 0;
}

uint32_t an_nccl_comm_members(const struct an_nccl_comms *q, size_t k, uint32_t *mem)
{
    memcpy(mem, q->mem + q->off[k], (size_t)q->cnt[k] * sizeof *mem);
    return q->cnt[k];
}

void an_nccl_comms_free(struct an_nccl_comms *q)
{
    free(q->mem);
    q->mem = NULL;
}
