/* nccl_profiler_stress.h — tests only: the NCCL profiler driver's pool and thread stress
 * (tests/tracer/nccl_profiler_stress.c), run after the driver's own checks with Argus on
 * (libargus.so's side linked in). Main thread; it starts and joins one thread.
 */
#ifndef ARGUS_TESTS_NCCL_PROFILER_STRESS_H
#define ARGUS_TESTS_NCCL_PROFILER_STRESS_H

/* Overfill and reuse the plugin's event pool, cycle its task ring and run collectives
 * against a proxy thread on communicator ctx (what the plugin asked for: mask), checking
 * libargus.so's per-step record after each. Returns the failed checks (one "FAIL" line
 * each on stdout). */
int nccl_stress_run(void *ctx, int mask);

#endif /* ARGUS_TESTS_NCCL_PROFILER_STRESS_H */
