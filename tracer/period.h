/* period.h — internal to tracer/: automatic step detection when nothing marks steps
 * (docs/ALGORITHMS.md, "Step detection"). A training step launches the same kernel sequence
 * every step, so the sequence of interned kernel ids is periodic up to inserted noise
 * kernels (data-dependent, MoE). The detector keeps the last L ids, and when not locked
 * looks for anchors: ids whose occurrences are evenly spaced (within 10%); for each
 * candidate spacing, smallest first, it confirms the repeat by aligning consecutive
 * anchor-to-anchor segments (insertions skipped, lookahead 4) and accepts when >= 95 % of
 * ids match over all compared pairs (the last 64). The period P is the matched length
 * (noise excluded, exact). Collective anchors are preferred at equal spacing (the gradient
 * sync); the step boundary is the kernel after a collective anchor, or the anchor itself
 * otherwise. Locked, each push is O(1); the lock is dropped when the anchor stays away for
 * 1.5 x the longest seen gap.
 *
 * Memory fixed at create (about 40 bytes x 4 x max_period); detection runs O(n) at
 * n = 1024, 2048, ... pushes, then every L/4 (amortised O(1) per push). One thread.
 */
#ifndef ARGUS_TRACER_PERIOD_H
#define ARGUS_TRACER_PERIOD_H

#include <stddef.h>
#include <stdint.h>

struct argus_period;

int argus_period_create(size_t max_period, struct argus_period **out);
void argus_period_free(struct argus_period *p);

/* Push the next kernel id (any 64-bit key; the collector uses the name pointer).
 * Returns 1 when this kernel starts a new step (locked), 0 otherwise. */
int argus_period_push(struct argus_period *p, uint64_t id, int is_collective);

/* Locked period (kernels per step, noise excluded), 0 when not locked. */
size_t argus_period_get(const struct argus_period *p);
/* Times the detector locked (re-locks after losing the anchor count too). */
unsigned argus_period_locks(const struct argus_period *p);

#endif /* ARGUS_TRACER_PERIOD_H */
