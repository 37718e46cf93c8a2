/* commgroups.h — this rank's communicator memberships (struct argus_comm_group), as the
 * interposers saw the program create them: reduce/pmpi.c for MPI communicators,
 * tracer/ncclhook.c for NCCL communicators. runtime.c copies them into the rank-info
 * record, again whenever the set changed, so rank 0 learns groups made at any time.
 * Bounded: ARGUS_MAX_COMM_GROUPS kept, later ones counted. No allocation; any thread.
 */
#ifndef ARGUS_TRACER_COMMGROUPS_H
#define ARGUS_TRACER_COMMGROUPS_H

#include <stdint.h>

#include "common/types.h"

/* Record one membership (ignored when g->size < 2). Returns 0, or -ENOSPC when the table
 * is full (the membership is counted in *dropped of argus_commgroups_get). */
int argus_commgroups_add(const struct argus_comm_group *g);

/* Copy up to max memberships (creation order) to out; returns the count. *dropped (when
 * not NULL) gets the memberships not kept. */
uint32_t argus_commgroups_get(struct argus_comm_group *out, uint32_t max, uint32_t *dropped);

/* Changes with every membership kept (not with those dropped past the bound): compare
 * to know whether to send the rank info again. */
uint64_t argus_commgroups_generation(void);

/* From Argus's NCCL profiler plugin (nccl_profiler_stats.c), defined in ncclhook.c: NCCL
 * made a communicator with this commHash (the same on every member), commName (NULL
 * when none; read during the call only), nNodes and (nranks, rank). Inside one of
 * ncclhook.c's hooks on this thread (NCCL calls the plugin from within
 * ncclCommInitRank/Config/Split) the hook's membership takes NCCL's hash as its id;
 * otherwise (NCCL linked statically, or a non-blocking init finishing on NCCL's own
 * thread) the membership is noted here. Either way its family comes from the name
 * (without its per-instance part) and nranks, else from (nranks, nNodes), not from the
 * order of creation (ncclhook.c's header has the rule). Once the plugin has been heard
 * from, a non-blocking init's hook notes nothing itself (the plugin will). Any thread;
 * no allocation. */
void argus_ncclhook_plugin_comm(uint64_t comm_hash, const char *name, int nnodes,
                                int nranks, int rank);

/* Order-independent identity of a member set: start with acc = 0, fold in every member's
 * world rank with argus_commgroups_hash_add, finish with the member count. Equal sets
 * give equal ids on every rank whatever the order the members were visited in. */
static inline uint64_t argus_commgroups_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline uint64_t argus_commgroups_hash_add(uint64_t acc, uint32_t world_rank)
{
    return acc + argus_commgroups_mix((uint64_t)world_rank + 1);
}
static inline uint64_t argus_commgroups_hash_end(uint64_t acc, uint32_t size)
{
    return argus_commgroups_mix(acc ^ ((uint64_t)size << 32 | 0x5a17u));
}

#endif /* ARGUS_TRACER_COMMGROUPS_H */
