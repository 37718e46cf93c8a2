/* store/retain.c — the job store's retention (store/jobstore.h): eviction of the oldest
 * held step from every rank when the store holds more distinct steps than its horizon,
 * what it leaves behind (each rank's evicted walls, the job's step walls), and the pin
 * that keeps steps no reader has analysed yet. Layout: store/jobstore_int.h. */
#include "store/jobstore_int.h"

#include <errno.h>
#include <stdlib.h>

static int gone_push(struct argus_jobstore *js, uint64_t step, uint64_t wall)
{
    if (js->n_gone == js->cap_gone) {
        size_t cap = js->cap_gone ? js->cap_gone * 2 : 256;
        struct argus_jobstore_gone *v = realloc(js->gone, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        js->gone = v;
        js->cap_gone = cap;
    }
    js->gone[js->n_gone++] = (struct argus_jobstore_gone){ step, wall };
    return 0;
}

/* Every rank's oldest entry is in its own allocations, none of them in cache at P ranks:
 * fetching them EVICT_AHEAD ranks ahead keeps that many misses in flight instead of one at
 * a time. (In the loop itself: GCC deletes a call to a function that only prefetches.) */
#define EVICT_AHEAD 8

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
        jobstore_block_put(js, rs->sums[rs->head],
                           jobstore_summary_size_n(rs->rows[rs->head].n_kmodes));
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

int argus_jobstore_pin(struct argus_jobstore *js, uint64_t from_step, size_t extra_steps)
{
    if (!js)
        return -EINVAL;
    js->pin_from = from_step;
    js->pin_extra = extra_steps;
    jobstore_enforce_horizon(js);
    return 0;
}

