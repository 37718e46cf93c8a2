/* nccl_profiler_chain.h — internal to tracer/: the profiler plugin that was in NCCL's
 * single slot before Argus took it (NCCL's Inspector, a site plugin), loaded by Argus's
 * plugin (nccl_profiler.c) and called for every call NCCL makes, so that it sees what it
 * would have seen alone.
 *
 * The target is named by ARGUS_NCCL_PROFILER_CHAIN (argus-run and the SPANK plugin put the
 * user's NCCL_PROFILER_PLUGIN there), resolved as NCCL does: the value as a library name
 * or path, else libnccl-profiler-<value>.so. Its highest contract of v6, v5, v4 is used;
 * descriptors reach it in that version's layout (converted from the v6 layout Argus works
 * in), with parent handles translated to its own and event types it cannot know (or did
 * not ask for) withheld. An event Argus's full pool cannot hold (counted as dropped)
 * reaches neither. Nothing here allocates; loading happens once (first init) and
 * prints at most one line (why the target could not be loaded).
 */
#ifndef ARGUS_TRACER_NCCL_PROFILER_CHAIN_H
#define ARGUS_TRACER_NCCL_PROFILER_CHAIN_H

#include "tracer/nccl_profiler_abi.h"

/* Load the target once (later calls return the first answer): its contract version (4,
 * 5 or 6), or 0 when there is none (variable unset or empty, "none", Argus's own
 * library, or a failed load). Thread-safe. */
int ncclp_chain_load(void);

/* The target's init; *cctx and *cmask are its context and activation mask (limited to
 * the types its version knows). Returns its result; *cmask = 0 without a target. */
ncclp_result_t ncclp_chain_init(void **cctx, int *cmask, uint64_t comm_hash,
                                const char *name, int nnodes, int nranks, int rank,
                                ncclp_logger_t logfn);

/* Start d (v6 layout) in the target. parent and group: the target's handles for
 * d->parentObj and, for coll/p2p, their parentGroup (NULL when none). *ch: its handle
 * (NULL when it did not take the event, or d's type is not in cmask). */
ncclp_result_t ncclp_chain_start(void *cctx, int cmask, void **ch, const ncclp_descr_v6 *d,
                                 void *parent, void *group);
ncclp_result_t ncclp_chain_stop(void *ch);
ncclp_result_t ncclp_chain_state(void *ch, ncclp_state_t s, ncclp_state_args_v5 *a);
ncclp_result_t ncclp_chain_finalize(void *cctx);

#endif /* ARGUS_TRACER_NCCL_PROFILER_CHAIN_H */
