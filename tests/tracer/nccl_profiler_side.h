/* nccl_profiler_side.h — tests only: NCCL's side of the profiler-plugin contract
 * (tracer/nccl_profiler_abi.h) for the driver (tests/tracer/nccl_profiler_driver.c). One
 * plugin per process. Any thread may start, record and stop events (counted atomically);
 * load and init run on the main thread.
 */
#ifndef ARGUS_TESTS_NCCL_PROFILER_SIDE_H
#define ARGUS_TESTS_NCCL_PROFILER_SIDE_H

#include <stdint.h>

#include "tracer/nccl_profiler_abi.h"

/* dlopen path and take its newest ncclProfiler_vN with N <= maxver (6, 5, 4). 0, or -1
 * with one "FAIL" line on stdout. */
int side_load(const char *path, int maxver);
/* The plugin's init in its version's argument order; *mask: what it asks for. */
int side_init(void **ctx, int *mask, uint64_t hash, const char *name, int nnodes,
              int nranks, int rank);
/* Start d (v6 layout, coll/p2p parent = their group), translated to the loaded version's
 * layout, when its type is in mask: the plugin's handle, or NULL (not asked, or none). */
void *side_start(void *ctx, int mask, const ncclp_descr_v6 *d);
/* Record state s of h (ptimer: a kernel channel's timer); NULL h: nothing. */
void side_state(void *h, int s, uint64_t ptimer);
/* Stop h; NULL h: nothing. */
void side_stop(void *h);
void side_finalize(void *ctx);
/* One proxy step under op: states[i] recorded, then ms[i] milliseconds slept, for i < n;
 * then stopped. */
void side_proxy_step(void *ctx, int mask, void *op, const int *states, const long *ms,
                     int n);

/* The version loaded (6, 5, 4; 0 before side_load), its table's name, how many events of
 * type bit i (0..15) were started and how many events were stopped. */
int side_version(void);
const char *side_name(void);
int side_started(int i);
int side_stopped(void);

#endif /* ARGUS_TESTS_NCCL_PROFILER_SIDE_H */
