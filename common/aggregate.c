/* aggregate.c — the window aggregate (aggregate.h): build from step summaries, merge,
 * canonical row order (the encoding is aggregate_wire.c). Merges never depend on order;
 * see the header for why. */
#include "common/aggregate.h"
#include "common/aggregate_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common/aggrow.h"
#include "common/grow.h"
#include "common/wire.h"

#define HUGE_BYTES ((size_t)2 << 20)

void argus_agg_init(struct argus_aggregate *a)
{
    memset(a, 0, sizeof *a);
}

/* No padding: row_cmp's tie-break (memcmp) sees fields only. */
_Static_assert(sizeof(struct argus_agg_row) == 56 &&
               offsetof(struct argus_agg_row, start_ns) == 16 &&
               offsetof(struct argus_agg_row, us) == 24, "row layout");
_Static_assert(ARGUS_AGG_ROW_BYTES == ARGUS_AGGROW_MAX, "row bound");

void argus_agg_free(struct argus_aggregate *a)
{
    free(a->rows);
    free(a->run);
    free(a->spare);
    free(a->km);
    memset(a, 0, sizeof *a);
}

void argus_agg_reset(struct argus_aggregate *a)
{
    a->nrows = 0;
    a->nruns = 0;
    a->nkm = 0;
}

/* argus_grow() for the row arrays, which reach megabytes at rank 0: past 2 MiB they are
 * 2 MiB-aligned and advised for transparent huge pages, so that filling them costs one
 * page fault per 2 MiB instead of 512 where the kernel allows it. keep: rows carried over. */
