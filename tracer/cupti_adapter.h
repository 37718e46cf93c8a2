/* cupti_adapter.h — internal to tracer/: the one file that speaks CUPTI
 * (cupti_adapter.c, built only when configure found CUPTI). This header names no CUPTI
 * type, so tests and the rest of the tracer include it freely.
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

/* The CUPTI version this build was compiled against (CUPTI_API_VERSION). */
uint32_t argus_cupti_api_version(void);

/* Called by the tracer when the rank is known / at finalize (tracer/api.c): whether the
 * injected collector is running in this process (then argus.h marks go to it). */
int argus_cupti_active(void);
/* Forward an argus.h mark to the collector (no-op when not active). kind: enum
 * argus_mark_kind; phase only for pushes. */
void argus_cupti_mark(int kind, uint64_t step, uint64_t t_ns, unsigned phase);

#endif /* ARGUS_TRACER_CUPTI_ADAPTER_H */
