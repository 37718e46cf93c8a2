/* cupti_holder.h — internal to tracer/: which tool holds CUPTI when Argus cannot have it.
 * CUPTI takes one subscriber per process; NVRx's straggler detector, an active PyTorch
 * profiler (Kineto), Nsight Systems / Nsight Compute and DCGM-based tools may be it. The
 * adapter (cupti_adapter.c) asks here once, when cuptiSubscribe or activity enabling
 * fails, for the reason it then reports (one log line, and ARGUS_SF_NO_CUPTI with the
 * reason on every summary: common/types.h). Pure: the environment and the process's
 * mapped files come in as arguments, so every case is tested without CUDA. Nothing here
 * allocates or logs.
 */
#ifndef ARGUS_TRACER_CUPTI_HOLDER_H
#define ARGUS_TRACER_CUPTI_HOLDER_H

#include <stddef.h>
#include <stdio.h>

/* The tool holding CUPTI (enum argus_cupti_why, common/types.h: ARGUS_CUPTI_HELD_*), from,
 * in this order: the subscriber name CUPTI gave (old, may be NULL or ""), the environment
 * (env: NULL-terminated "NAME=value" strings, may be NULL) and the paths in maps (the
 * text of /proc/self/maps, may be NULL). ARGUS_CUPTI_HELD_OTHER when nothing names one.
 * evidence gets what named it ("NSYS_PROFILING_SESSION_ID", "libkineto.so", the
 * subscriber's name), "" when nothing did. */
unsigned argus_cupti_holder(const char *old, char *const *env, FILE *maps, char *evidence,
                            size_t cap);

#endif /* ARGUS_TRACER_CUPTI_HOLDER_H */
