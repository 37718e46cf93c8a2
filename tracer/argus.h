/* argus.h — Argus's public API, stable, for frameworks that mark steps and phases
 * themselves and for replayed or simulated GPU events (argus-simtrain, importers).
 *
 * Every function is safe to call when Argus is off or failed (it then does nothing and
 * returns quickly); none blocks on I/O or MPI, none allocates per event, none exits.
 * Calls for one rank must come from one thread at a time (the thread that owns the
 * rank's step loop). Timestamps are ns; pass 0 to mean "now" (CLOCK_REALTIME).
 */
#ifndef ARGUS_H
#define ARGUS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARGUS_API_VERSION 1

enum argus_kernel_class {
    ARGUS_KERNEL_COMPUTE = 0,
    ARGUS_KERNEL_COLLECTIVE = 1,
    ARGUS_KERNEL_P2P = 2,
    ARGUS_KERNEL_MEMCPY = 3,
    ARGUS_KERNEL_MEMSET = 4,
};

/* 1 when Argus is collecting in this process, 0 otherwise. */
int argus_active(void);

/* Tell Argus where this rank sits (Megatron order). Call before the first step; sizes of
 * 0 mean unknown. Returns 0, or -EINVAL for inconsistent values (ignored then). */
int argus_set_layout(int tp_size, int pp_size, int dp_size, int ep_size, int tp, int pp,
                     int dp, int ep);

/* The job's planned training steps, for the time-to-train forecast of rank 0's reports
 * (docs/ALGORITHMS.md, "Forecast (PRISM)"); 0: unknown. Call it on any rank (every rank,
 * rank 0, or one other): the value reaches rank 0 with the rank's next step summary; when
 * ranks give different values the latest given is used (and rank 0 says so once). It wins
 * over ARGUS_TOTAL_STEPS and may change (the next window's report uses the latest).
 * Returns 0. */
int argus_set_total_steps(uint64_t steps);

/* Step marks. step ids must increase. A step_end without a begin is ignored. */
void argus_step_begin(uint64_t step, uint64_t t_ns);
void argus_step_end(uint64_t step, uint64_t t_ns);

/* Phase ranges ("forward", "backward", "optimizer", ... see argus_phase_from_name);
 * nesting up to 16 deep; extra pushes are counted and ignored. */
void argus_phase_push(const char *name, uint64_t t_ns);
void argus_phase_pop(uint64_t t_ns);

/* One GPU activity. name is copied when first seen (interned); kernels outside a step are
 * counted and dropped. */
void argus_kernel(const char *name, uint64_t start_ns, uint64_t end_ns, uint32_t device,
                  uint32_t stream, enum argus_kernel_class cls);

/* CLOCK_REALTIME in ns. */
uint64_t argus_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_H */
