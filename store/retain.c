/* retain.c — the job store's retention (store/jobstore.h), on top of its core
 * (store/cells.c): which adds it admits (a summary of a step already evicted is dropped
 * and counted), eviction of the oldest held step from every rank when the store holds
 * more distinct steps than its horizon, what eviction leaves behind (each rank's evicted
 * walls, the job's step walls and their running sum, the step range), and the pin that
 * keeps steps no reader has analysed yet. Calls store/cells.c and store/arena.c only; must know nothing of wire
 * records. Layout: store/jobstore_int.h. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>

/* Every rank's oldest entry is in its own allocations, none of them in cache at P ranks:
 * fetching them EVICT_AHEAD ranks ahead keeps that many misses in flight instead of one at
 * a time. (In the loop itself: GCC deletes a call to a function that only prefetches.) */
#define EVICT_AHEAD 8

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
}

void jobstore_retain_fini(struct argus_jobstore *js)
{
    for (uint32_t r = 0; js->ranks && r < js->n_ranks; r++) {
        free(js->ranks[r].gone);
        js->ranks[r].gone = NULL;
    }
    free(js->gone);
    js->gone = NULL;
    js->n_gone = js->cap_gone = 0;
    js->gone_wall_sum = 0;
}

static int gone_push(struct argus_jobstore *js, uint64_t step, uint64_t wall)
{
    if (argus_grow(&js->gone, &js->cap_gone, js->n_gone + 1, sizeof *js->gone, 256) != 0)
        return -ENOMEM;
    js->gone[js->n_gone++] = (struct argus_jobstore_gone){ step, wall };
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

uint64_t argus_jobstore_evicted_wall_sum(const struct argus_jobstore *js)
{
    return js ? js->gone_wall_sum : 0;
}

uint64_t argus_jobstore_stale(const struct argus_jobstore *js)
{
    return js ? js->stale : 0;
}
