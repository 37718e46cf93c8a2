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
};

/* 0, or negative errno (then Argus stays inactive). Idempotent: a second start fails
 * with -EALREADY. */
int argus_tracer_start(const struct argus_tracer_opts *o);
void argus_tracer_stop(void);
/* Layout given by argus_set_layout (all zero when none was given). */
void argus_tracer_coords(struct argus_coords *out);
uint64_t argus_tracer_dropped(void);
uint64_t argus_tracer_kernels(void);

#endif /* ARGUS_TRACER_TRACER_H */
