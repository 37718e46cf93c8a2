/* ranks.c — what the job store knows of a rank besides its steps (store/jobstore.h):
 * its rank info and its missing mark, and the job's planned steps its rank info gives
 * (the program's, else the environment's).
 * Writes the info and missing_p1 of js->ranks and the plan fields only (store/retain.c
 * reads the mark when it evicts) and calls no other file of store/; must
 * know nothing of wire records. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"

#include <errno.h>
#include <stdlib.h>

void jobstore_ranks_fini(struct argus_jobstore *js)
{
    for (uint32_t r = 0; js->ranks && r < js->n_ranks; r++) {
        free(js->ranks[r].info);
        js->ranks[r].info = NULL;
    }
}

int argus_jobstore_set_rankinfo(struct argus_jobstore *js, const struct argus_rank_info *ri)
{
    if (!js || !ri || ri->rank >= js->n_ranks)
        return -EINVAL;
    struct rank_slot *rs = &js->ranks[ri->rank];
    if (!rs->info && !(rs->info = malloc(sizeof *rs->info)))
        return -ENOMEM;
    *rs->info = *ri;
    rs->info->host[ARGUS_HOST_MAX - 1] = '\0';
    if (ri->planned_at_ns) { /* the rank was told the plan (argus_set_total_steps) */
        if (js->plan_at && js->plan_steps && ri->planned_steps &&
            ri->planned_steps != js->plan_steps && ri->rank != js->plan_rank) {
            js->plan_other = ri->planned_at_ns >= js->plan_at ? js->plan_steps
                                                               : ri->planned_steps;
            js->plan_other_rank = ri->planned_at_ns >= js->plan_at ? js->plan_rank : ri->rank;
        }
        if (ri->planned_at_ns >= js->plan_at) {
            js->plan_steps = ri->planned_steps;
            js->plan_at = ri->planned_at_ns;
            js->plan_rank = ri->rank;
        }
    }
    if (ri->env_planned_steps && (!js->plan_env || ri->rank <= js->plan_env_rank)) {
        js->plan_env = ri->env_planned_steps; /* ARGUS_TOTAL_STEPS: the lowest rank's */
        js->plan_env_rank = ri->rank;
    }
    return 0;
}

enum argus_plan_from argus_jobstore_plan_from(const struct argus_jobstore *js)
{
    if (!js)
        return ARGUS_PLAN_NONE;
    if (js->plan_steps) /* the program's, whatever came in after it */
        return ARGUS_PLAN_PROGRAM;
    return js->plan_env ? ARGUS_PLAN_ENV : ARGUS_PLAN_NONE;
}

uint64_t argus_jobstore_planned_steps(const struct argus_jobstore *js, uint32_t *rank,
                                      uint64_t *other, uint32_t *other_rank)
{
    const enum argus_plan_from from = argus_jobstore_plan_from(js);

    if (rank)
        *rank = from == ARGUS_PLAN_PROGRAM ? js->plan_rank
                : from == ARGUS_PLAN_ENV   ? js->plan_env_rank
                                           : 0;
    if (other)
        *other = from == ARGUS_PLAN_PROGRAM ? js->plan_other : 0;
    if (other_rank)
        *other_rank = from == ARGUS_PLAN_PROGRAM ? js->plan_other_rank : 0;
    return from == ARGUS_PLAN_PROGRAM ? js->plan_steps
           : from == ARGUS_PLAN_ENV   ? js->plan_env
                                      : 0;
}

const struct argus_rank_info *argus_jobstore_rankinfo(const struct argus_jobstore *js,
                                                      uint32_t rank)
{
    if (!js || rank >= js->n_ranks)
        return NULL;
    return js->ranks[rank].info;
}

void argus_jobstore_mark_missing(struct argus_jobstore *js, uint32_t rank,
                                 uint64_t from_step)
{
    if (!js || rank >= js->n_ranks)
        return;
    if (from_step == UINT64_MAX) /* "never": not a mark */
        return;
    if (from_step < argus_jobstore_missing_since(js, rank))
        js->ranks[rank].missing_p1 = from_step + 1;
}

void argus_jobstore_clear_missing(struct argus_jobstore *js, uint32_t rank)
{
    if (js && rank < js->n_ranks)
        js->ranks[rank].missing_p1 = 0;
}

uint64_t argus_jobstore_missing_since(const struct argus_jobstore *js, uint32_t rank)
{
    if (!js || rank >= js->n_ranks)
        return UINT64_MAX;
    return js->ranks[rank].missing_p1 ? js->ranks[rank].missing_p1 - 1 : UINT64_MAX;
}
