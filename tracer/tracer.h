/* tracer.h — internal: the process-wide tracer behind argus.h (tracer/api.c owns it).
 * reduce/ starts it once the rank is known and stops it at finalize; until started and
 * after stopped every argus.h call is a cheap no-op. start/stop are called from the
 * thread that calls MPI_Init/MPI_Finalize; the argus.h calls from the application's
 * step-loop thread.
 */
#ifndef ARGUS_TRACER_TRACER_H
#define ARGUS_TRACER_TRACER_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "tracer/summarizer.h"

/* Symbols of libargus.so that other programs may bind to. */
#define ARGUS_EXPORT __attribute__((visibility("default")))

struct argus_tracer_opts {
    uint32_t rank;
    size_t max_events;
    argus_summary_sink_fn on_summary; /* called from argus_step_end's thread */
    argus_name_sink_fn on_name;
    void *ctx;
    double coverage; /* summariser budget (summarizer.h); 0: keep every mode */
    /* argus.h path: kernels reported by argus_kernel also go to this raw ring (names
     * copied; step = the last argus_step_begin) for L4 dumps. Borrowed: the caller frees
     * it after stop and after its last dump. NULL: none. */
    struct argus_ring *ring;
};

/* 0, or negative errno (then Argus stays inactive). Idempotent: a second start fails
 * with -EALREADY. */
int argus_tracer_start(const struct argus_tracer_opts *o);
void argus_tracer_stop(void);
/* ---- GPU collection (tracer/cupti_adapter.c, tracer/collect.c) ----------------------
 * The summariser for the collector's drain thread: NULL when the tracer is not started
 * (release must follow every non-NULL acquire). Summaries and names built on that
 * thread are queued (fixed slots; when full, the oldest summary or the newest name is
 * dropped, and nothing reports the loss) and handed to the sinks by argus_tracer_deliver,
 * which the NVTX step callbacks, the argus.h step calls and argus_tracer_stop call on the
 * application thread, and the Argus thread (reduce/agent.c) calls while it waits, so that
 * steps found by period detection in a program that marks nothing still travel. One
 * deliverer at a time. */
struct argus_summarizer *argus_tracer_acquire(void);
void argus_tracer_release(void);
void argus_tracer_deliver(void);
/* Installed once by InitializeInjection: argus.h step/phase marks then go to mark (kind:
 * enum argus_mark_kind) instead of the summariser, argus_kernel calls are ignored (the GPU
 * is traced for real), and argus_tracer_stop calls drain first (final forced flush). */
typedef void (*argus_gpu_mark_fn)(int kind, uint64_t step, uint64_t t_ns, unsigned phase);
typedef void (*argus_gpu_drain_fn)(void);
struct argus_ring;
void argus_tracer_set_gpu_hooks(argus_gpu_mark_fn mark, argus_gpu_drain_fn drain,
                                struct argus_ring *ring);
/* Set once by InitializeInjection when GPU collection cannot start (why: enum
 * argus_cupti_why): argus.h marks keep going to the summariser, and every summary queued
 * after it carries ARGUS_SF_NO_CUPTI with why (common/types.h), so the report can say why
 * the rank's diagnosis is at phase level. */
void argus_tracer_set_no_cupti(unsigned why);
/* 1 once this process has something to trace: the CUDA driver injected the GPU collector,
 * or the program marked a step through argus.h (reduce/selfinit.c initialises MPI only
 * for such processes, not for shells or helpers that merely inherit LD_PRELOAD). */
int argus_tracer_wanted(void);
/* The raw ring of the GPU collector, NULL when none (for L4 dumps; its timestamps are
 * CUPTI's: argus_tracer_clock_triple maps them to CLOCK_REALTIME). */
struct argus_ring *argus_tracer_ring(void);
/* (cuptiGetTimestamp, CLOCK_REALTIME, CLOCK_MONOTONIC) read together: at GPU-collection
 * start and then at most once a second at a step flush. Every summary queued after a set
 * carries the latest triple in its header (clock_gpu_ns, clock_real_ns, clock_mono_ns). */
void argus_tracer_set_clock_triple(uint64_t cupti_ns, uint64_t real_ns, uint64_t mono_ns);
void argus_tracer_clock_triple(uint64_t out[3]);

/* What the step-loop thread is doing (argus.h marks), for the host stack sampler
 * (tracer/hoststack.h): a step is open, its id, the thread that marked its begin, monotonic
 * ns of its begin and of the thread's latest mark (step, phase, kernel), the steps ended
 * so far and the last one's length. Any thread; reads relaxed atomics, never blocks. */
struct argus_tracer_activity {
    int open, tid;
    uint64_t step, begin_ns, mark_ns, done, last_ns;
};
void argus_tracer_activity(struct argus_tracer_activity *out);

/* Planned steps given by argus_set_total_steps (0 when none was given); any thread. */
uint64_t argus_tracer_total_steps(void);
/* Layout given by argus_set_layout (all zero when none was given). */
void argus_tracer_coords(struct argus_coords *out);
uint64_t argus_tracer_dropped(void);
uint64_t argus_tracer_kernels(void);

#endif /* ARGUS_TRACER_TRACER_H */
