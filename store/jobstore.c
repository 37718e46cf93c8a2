/* store/jobstore.c — the in-memory store of one job (store/jobstore.h): per-rank arrays of trimmed
 * step summaries kept sorted by step, the set of distinct held steps, retention (eviction
 * of the oldest steps past the horizon) and what eviction leaves behind, job metadata.
 * Names, rank info, missing marks and ingest are in store/ingest.c; rows and the batch
 * add of thin cells in store/rows.c.
 *
 * Summaries are stored trimmed: only offsetof(kmodes) + n_kmodes entries are allocated, so
 * readers must never touch kmodes[i] for i >= n_kmodes. They are carved from an arena of
 * chunks that grow from 64 KiB to 2 MiB (2 MiB chunks aligned and advised for transparent
 * huge pages): rank 0 adds P summaries per step, and one malloc and a few page faults per
 * summary were most of its cost; each rank's first SUMS_CAP0 step slots come from there
 * too. The block of a replaced or evicted summary goes to a free list of its size (in
 * 64-byte units) and is the first choice for the next summary of that size: at a steady
 * horizon the store writes into memory it already has instead of faulting in (and
 * zeroing) fresh pages every window. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (2u << 20)
#define SUMS_CAP0 16 /* first per-rank capacity, carved from the arena; then malloc, x2 */
#define UNIT 64      /* summary blocks are multiples of this */
#define N_SIZES ((offsetof(struct argus_step_summary, kmodes) + \
                  ARGUS_MAX_KMODES * sizeof(struct argus_kmode_stats)) / UNIT + 2)

static size_t horizon_of(size_t max_cells, uint32_t min_steps, uint32_t n_ranks)
{
    if (max_cells == 0)
        return SIZE_MAX;
    size_t h = max_cells / n_ranks;
    return h > min_steps ? h : (min_steps ? min_steps : 1);
}

int argus_jobstore_create(uint32_t n_ranks, struct argus_jobstore **out)
{
    struct argus_jobstore *js;

    if (!out || n_ranks == 0)
        return -EINVAL;
    *out = NULL;
    js = calloc(1, sizeof *js);
    if (!js)
        return -ENOMEM;
    js->n_ranks = n_ranks;
    /* jobs of 512 ranks and more store >= 1 MiB per window: huge chunks from the start;
     * small jobs stay small */
    js->next_chunk = n_ranks >= 512 ? CHUNK_MAX : CHUNK_MIN;
    js->ranks = calloc(n_ranks, sizeof *js->ranks);
    if (!js->ranks) {
        free(js);
        return -ENOMEM;
    }
    js->max_cells = ARGUS_JOBSTORE_MAX_CELLS;
    js->min_steps = ARGUS_JOBSTORE_MIN_STEPS;
    js->horizon = horizon_of(js->max_cells, js->min_steps, n_ranks);
    js->evicted_first = UINT64_MAX;
    js->pin_from = UINT64_MAX;
    snprintf(js->meta.step, sizeof js->meta.step, "0");
    *out = js;
    return 0;
}

void argus_jobstore_free(struct argus_jobstore *js)
{
    if (!js)
        return;
    for (uint32_t r = 0; r < js->n_ranks; r++) {
        if (js->ranks[r].cap > SUMS_CAP0)
            free(js->ranks[r].sums);
        free(js->ranks[r].info);
        free(js->ranks[r].gone);
    }
    while (js->arena) {
        struct chunk *n = js->arena->next;
        free(js->arena);
        js->arena = n;
    }
    free(js->ranks);
    argus_jobstore_dict_free(js);
    for (size_t i = 0; js->free_by_size && i < N_SIZES; i++)
        free(js->free_by_size[i].v);
    free(js->free_by_size);
    free(js->st);
    free(js->gone);
    free(js->work);
    free(js);
}

uint32_t argus_jobstore_nranks(const struct argus_jobstore *js)
{
    return js ? js->n_ranks : 0;
}

