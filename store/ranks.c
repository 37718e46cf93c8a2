/* ranks.c — what the job store knows of a rank besides its steps (store/jobstore.h):
 * its rank info and its missing mark. Writes the info and missing_p1 of js->ranks only
 * (store/retain.c reads the mark when it evicts) and calls no other file of store/; must
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
    return 0;
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
