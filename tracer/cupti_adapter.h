/* cupti_adapter.h — internal to tracer/: the one file that speaks CUPTI
 * (cupti_adapter.c, built only when configure found CUPTI). This header names no CUPTI
 * type, so its callers outside the adapter, tests/tracer/test_cupti.c and
 * bench/tracer_bench.c, include it freely.
 */
#ifndef ARGUS_TRACER_CUPTI_ADAPTER_H
#define ARGUS_TRACER_CUPTI_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/act.h"

/* Walk one completed CUPTI activity buffer (cuptiActivityGetNextRecord) and hand every
 * CONCURRENT_KERNEL / KERNEL (Kernel10 layout), MEMCPY (Memcpy6), MEMSET (Memset4) and
 * GRAPH_TRACE (GraphTrace2) record on as an argus_act. OVERHEAD (Overhead3) records are
 * counted with their duration; records with both timestamps 0 (no timing), with end <
 * start or one timestamp 0 are counted and skipped; other kinds are counted as unknown.
 * A walk stops at an incomplete or undecodable record (CUPTI_ERROR_INVALID_KIND etc.),
 * counted in invalid; a record cut by valid is never read. Returns activities delivered.
 * Any thread; no allocation. */
size_t argus_cupti_walk(uint8_t *buf, size_t valid, struct argus_act_stats *st,
                        argus_act_fn fn, void *ctx);

/* The rest of the adapter is InitializeInjection (the CUDA driver calls it). It hands the
 * tracer its argus.h mark forwarder and its final drain through argus_tracer_set_gpu_hooks
 * (tracer.h); api.c calls them only through those hooks. */

#endif /* ARGUS_TRACER_CUPTI_ADAPTER_H */