int argus_agg_grow_rows(struct argus_agg_row **p, size_t *cap, size_t need, size_t keep)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c * sizeof **p < HUGE_BYTES)
        return argus_grow(p, cap, need, sizeof **p, 16);
    size_t bytes = (c * sizeof **p + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
    void *n = NULL;
    if (posix_memalign(&n, HUGE_BYTES, bytes) != 0)
        return -ENOMEM;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(n, bytes, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    if (keep)
        memcpy(n, *p, keep * sizeof **p);
    free(*p);
    *p = n;
    *cap = bytes / sizeof **p;
    return 0;
}

/* Room for `need` runs: the ends are kept, the merge scratch behind them is not (each
 * element of a->run's growth is the three size_t of one run). */
int argus_agg_grow_runs(struct argus_aggregate *a, size_t need)
{
    return argus_grow(&a->run, &a->caprun, need, 3 * sizeof *a->run, 8);
}

static inline int row_cmp(const struct argus_agg_row *x, const struct argus_agg_row *y)
{
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return memcmp(x, y, sizeof *x);
}

static int km_cmp(const struct argus_agg_kmode *x, uint64_t h, uint8_t mode, uint16_t group)
{
    if (x->name_hash != h)
        return x->name_hash < h ? -1 : 1;
    if (x->mode != mode)
        return x->mode < mode ? -1 : 1;
    if (x->group != group)
        return x->group < group ? -1 : 1;
    return 0;
}

/* Total orders for the extremes: top = value desc; bot = value asc; ties by rank, step. */
static int ext_before(const struct argus_agg_ext *x, const struct argus_agg_ext *y, int top)
{
    if (x->value != y->value)
        return top ? x->value > y->value : x->value < y->value;
    if (x->rank != y->rank)
        return x->rank < y->rank;
    return x->step < y->step;
}

/* Merge two sorted extreme lists into out (k best of the union). */
static uint8_t ext_merge(const struct argus_agg_ext *a, uint8_t na, const struct argus_agg_ext *b,
                         uint8_t nb, struct argus_agg_ext *out, int top)
{
    struct argus_agg_ext tmp[2 * ARGUS_AGG_TOPK];
    uint8_t i = 0, j = 0, n = 0;

    if (nb == 0 || (na == ARGUS_AGG_TOPK && !ext_before(&b[0], &a[na - 1], top))) {
        if (out != a) /* a full list that b cannot enter: a stays as it is */
            memcpy(out, a, na * sizeof *out);
        return na;
    }

    while (n < ARGUS_AGG_TOPK && (i < na || j < nb)) {
        if (j >= nb || (i < na && ext_before(&a[i], &b[j], top)))
            tmp[n++] = a[i++];
        else
            tmp[n++] = b[j++];
    }
    memcpy(out, tmp, n * sizeof *out);
    return n;
}

static void km_combine(struct argus_agg_kmode *d, const struct argus_agg_kmode *s)
{
    d->count += s->count;
    d->sum_ns += s->sum_ns;
    if (s->min_ns < d->min_ns)
        d->min_ns = s->min_ns;
    if (s->max_ns > d->max_ns)
        d->max_ns = s->max_ns;
    if (s->kclass < d->kclass) /* deterministic if a hash ever collides across classes */
        d->kclass = s->kclass;
    argus_qsketch_merge(&d->sketch, &s->sketch);
    d->ntop = ext_merge(d->top, d->ntop, s->top, s->ntop, d->top, 1);
    d->nbot = ext_merge(d->bot, d->nbot, s->bot, s->nbot, d->bot, 0);
}

static size_t km_find(const struct argus_aggregate *a, uint64_t h, uint8_t mode,
                      uint16_t group, int *found)
{
    size_t lo = 0, hi = a->nkm;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = km_cmp(&a->km[mid], h, mode, group);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static int km_add(struct argus_aggregate *a, const struct argus_agg_kmode *k)
{
    int found;
    size_t at = km_find(a, k->name_hash, k->mode, k->group, &found);
    if (found) {
        km_combine(&a->km[at], k);
        return 0;
    }
    if (argus_grow(&a->km, &a->capkm, a->nkm + 1, sizeof *a->km, 16))
        return -ENOMEM;
    memmove(&a->km[at + 1], &a->km[at], (a->nkm - at) * sizeof *a->km);
    a->km[at] = *k;
    a->nkm++;
    return 0;
}

static int row_add(struct argus_aggregate *a, const struct argus_agg_row *r)
{
    if (argus_agg_grow_rows(&a->rows, &a->caprows, a->nrows + 1, a->nrows))
        return -ENOMEM;
    if (argus_agg_grow_runs(a, 1))
        return -ENOMEM;
    /* insertion into the last run (summaries mostly come in order: an append) */
    size_t at = a->nrows, first = a->nruns > 1 ? a->run[a->nruns - 2] : 0;
    while (at > first && row_cmp(&a->rows[at - 1], r) > 0)
        at--;
    memmove(&a->rows[at + 1], &a->rows[at], (a->nrows - at) * sizeof *a->rows);
    a->rows[at] = *r;
    a->nrows++;
    if (a->nruns == 0)
        a->nruns = 1;
    a->run[a->nruns - 1] = a->nrows;
    return 0;
}

static uint32_t us(uint64_t ns)
{
    uint64_t u = ns / 1000;
    return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

int argus_agg_add_summary(struct argus_aggregate *a, const struct argus_step_summary *s)
{
    struct argus_agg_row r;

    memset(&r, 0, sizeof r);
    r.step = s->step;
    r.rank = s->rank;
    r.flags = s->flags;
    r.start_ns = (uint64_t)((int64_t)s->start_ns + s->clock_offset_ns); /* rank 0's clock */
    r.us[0] = us(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0);
    r.us[1] = us(s->phase_wall_ns[ARGUS_PH_FORWARD]);
    r.us[2] = us(s->phase_wall_ns[ARGUS_PH_BACKWARD]);
    r.us[3] = us(s->phase_wall_ns[ARGUS_PH_OPTIMIZER]);
    r.us[4] = us(s->phase_wall_ns[ARGUS_PH_COMM]);
    r.us[5] = us(s->host_gap_ns);
    r.us[6] = us(s->compute_ns);
    r.us[7] = us(s->collective_ns + s->p2p_ns);
    if (row_add(a, &r))
        return -ENOMEM;
    for (uint32_t i = 0; i < s->n_kmodes && i < ARGUS_MAX_KMODES; i++) {
        const struct argus_kmode_stats *m = &s->kmodes[i];
        struct argus_agg_kmode k;
        memset(&k, 0, sizeof k);
        k.name_hash = m->name_hash;
        k.mode = m->mode;
        k.kclass = m->kclass;
        k.group = s->coords.pp;
        k.count = m->count;
        k.sum_ns = m->sum_ns;
        k.min_ns = m->min_ns;
        k.max_ns = m->max_ns;
        k.sketch = m->sketch;
        struct argus_agg_ext e = {m->count ? m->sum_ns / m->count : 0, s->rank,
                                  (uint32_t)s->step};
        k.top[0] = e;
        k.bot[0] = e;
        k.ntop = k.nbot = 1;
        if (km_add(a, &k))
            return -ENOMEM;
    }
    return 0;
}

int argus_agg_merge(struct argus_aggregate *dst, const struct argus_aggregate *src)
{
    /* rows: append src's runs (ordered later, once: argus_agg_sort_rows / encode) */
    if (argus_agg_grow_rows(&dst->rows, &dst->caprows, dst->nrows + src->nrows, dst->nrows) ||
        argus_agg_grow_runs(dst, dst->nruns + src->nruns) ||
        argus_grow(&dst->km, &dst->capkm, dst->nkm + src->nkm, sizeof *dst->km, 16))
        return -ENOMEM;
    if (src->nrows)
        memcpy(&dst->rows[dst->nrows], src->rows, src->nrows * sizeof *src->rows);
    for (size_t r = 0, from = 0; r < src->nruns; from = src->run[r++]) {
        size_t at = dst->nrows + from;
        if (at == dst->nrows + src->run[r])
            continue;
        if (dst->nruns && row_cmp(&dst->rows[at - 1], &dst->rows[at]) <= 0)
            dst->run[dst->nruns - 1] = dst->nrows + src->run[r]; /* extends the last run */
        else
            dst->run[dst->nruns++] = dst->nrows + src->run[r];
    }
    dst->nrows += src->nrows;
    /* kmodes: the same keys on both sides (peers run the same kernels): combine in place */
    size_t i, j, k;
    int same = dst->nkm == src->nkm;
    for (i = 0; same && i < src->nkm; i++) {
        const struct argus_agg_kmode *s = &src->km[i];
        same = km_cmp(&dst->km[i], s->name_hash, s->mode, s->group) == 0;
    }
    if (same) {
        for (i = 0; i < src->nkm; i++)
            km_combine(&dst->km[i], &src->km[i]);
        return 0;
    }
    /* else a sorted union, combining equal keys */
    i = dst->nkm;
    j = src->nkm;
    k = dst->nkm + src->nkm;
    while (j > 0) {
        const struct argus_agg_kmode *s = &src->km[j - 1];
        int c = i > 0 ? km_cmp(&dst->km[i - 1], s->name_hash, s->mode, s->group) : -1;
        if (c > 0) {
            dst->km[--k] = dst->km[--i];
        } else if (c == 0) {
            struct argus_agg_kmode t = dst->km[--i];
            km_combine(&t, s);
            dst->km[--k] = t;
            j--;
        } else {
            dst->km[--k] = *s;
            j--;
        }
    }
    while (i > 0)
        dst->km[--k] = dst->km[--i];
    /* k entries were left unused at the front when keys combined: close the gap */
    size_t used = dst->nkm + src->nkm - k;
    memmove(&dst->km[0], &dst->km[k], used * sizeof *dst->km);
    dst->nkm = used;
    return 0;
}

/* ---- ordering the rows --------------------------------------------------------------- */

static void heap_sift(const struct argus_agg_row *rows, size_t *heap, const size_t *cur,
                      size_t n, size_t i)
{
    size_t x = heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && row_cmp(&rows[cur[heap[c + 1]]], &rows[cur[heap[c]]]) < 0)
            c++;
        if (row_cmp(&rows[cur[heap[c]]], &rows[cur[x]]) >= 0)
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = x;
}

/* First index in [lo, hi) whose row sorts after h (hi when none); rows[lo..hi) sorted.
 * Galloping from lo: cheap when the answer is near, logarithmic when it is far. */
static size_t gallop(const struct argus_agg_row *rows, size_t lo, size_t hi,
                     const struct argus_agg_row *h)
{
    size_t d = 1;
    while (d <= hi - lo && row_cmp(&rows[lo + d - 1], h) <= 0) {
        lo += d;
        d *= 2;
    }
    if (d <= hi - lo)
        hi = lo + d - 1; /* rows[hi] sorts after h */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (row_cmp(&rows[mid], h) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* a's rows in canonical order, block by block, to emit: the k-way merge of a's runs on a
 * heap of run heads; each step emits the smallest run's whole block of rows that sort no
 * later than the next head. Uses a->run's scratch (cursors, heap); reads the rows only. */
void argus_agg_rows_kmerge(const struct argus_aggregate *a, argus_agg_emit_fn *emit,
                           void *ctx)
{
    const struct argus_agg_row *rows = a->rows;
    const size_t *end = a->run;
    if (a->nruns <= 1) {
        if (a->nrows)
            emit(ctx, rows, a->nrows);
        return;
    }
    size_t *cur = a->run + a->caprun, *heap = cur + a->caprun, n = 0;

    for (size_t i = 0; i < a->nruns; i++) {
        cur[i] = i ? end[i - 1] : 0;
        if (cur[i] < end[i])
            heap[n++] = i;
    }
    for (size_t i = n / 2; i-- > 0;)
        heap_sift(rows, heap, cur, n, i);
    while (n > 0) {
        size_t m = heap[0], from = cur[m], to = end[m];
        if (n > 1) {
            size_t s = heap[1];
            if (n > 2 && row_cmp(&rows[cur[heap[2]]], &rows[cur[s]]) < 0)
                s = heap[2];
            to = gallop(rows, from + 1, to, &rows[cur[s]]);
        }
        emit(ctx, &rows[from], to - from);
        cur[m] = to;
        if (to == end[m])
            heap[0] = heap[--n];
        heap_sift(rows, heap, cur, n, 0);
    }
}

int argus_agg_reserve(struct argus_aggregate *a, size_t nrows, size_t nruns)
{
    if (argus_agg_grow_rows(&a->rows, &a->caprows, nrows, a->nrows) ||
        argus_agg_grow_runs(a, nruns))
        return -ENOMEM;
    return 0;
}

static void emit_copy(void *ctx, const struct argus_agg_row *r, size_t n)
{
    struct argus_agg_row **out = ctx;
    memcpy(*out, r, n * sizeof *r);
    *out += n;
}

int argus_agg_sort_rows(struct argus_aggregate *a)
{
    if (a->nruns <= 1)
        return 0;
    if (argus_agg_grow_rows(&a->spare, &a->capspare, a->nrows, 0))
        return -ENOMEM;
    struct argus_agg_row *out = a->spare;
    argus_agg_rows_kmerge(a, emit_copy, &out);
    struct argus_agg_row *t = a->rows;
    size_t c = a->caprows;
    a->rows = a->spare;
    a->caprows = a->capspare;
    a->spare = t;
    a->capspare = c;
    a->nruns = 1;
    a->run[0] = a->nrows;
    return 0;
}
