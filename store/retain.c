/* retain.c — the job store's retention (store/jobstore.h), on top of its core
 * (store/cells.c): which adds it admits (a summary of a step already evicted is dropped
 * and counted), eviction of the oldest held step from every rank when the store holds
 * more distinct steps than its horizon, what eviction leaves behind (each rank's evicted
 * walls, the job's step walls, bounded, and their running sum, the step range), and the pin
 * that keeps steps no reader has analysed yet. Calls store/cells.c and store/arena.c only;
 * must know nothing of wire records. Layout: store/jobstore_int.h. One owner; not
 * thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Every rank's oldest entry is in its own allocations, none of them in cache at P ranks:
 * fetching them EVICT_AHEAD ranks ahead keeps that many misses in flight instead of one at
 * a time. (In the loop itself: GCC deletes a call to a function that only prefetches.) */
#define EVICT_AHEAD 8

/* The evicted-step list (argus_jobstore_evicted) keeps at most ARGUS_JOBSTORE_GONE_MAX
 * entries (store/jobstore.h): 4,096 x 48 B = 192 KiB whatever the job's length. Its newest
 * entries are single steps; when it is full, all but the newest GONE_EXACT of them go into
 * the coarse part before them, whose entries stand for gone_width consecutive evicted steps
 * each (the newest of them may hold fewer), and when the coarse part passes GONE_COARSE
 * entries its adjacent pairs merge and the width doubles. So the whole run keeps its shape
 * at uniform coarser resolution while the newest 2,048 steps (the live forecast's series,
 * pipeline/pipeline.c) stay exact; each fold moves at least GONE_MAX - GONE_COARSE -
 * GONE_EXACT entries, so its cost is O(1) per evicted step. */
#define GONE_EXACT ((size_t)2048)
#define GONE_COARSE ((size_t)1024)
_Static_assert(ARGUS_JOBSTORE_GONE_MAX > GONE_EXACT + GONE_COARSE, "a fold must free entries");

static size_t horizon_of(size_t max_cells, uint32_t min_steps, uint32_t n_ranks)
{
    if (max_cells == 0)
        return SIZE_MAX;
    size_t h = max_cells / n_ranks;
    return h > min_steps ? h : (min_steps ? min_steps : 1);
}

void jobstore_retain_init(struct argus_jobstore *js)
{
    js->max_cells = ARGUS_JOBSTORE_MAX_CELLS;
    js->min_steps = ARGUS_JOBSTORE_MIN_STEPS;
    js->horizon = horizon_of(js->max_cells, js->min_steps, js->n_ranks);
    js->evicted_first = UINT64_MAX;
    js->pin_from = UINT64_MAX;
    js->gone_max = ARGUS_JOBSTORE_GONE_MAX;
    js->gone_width = 1;
}

void jobstore_retain_fini(struct argus_jobstore *js)
{
    for (uint32_t r = 0; js->ranks && r < js->n_ranks; r++) {
        free(js->ranks[r].gone);
        js->ranks[r].gone = NULL;
    }
    free(js->gone);
    js->gone = NULL;
    js->n_gone = js->cap_gone = js->n_coarse = 0;
    js->gone_wall_sum = 0;
}

/* b folded into a, the entry just before it. */
static void gone_merge(struct argus_jobstore_gone *a, const struct argus_jobstore_gone *b)
{
    a->last = b->last;
    a->wall_ns = b->wall_ns > a->wall_ns ? b->wall_ns : a->wall_ns;
    a->wall_sum_ns += b->wall_sum_ns;
    a->n += b->n;
    a->wall_sq_ms2 += b->wall_sq_ms2;
}

/* The list is full: every exact entry but the newest GONE_EXACT into the coarse part (see
 * GONE_EXACT above), the coarse part halved while it is too long, the exact ones moved down
 * after it. O(entries). */
static void gone_fold(struct argus_jobstore *js)
{
    struct argus_jobstore_gone *g = js->gone;
    const size_t exact0 = js->n_coarse, keep = js->n_gone - GONE_EXACT;
    size_t nc = js->n_coarse;

    for (size_t i = exact0; i < keep; i++) {
        if (nc && g[nc - 1].n < js->gone_width)
            gone_merge(&g[nc - 1], &g[i]);
        else
            g[nc++] = g[i]; /* nc <= i: a move down or in place */
        while (nc > GONE_COARSE) { /* pairs merge: every entry (but the newest) 2x wider */
            size_t m = 0;
            for (size_t k = 0; k < nc; k += 2, m++) {
                g[m] = g[k];
                if (k + 1 < nc)
                    gone_merge(&g[m], &g[k + 1]);
            }
            nc = m;
            js->gone_width *= 2;
        }
    }
    memmove(g + nc, g + keep, GONE_EXACT * sizeof *g);
    js->n_coarse = nc;
    js->n_gone = nc + GONE_EXACT;
}

