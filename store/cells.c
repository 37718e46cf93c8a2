/* cells.c — the job store's core (store/jobstore.h): per rank its held cells (a
 * trimmed summary, its step id and its row) in ascending step order, the set of distinct
 * held steps with each one's figures over its ranks (argus_jobstore_step_figs: folded in
 * as cells are put, a replaced maximum folded again on read), and the lookups over them.
 * Calls store/arena.c only; must know nothing of retention (store/retain.c evicts on top
 * of it), rank info and names, nor wire records (store/ingest.c).
 *
 * Summaries are stored trimmed: only offsetof(kmodes) + n_kmodes entries are allocated, so
 * readers must never touch kmodes[i] for i >= n_kmodes. Their blocks come from the arena
 * (store/arena.h); so do each rank's first SUMS_CAP0 cell slots. One owner; not
 * thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SUMS_CAP0 16 /* first per-rank capacity, carved from the arena; then aligned, x2 */

int jobstore_cells_init(struct argus_jobstore *js, uint32_t n_ranks)
{
    js->n_ranks = n_ranks;
    js->ranks = calloc(n_ranks, sizeof *js->ranks);
    return js->ranks ? 0 : -ENOMEM;
}

void jobstore_cells_fini(struct argus_jobstore *js)
{
    for (uint32_t r = 0; js->ranks && r < js->n_ranks; r++)
        if (js->ranks[r].cap > SUMS_CAP0)
            free(js->ranks[r].sums);
    free(js->ranks);
    free(js->st);
    free(js->figs);
    free(js->scratch);
    js->ranks = NULL;
    js->st = NULL;
    js->figs = NULL;
    js->scratch = NULL;
}

struct argus_step_summary *jobstore_scratch_summary(struct argus_jobstore *js)
{
    if (!js->scratch)
        js->scratch = malloc(sizeof *js->scratch);
    return js->scratch;
}

/* The bytes a trimmed summary holds, and the block it takes. */
static size_t summary_bytes(const struct argus_step_summary *s)
{
    return offsetof(struct argus_step_summary, kmodes) +
           (size_t)s->n_kmodes * sizeof s->kmodes[0];
}

static size_t summary_size(const struct argus_step_summary *s)
{
    return JOBSTORE_BLOCK_SIZE(s->n_kmodes);
}