struct argus_job_meta *argus_jobstore_meta(struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

const struct argus_job_meta *argus_jobstore_meta_c(const struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

/* ---- summary memory ---------------------------------------------------------------- */

/* The bytes a trimmed summary holds, and the arena space it takes. */
static size_t summary_bytes(const struct argus_step_summary *s)
{
    return offsetof(struct argus_step_summary, kmodes) +
           (size_t)s->n_kmodes * sizeof s->kmodes[0];
}

size_t jobstore_summary_size_n(uint32_t n_kmodes)
{
    return (offsetof(struct argus_step_summary, kmodes) +
            (size_t)n_kmodes * sizeof(struct argus_kmode_stats) + UNIT - 1) &
           ~(size_t)(UNIT - 1);
}

static size_t summary_size(const struct argus_step_summary *s)
{
    return jobstore_summary_size_n(s->n_kmodes);
}

/* n bytes (a multiple of 64) from the arena; NULL when out of memory. */
static void *arena_carve(struct argus_jobstore *js, size_t n)
{
    struct chunk *c = js->arena;

    if (!c || c->cap - c->used < n) {
        size_t sz = js->next_chunk ? js->next_chunk : CHUNK_MIN;
        while (sz - sizeof *c < n)
            sz *= 2;
        void *p = NULL;
        if (sz >= CHUNK_MAX) {
            if (posix_memalign(&p, CHUNK_MAX, sz) != 0)
                p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
            if (p)
                madvise(p, sz, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
        } else {
            p = malloc(sz);
        }
        if (!p)
            return NULL;
        c = p;
        c->next = js->arena;
        c->used = 0;
        c->cap = sz - sizeof *c;
        js->arena = c;
        js->next_chunk = sz < CHUNK_MAX ? sz * 2 : sz;
    }
    void *out = c->data + c->used;
    c->used += n;
    return out;
}

/* A summary block of n bytes (a multiple of UNIT): a freed one of that size, else new. */
void *jobstore_block_alloc(struct argus_jobstore *js, size_t n)
{
    struct free_stack *fs = js->free_by_size ? &js->free_by_size[n / UNIT] : NULL;
    if (fs && fs->n)
        return fs->v[--fs->n];
    return arena_carve(js, n);
}

/* Give a block of n bytes back for reuse (kept by the store until it is freed). The free
 * lists are stacks of pointers: a freed block is not written (not even touched) until it
 * is reused. */
void jobstore_block_put(struct argus_jobstore *js, void *b, size_t n)
{
    if (!js->free_by_size && !(js->free_by_size = calloc(N_SIZES, sizeof *js->free_by_size)))
        return; /* out of memory: the block stays unused until the store is freed */
    struct free_stack *fs = &js->free_by_size[n / UNIT];
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 256;
        void **v = realloc(fs->v, cap * sizeof *v);
        if (!v)
            return; /* the same */
        fs->v = v;
        fs->cap = cap;
    }
    fs->v[fs->n++] = b;
}

static void block_free(struct argus_jobstore *js, struct argus_step_summary *s)
{
    jobstore_block_put(js, s, summary_size(s));
}

/* ---- distinct steps ---------------------------------------------------------------- */

/* Index (relative to st_head) of the first held step >= step. */
static size_t step_lower(const struct argus_jobstore *js, uint64_t step)
{
    size_t lo = 0, hi = js->st_n;
    if (hi == 0)
        return 0;
    const uint64_t *v = js->st + js->st_head;

    if (v[hi - 1] < step)
        return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Add step to the distinct held steps unless it is there. 0 or -ENOMEM. */
int jobstore_step_hold(struct argus_jobstore *js, uint64_t step)
{
    if (js->st_n && js->st[js->st_head + js->st_n - 1] == step)
        return 0; /* the newest step: most adds (P ranks a step), no search */
    size_t at = step_lower(js, step);
    if (at < js->st_n && js->st[js->st_head + at] == step)
        return 0;
    if (js->st_head + js->st_n == js->st_cap) {
        if (js->st_head > 0) {
            memmove(js->st, js->st + js->st_head, js->st_n * sizeof *js->st);
            js->st_head = 0;
        } else {
            size_t cap = js->st_cap ? js->st_cap * 2 : 64;
            uint64_t *v = realloc(js->st, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            js->st = v;
            js->st_cap = cap;
        }
    }
    uint64_t *v = js->st + js->st_head;
    memmove(&v[at + 1], &v[at], (js->st_n - at) * sizeof *v);
    v[at] = step;
    js->st_n++;
    return 0;
}

/* ---- per-rank arrays --------------------------------------------------------------- */

/* Index (relative to head) of the first summary of rs with step >= step (n when none). */
static size_t lower_bound(const struct rank_slot *rs, uint64_t step)
{
    size_t lo = 0, hi = rs->n;
    if (hi == 0)
        return 0;
    const uint64_t *id = rs->ids + rs->head;

    if (id[hi - 1] < step)
        return hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (id[mid] < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Room for one more entry at the end of rs: move the live part to the front, or grow.
 * Capacities are multiples of 8, so that rows (after sums and ids) stay 64-byte aligned.
 * 0 or -ENOMEM. */
int jobstore_slot_room(struct argus_jobstore *js, struct rank_slot *rs)
{
    if (rs->head + rs->n < rs->cap)
        return 0;
    if (rs->head > 0 && rs->n < rs->cap / 2 + 1) {
        memmove(rs->sums, rs->sums + rs->head, rs->n * sizeof *rs->sums);
        memmove(rs->ids, rs->ids + rs->head, rs->n * sizeof *rs->ids);
        memmove(rs->rows, rs->rows + rs->head, rs->n * sizeof *rs->rows);
        rs->head = 0;
        return 0;
    }
    size_t ncap = rs->cap ? (size_t)rs->cap * 2 : SUMS_CAP0;
    const size_t each = sizeof *rs->sums + sizeof *rs->ids + sizeof *rs->rows;
    if (ncap > UINT32_MAX)
        return -ENOMEM;
    void *blk = NULL;
    if (ncap == SUMS_CAP0)
        blk = arena_carve(js, SUMS_CAP0 * each); /* a rank's first steps: no page of its own */
    else if (posix_memalign(&blk, UNIT, ncap * each) != 0)
        blk = NULL;
    if (!blk)
        return -ENOMEM;
    struct argus_step_summary **ns = blk;
    uint64_t *ni = (uint64_t *)(ns + ncap);
    struct argus_jobstore_row *nr = (struct argus_jobstore_row *)(ni + ncap);
    if (rs->n) {
        memcpy(ns, rs->sums + rs->head, rs->n * sizeof *ns);
        memcpy(ni, rs->ids + rs->head, rs->n * sizeof *ni);
        memcpy(nr, rs->rows + rs->head, rs->n * sizeof *nr);
    }
    if (rs->cap > SUMS_CAP0)
        free(rs->sums);
    rs->sums = ns;
    rs->ids = ni;
    rs->rows = nr;
    rs->cap = (uint32_t)ncap;
    rs->head = 0;
    return 0;
}

/* ---- retention (eviction: store/retain.c) ------------------------------------- */

int argus_jobstore_set_retention(struct argus_jobstore *js, size_t max_cells,
                                 uint32_t min_steps)
{
    if (!js)
        return -EINVAL;
    js->max_cells = max_cells;
    js->min_steps = min_steps;
    js->horizon = horizon_of(max_cells, min_steps, js->n_ranks);
    jobstore_enforce_horizon(js);
    return 0;
}

size_t argus_jobstore_horizon(const struct argus_jobstore *js)
{
    return js ? js->horizon : 0;
}

/* ---- summaries --------------------------------------------------------------------- */

/* The stored copy's kernel modes in name-hash order, the modes of one name in their order
 * (stable): the analysis then finds a kernel by binary search (analysis/names.c) instead
 * of scanning every mode. Through the decode scratch (s is copied already); left as it
 * came when that cannot be had. */
static void sort_kmodes(struct argus_jobstore *js, struct argus_step_summary *c)
{
    const uint32_t n = c->n_kmodes;
    uint32_t i = 1;
    while (i < n && c->kmodes[i - 1].name_hash <= c->kmodes[i].name_hash)
        i++;
    if (i >= n || (!js->scratch && !(js->scratch = malloc(sizeof *js->scratch))))
        return;
    uint16_t idx[ARGUS_MAX_KMODES];
    for (i = 0; i < n; i++) {
        uint32_t j = i;
        for (; j > 0 && c->kmodes[idx[j - 1]].name_hash > c->kmodes[i].name_hash; j--)
            idx[j] = idx[j - 1];
        idx[j] = (uint16_t)i;
    }
    for (i = 0; i < n; i++)
        js->scratch->kmodes[i] = c->kmodes[idx[i]];
    memcpy(c->kmodes, js->scratch->kmodes, n * sizeof *c->kmodes);
}

int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s)
{
    if (!js || !s || s->rank >= js->n_ranks || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    if (s->step < js->evicted_below) {
        js->stale++;
        return 0;
    }
    struct rank_slot *rs = &js->ranks[s->rank];
    const size_t at = lower_bound(rs, s->step), size = summary_size(s);
    if (at < rs->n && rs->ids[rs->head + at] == s->step) {
        struct argus_step_summary *old = rs->sums[rs->head + at], *c = old;
        if (summary_size(old) != size) {
            if (!(c = jobstore_block_alloc(js, size)))
                return -ENOMEM;
            block_free(js, old);
        }
        memmove(c, s, summary_bytes(s));
        sort_kmodes(js, c);
        rs->sums[rs->head + at] = c;
        jobstore_row_of(c, &rs->rows[rs->head + at]);
        return 0;
    }
    int rc = jobstore_slot_room(js, rs);
    if (rc)
        return rc;
    struct argus_step_summary *c = jobstore_block_alloc(js, size);
    if (!c || jobstore_step_hold(js, s->step) != 0) {
        if (c)
            jobstore_block_put(js, c, size);
        return -ENOMEM;
    }
    memcpy(c, s, summary_bytes(s));
    sort_kmodes(js, c);
    struct argus_step_summary **sv = rs->sums + rs->head;
    uint64_t *iv = rs->ids + rs->head;
    struct argus_jobstore_row *wv = rs->rows + rs->head;
    if (at < rs->n) {
        memmove(&sv[at + 1], &sv[at], (rs->n - at) * sizeof *sv);
        memmove(&iv[at + 1], &iv[at], (rs->n - at) * sizeof *iv);
        memmove(&wv[at + 1], &wv[at], (rs->n - at) * sizeof *wv);
    }
    sv[at] = c;
    iv[at] = s->step;
    jobstore_row_of(c, &wv[at]);
    rs->n++;
    js->total++;
    jobstore_enforce_horizon(js);
    return 0;
}

const struct argus_step_summary *argus_jobstore_get(const struct argus_jobstore *js,
                                                    uint32_t rank, uint64_t step)
{
    if (!js || rank >= js->n_ranks)
        return NULL;
    const struct rank_slot *rs = &js->ranks[rank];
    size_t at = lower_bound(rs, step);
    return (at < rs->n && rs->ids[rs->head + at] == step) ? rs->sums[rs->head + at] : NULL;
}

size_t argus_jobstore_rank_steps(const struct argus_jobstore *js, uint32_t rank,
                                 const struct argus_step_summary *const **out)
{
    if (!js || rank >= js->n_ranks || js->ranks[rank].n == 0) {
        if (out)
            *out = NULL;
        return 0;
    }
    const struct rank_slot *rs = &js->ranks[rank];
    if (out)
        *out = (const struct argus_step_summary *const *)(rs->sums + rs->head);
    return rs->n;
}

size_t argus_jobstore_rank_step_ids(const struct argus_jobstore *js, uint32_t rank,
                                    const uint64_t **ids)
{
    if (!js || rank >= js->n_ranks || js->ranks[rank].n == 0) {
        if (ids)
            *ids = NULL;
        return 0;
    }
    if (ids)
        *ids = js->ranks[rank].ids + js->ranks[rank].head;
    return js->ranks[rank].n;
}

size_t argus_jobstore_rank_rows(const struct argus_jobstore *js, uint32_t rank,
                                const struct argus_jobstore_row **rows)
{
    if (!js || rank >= js->n_ranks || js->ranks[rank].n == 0) {
        if (rows)
            *rows = NULL;
        return 0;
    }
    if (rows)
        *rows = js->ranks[rank].rows + js->ranks[rank].head;
    return js->ranks[rank].n;
}

size_t argus_jobstore_steps(const struct argus_jobstore *js, const uint64_t **ids)
{
    *ids = js->st_n ? js->st + js->st_head : NULL;
    return js->st_n;
}

int argus_jobstore_step_range(const struct argus_jobstore *js, uint64_t *first,
                              uint64_t *last)
{
    if (!js)
        return -EINVAL;
    if (js->st_n == 0 && js->evicted_first == UINT64_MAX)
        return -ENOENT;
    uint64_t lo = js->evicted_first, hi = js->evicted_below ? js->evicted_below - 1 : 0;
    if (js->st_n) {
        const uint64_t *v = js->st + js->st_head;
        lo = v[0] < lo ? v[0] : lo;
        hi = v[js->st_n - 1] > hi ? v[js->st_n - 1] : hi;
    }
    if (first)
        *first = lo;
    if (last)
        *last = hi;
    return 0;
}

size_t argus_jobstore_count(const struct argus_jobstore *js)
{
    return js ? js->total : 0;
}

size_t argus_jobstore_evicted(const struct argus_jobstore *js,
                              const struct argus_jobstore_gone **out)
{
    if (out)
        *out = js && js->n_gone ? js->gone : NULL;
    return js ? js->n_gone : 0;
}

const struct argus_qsketch *argus_jobstore_rank_gone(const struct argus_jobstore *js,
                                                     uint32_t rank)
{
    return js && rank < js->n_ranks ? js->ranks[rank].gone : NULL;
}

uint64_t argus_jobstore_stale(const struct argus_jobstore *js)
{
    return js ? js->stale : 0;
}

void *argus_jobstore_scratch(const struct argus_jobstore *cjs, size_t bytes)
{
    struct argus_jobstore *js = (struct argus_jobstore *)cjs; /* see store/jobstore.h */

    if (!js)
        return NULL;
    if (bytes <= js->work_cap)
        return js->work;
    size_t cap = (bytes + CHUNK_MAX - 1) & ~(size_t)(CHUNK_MAX - 1);
    void *p = NULL;
    if (cap < bytes || posix_memalign(&p, CHUNK_MAX, cap) != 0)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, cap, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    free(js->work);
    js->work = p;
    js->work_cap = cap;
    return p;
}