static int gone_push(struct argus_jobstore *js, uint64_t step, uint64_t wall)
{
    if (js->gone_max && js->n_gone == js->gone_max)
        gone_fold(js);
    if (argus_grow(&js->gone, &js->cap_gone, js->n_gone + 1, sizeof *js->gone, 256) != 0)
        return -ENOMEM;
    js->gone[js->n_gone++] = (struct argus_jobstore_gone){
        .step = step, .wall_ns = wall, .last = step, .wall_sum_ns = wall, .n = 1,
        .wall_sq_ms2 = (double)wall / 1e6 * ((double)wall / 1e6)};
    js->gone_wall_sum += wall;
    return 0;
}

/* Drop the oldest held step from every rank, keeping its job step time and each rank's
 * wall in its sketch. */
static void evict_oldest(struct argus_jobstore *js)
{
    const uint64_t step = js->st[js->st_head];
    uint64_t wmax = 0;
    int any = 0;

    for (uint32_t r = 0; r < js->n_ranks; r++) {
        struct rank_slot *rs = &js->ranks[r];
        if (r + EVICT_AHEAD < js->n_ranks && js->ranks[r + EVICT_AHEAD].n) {
            const struct rank_slot *ahead = &js->ranks[r + EVICT_AHEAD];
            __builtin_prefetch(ahead->ids + ahead->head);
            __builtin_prefetch(ahead->sums + ahead->head);
            __builtin_prefetch(ahead->rows + ahead->head);
            if (ahead->gone)
                __builtin_prefetch(ahead->gone);
        }
        if (rs->n == 0 || rs->ids[rs->head] != step)
            continue;
        const uint64_t wall = (uint64_t)rs->rows[rs->head].wall_ns; /* exact: < 2^53 */
        if (!rs->missing_p1 || step < rs->missing_p1 - 1) {
            any = 1;
            wmax = wall > wmax ? wall : wmax;
            if (!rs->gone && (rs->gone = malloc(sizeof *rs->gone)) != NULL)
                argus_qsketch_init(rs->gone);
            if (rs->gone)
                argus_qsketch_add(rs->gone, wall);
        }
        jobstore_arena_put(&js->arena, rs->sums[rs->head],
                           JOBSTORE_BLOCK_SIZE(rs->rows[rs->head].n_kmodes));
        rs->head++;
        rs->n--;
        js->total--;
    }
    if (any)
        (void)gone_push(js, step, wmax); /* out of memory: the step is left out of them */
    if (js->evicted_first == UINT64_MAX)
        js->evicted_first = step;
    js->evicted_below = step + 1;
    js->st_head++;
    js->st_n--;
}

/* Past the horizon the oldest step goes, unless it is pinned (argus_jobstore_pin) and the
 * store is still within the pin's extra steps. */
void jobstore_enforce_horizon(struct argus_jobstore *js)
{
    while (js->st_n > js->horizon &&
           (js->st[js->st_head] < js->pin_from || js->st_n - js->horizon > js->pin_extra))
        evict_oldest(js);
}

int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s)
{
    if (!js || !s || s->rank >= js->n_ranks || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    if (s->step < js->evicted_below) {
        js->stale++;
        return 0;
    }
    int rc = jobstore_cell_put(js, s);
    if (rc <= 0)
        return rc;
    jobstore_enforce_horizon(js);
    return 0;
}

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

int argus_jobstore_pin(struct argus_jobstore *js, uint64_t from_step, size_t extra_steps)
{
    if (!js)
        return -EINVAL;
    js->pin_from = from_step;
    js->pin_extra = extra_steps;
    jobstore_enforce_horizon(js);
    return 0;
}

size_t argus_jobstore_horizon(const struct argus_jobstore *js)
{
    return js ? js->horizon : 0;
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

int argus_jobstore_set_evicted_max(struct argus_jobstore *js, size_t entries)
{
    if (!js || (entries && (entries <= GONE_EXACT + GONE_COARSE || js->n_gone > entries)))
        return -EINVAL;
    js->gone_max = entries;
    return 0;
}

size_t argus_jobstore_evicted_bytes(const struct argus_jobstore *js)
{
    return js ? js->cap_gone * sizeof *js->gone : 0;
}

uint64_t argus_jobstore_evicted_wall_sum(const struct argus_jobstore *js)
{
    return js ? js->gone_wall_sum : 0;
}

uint64_t argus_jobstore_stale(const struct argus_jobstore *js)
{
    return js ? js->stale : 0;
}
