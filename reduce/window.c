/* window.c — one rank's wire records for one window (see window.h). */
#include "reduce/window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


static int window_reserve(struct argus_window *w, size_t extra)
{
    if (w->len + extra <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + extra)
        cap *= 2;
    uint8_t *nb = realloc(w->buf, cap);
    if (!nb)
        return -ENOMEM;
    w->buf = nb;
    w->cap = cap;
    return 0;
}

int argus_window_init(struct argus_window *w, size_t reserve)
{
    memset(w, 0, sizeof *w);
    return window_reserve(w, reserve);
}

void argus_window_free(struct argus_window *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

void argus_window_reset(struct argus_window *w)
{
    w->len = 0;
    w->n_summaries = 0;
}

int argus_window_add_summary(struct argus_window *w, const struct argus_step_summary *s)
{
    int rc = window_reserve(w, argus_summary_encoded_max(s->n_kmodes));
    if (rc)
        return rc;
    long n = argus_summary_encode(s, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    w->n_summaries++;
    w->n_summaries_total++;
    w->bytes_summaries += (uint64_t)n;
    return 0;
}

int argus_window_add_name(struct argus_window *w, uint64_t hash, const char *name)
{
    int rc = window_reserve(w, ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER + 10 + ARGUS_NAME_MAX);
    if (rc)
        return rc;
    long n = argus_name_encode(hash, name, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    return 0;
}

int argus_window_add_rankinfo(struct argus_window *w, const struct argus_rank_info *ri)
{
    int rc = window_reserve(w, ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER + sizeof *ri + 64);
    if (rc)
        return rc;
    long n = argus_rankinfo_encode(ri, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    return 0;
}