void jobstore_row_of(const struct argus_step_summary *s, struct argus_jobstore_row *w)
{
    w->wall_ns = s->end_ns > s->start_ns ? (double)(s->end_ns - s->start_ns) : 0.0;
    w->compute_ns = (double)s->compute_ns;
    w->host_ns = (double)(s->host_gap_ns ? s->host_gap_ns : s->phase_wall_ns[ARGUS_PH_HOST]);
    w->start_ns = (double)s->start_ns + (double)s->clock_offset_ns;
    w->comm_ns = (double)(s->collective_ns + s->p2p_ns);
    w->kernel_count = s->kernel_count;
    w->dropped = s->dropped;
    w->n_kmodes = s->n_kmodes;
    w->coords_known = s->coords.tp_size && s->coords.pp_size && s->coords.dp_size;
    w->thin = (s->flags & ARGUS_SF_THIN) != 0;
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

int jobstore_step_hold(struct argus_jobstore *js, uint64_t step, size_t *at_out)
{
    if (js->st_n && js->st[js->st_head + js->st_n - 1] == step) {
        *at_out = js->st_head + js->st_n - 1; /* the newest step: most adds, no search */
        return 0;
    }
    size_t at = step_lower(js, step);
    if (at < js->st_n && js->st[js->st_head + at] == step) {
        *at_out = js->st_head + at;
        return 0;
    }
    if (js->st_head + js->st_n == js->st_cap) {
        if (js->st_head > 0) {
            memmove(js->st, js->st + js->st_head, js->st_n * sizeof *js->st);
            memmove(js->figs, js->figs + js->st_head, js->st_n * sizeof *js->figs);
            js->st_head = 0;
        } else if (argus_grow(&js->st, &js->st_cap, js->st_n + 1, sizeof *js->st, 64) != 0) {
            return -ENOMEM;
        }
    }
    if (js->figs_cap < js->st_cap &&
        argus_grow(&js->figs, &js->figs_cap, js->st_cap, sizeof *js->figs, 64) != 0)
        return -ENOMEM;
    uint64_t *v = js->st + js->st_head;
    struct argus_jobstore_stepfig *fv = js->figs + js->st_head;
    memmove(&v[at + 1], &v[at], (js->st_n - at) * sizeof *v);
    memmove(&fv[at + 1], &fv[at], (js->st_n - at) * sizeof *fv);
    v[at] = step;
    fv[at] = (struct argus_jobstore_stepfig){0};
    js->st_n++;
    *at_out = js->st_head + at;
    return 0;
}

static size_t lower_bound(const struct rank_slot *rs, uint64_t step);

/* ---- per-step figures (argus_jobstore_step_figs) ------------------------------------ */

/* A row's own work: its wall less its collective and p2p time when that is less than
 * the wall, else the wall (what the forecast counts as the rank's work). */
static double row_work(const struct argus_jobstore_row *w)
{
    return w->comm_ns > 0 && w->comm_ns < w->wall_ns ? w->wall_ns - w->comm_ns : w->wall_ns;
}

#define FIG_DIRTY UINT32_MAX

void jobstore_fig_add(struct argus_jobstore *js, size_t at, uint32_t rank,
                      const struct argus_jobstore_row *w)
{
    struct argus_jobstore_stepfig *g = &js->figs[at];
    const double wk = row_work(w);

    g->work_sum_ns += wk;
    if (g->n++ == 0) {
        g->wall_max_ns = w->wall_ns;
        g->work_max_ns = wk;
        g->work_arg = rank;
        return;
    }
    if (g->work_arg == FIG_DIRTY)
        return;
    if (w->wall_ns > g->wall_max_ns)
        g->wall_max_ns = w->wall_ns;
    if (wk > g->work_max_ns || (wk == g->work_max_ns && rank < g->work_arg)) {
        g->work_max_ns = wk;
        g->work_arg = rank;
    }
}

/* The cell of rank at held step index at replaced: row o by row w. The sum moves by the
 * difference (exact: integers below 2^53); a maximum that the old row held and the new
 * one no longer reaches can only be found again from the cells: marked. */
static void fig_replace(struct argus_jobstore *js, size_t at, uint32_t rank,
                        const struct argus_jobstore_row *o, const struct argus_jobstore_row *w)
{
    struct argus_jobstore_stepfig *g = &js->figs[at];
    const double wo = row_work(o), wk = row_work(w);

    g->work_sum_ns += wk - wo;
    if (g->work_arg == FIG_DIRTY)
        return;
    int dirty = w->wall_ns < o->wall_ns && o->wall_ns == g->wall_max_ns;
    if (w->wall_ns > g->wall_max_ns)
        g->wall_max_ns = w->wall_ns;
    if (rank == g->work_arg)
        dirty |= wk < wo;
    if (wk > g->work_max_ns || (wk == g->work_max_ns && rank <= g->work_arg)) {
        g->work_max_ns = wk;
        g->work_arg = rank;
    }
    if (dirty) {
        g->work_arg = FIG_DIRTY;
        js->figs_dirty++;
    }
}

/* Fold held step index at's figures again from every rank's cell of it: O(P log n). */
static void fig_refold(struct argus_jobstore *js, size_t at)
{
    const uint64_t step = js->st[at];
    js->figs[at] = (struct argus_jobstore_stepfig){0};
    for (uint32_t r = 0; r < js->n_ranks; r++) {
        const struct rank_slot *rs = &js->ranks[r];
        const size_t k = lower_bound(rs, step);
        if (k < rs->n && rs->ids[rs->head + k] == step)
            jobstore_fig_add(js, at, r, &rs->rows[rs->head + k]);
    }
}

/* ---- per-rank arrays --------------------------------------------------------------- */

/* Index (relative to head) of the first cell of rs with step >= step (n when none). */
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

/* Move the live part to the front, or grow. Capacities are multiples of 8, so that rows
 * (after sums and ids) are as aligned as their block: 64 bytes once grown. Not argus_grow:
 * the three arrays share one aligned block, and a rank's first one is carved from the
 * arena. */
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
    if (ncap == SUMS_CAP0) /* a rank's first steps: no page of its own */
        blk = jobstore_arena_carve(&js->arena, SUMS_CAP0 * each);
    else if (posix_memalign(&blk, JOBSTORE_UNIT, ncap * each) != 0)
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

/* ---- cells ------------------------------------------------------------------------- */

/* The stored copy's kernel modes in name-hash order, the modes of one name in their order
 * (stable): the analysis then finds a kernel by binary search (analysis/names.c) instead
 * of scanning every mode. Through the scratch summary (s is copied already); left as it
 * came when that cannot be had. */
static void sort_kmodes(struct argus_jobstore *js, struct argus_step_summary *c)
{
    const uint32_t n = c->n_kmodes;
    uint32_t i = 1;
    while (i < n && c->kmodes[i - 1].name_hash <= c->kmodes[i].name_hash)
        i++;
    if (i >= n || !jobstore_scratch_summary(js))
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

int jobstore_cell_put(struct argus_jobstore *js, const struct argus_step_summary *s)
{
    struct rank_slot *rs = &js->ranks[s->rank];
    const size_t at = lower_bound(rs, s->step), size = summary_size(s);
    if (at < rs->n && rs->ids[rs->head + at] == s->step) {
        struct argus_step_summary *old = rs->sums[rs->head + at], *c = old;
        if (summary_size(old) != size) {
            if (!(c = jobstore_arena_block(&js->arena, size)))
                return -ENOMEM;
            jobstore_arena_put(&js->arena, old, summary_size(old));
        }
        memmove(c, s, summary_bytes(s));
        sort_kmodes(js, c);
        rs->sums[rs->head + at] = c;
        const struct argus_jobstore_row o = rs->rows[rs->head + at];
        jobstore_row_of(c, &rs->rows[rs->head + at]);
        fig_replace(js, js->st_head + step_lower(js, s->step), s->rank, &o,
                    &rs->rows[rs->head + at]);
        return 0;
    }
    int rc = jobstore_slot_room(js, rs);
    if (rc)
        return rc;
    struct argus_step_summary *c = jobstore_arena_block(&js->arena, size);
    size_t fat;
    if (!c || jobstore_step_hold(js, s->step, &fat) != 0) {
        if (c)
            jobstore_arena_put(&js->arena, c, size);
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
    jobstore_fig_add(js, fat, s->rank, &wv[at]);
    rs->n++;
    js->total++;
    return 1;
}

/* ---- lookups ----------------------------------------------------------------------- */

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

size_t argus_jobstore_step_figs(const struct argus_jobstore *cjs,
                                const struct argus_jobstore_stepfig **figs)
{
    struct argus_jobstore *js = (struct argus_jobstore *)cjs; /* see store/jobstore.h */

    for (size_t i = 0; js->figs_dirty && i < js->st_n; i++)
        if (js->figs[js->st_head + i].work_arg == FIG_DIRTY) {
            fig_refold(js, js->st_head + i);
            js->figs_dirty--;
        }
    js->figs_dirty = 0;
    *figs = js->st_n ? js->figs + js->st_head : NULL;
    return js->st_n;
}

size_t argus_jobstore_count(const struct argus_jobstore *js)
{
    return js ? js->total : 0;
}
