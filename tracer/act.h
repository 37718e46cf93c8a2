/* act.h — internal to tracer/: the neutral GPU activity that the CUPTI adapter
 * (cupti_adapter.c, the only file that includes CUPTI headers) hands to the collector,
 * and the counters it keeps. Plain data; nothing here allocates or knows CUPTI.
 */
#ifndef ARGUS_TRACER_ACT_H
#define ARGUS_TRACER_ACT_H

#include <stddef.h>
#include <stdint.h>

enum argus_act_kind {
    ARGUS_ACT_KERNEL = 0,
    ARGUS_ACT_MEMCPY = 1,
    ARGUS_ACT_MEMSET = 2,
    ARGUS_ACT_GRAPH = 3, /* one CUDA-graph launch (GRAPH_TRACE), no node visibility */
};

/* One GPU activity. name points to CUPTI-owned text that lives as long as the process
 * (kernel names) or to a static string ("[memcpy HtoD]", ...); never NULL. */
struct argus_act {
    const char *name;
    uint64_t start_ns, end_ns; /* CUPTI timebase (CLOCK_REALTIME on Linux) */
    uint64_t bytes;            /* memcpy/memset bytes, 0 for kernels */
    uint32_t device, stream, corr;
    uint8_t kind;              /* enum argus_act_kind */
};

/* What the adapter saw (all monotonic counters; the collector reports them per step). */
struct argus_act_stats {
    uint64_t records;     /* records walked (any kind) */
    uint64_t delivered;   /* activities handed on */
    uint64_t overhead;    /* CUPTI OVERHEAD records */
    uint64_t overhead_ns; /* their summed duration */
    uint64_t zero_ts;     /* start == end == 0: no timing (device buffer short) */
    uint64_t bad_ts;      /* end < start, or only one of them 0 */
    uint64_t unknown;     /* kinds Argus does not use (skipped) */
    uint64_t invalid;     /* walks stopped at an incomplete / undecodable record */
    uint64_t dropped;     /* cuptiActivityGetNumDroppedRecords, summed */
};

/* Receives each activity (valid only during the call). */
typedef void (*argus_act_fn)(void *ctx, const struct argus_act *a);

#endif /* ARGUS_TRACER_ACT_H */
