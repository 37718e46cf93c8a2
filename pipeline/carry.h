/* carry.h — rank 0 keeps the anomalies of steps its job store has evicted. The store
 * holds a bounded horizon of recent steps (store/jobstore.h: retention), and rank 0
 * re-analyses what it holds after every window, so an anomaly whose steps left the store
 * would silently drop out of report.json (anomalies.jsonl keeps it). This remembers the
 * latest version of every anomaly identity (kind plus sources, as pipeline/traceplan.h) and, after
 * each analysis:
 *   - widens an anomaly that continues a remembered one (same identity, its span touching
 *     the remembered span or reaching back to the first held step) back to the
 *     remembered first step, so "since when" survives eviction;
 *   - appends to the result every remembered anomaly the analysis no longer shows whose
 *     steps all lie before the first held step (numbered after the result's own).
 * An anomaly inside the held steps that the analysis no longer shows is not carried: the
 * analysis changed its mind on data it still has. Pure bookkeeping; no MPI, no I/O.
 */
#ifndef ARGUS_PIPELINE_CARRY_H
#define ARGUS_PIPELINE_CARRY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

struct argus_carry {
    struct argus_anomaly *v;
    size_t n, cap;
};

void argus_carry_init(struct argus_carry *c);
void argus_carry_free(struct argus_carry *c);
/* first_held: the oldest step the store still holds (0 when nothing was evicted).
 * Returns anomalies appended to r, or -ENOMEM (r is then unchanged past its own). */
long argus_carry_apply(struct argus_carry *c, struct argus_result *r, uint64_t first_held);

#endif /* ARGUS_PIPELINE_CARRY_H */
