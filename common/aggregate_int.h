/* aggregate_int.h — internal to common/aggregate*.c: what the encoding (aggregate_wire.c)
 * shares with the aggregate itself (aggregate.c). Not for other modules.
 */
#ifndef ARGUS_COMMON_AGGREGATE_INT_H
#define ARGUS_COMMON_AGGREGATE_INT_H

#include <stddef.h>

#include "common/aggregate.h"

/* Grow a row array to hold need: argus_grow (common/grow.h), or past 2 MiB a copy
 * 2 MiB-aligned for huge pages; keep: rows kept. 0 or -ENOMEM (then unchanged). */
int argus_agg_grow_rows(struct argus_agg_row **p, size_t *cap, size_t need, size_t keep);
/* Room for need runs (their ends kept; the merge scratch behind them not). 0 or -ENOMEM
 * (then unchanged). */
int argus_agg_grow_runs(struct argus_aggregate *a, size_t need);

/* Hands a block of n rows, next in canonical order, to a consumer. */
typedef void argus_agg_emit_fn(void *ctx, const struct argus_agg_row *r, size_t n);
/* a's rows in canonical order, block by block, to emit (the k-way merge of its runs; uses
 * a->run's scratch, reads the rows only). */
void argus_agg_rows_kmerge(const struct argus_aggregate *a, argus_agg_emit_fn *emit,
                           void *ctx);

#endif /* ARGUS_COMMON_AGGREGATE_INT_H */
