/* hoststacks.h — host call stacks merged per anomaly (docs/ALGORITHMS.md, "Host call
 * stacks"): of the samples rank 0 holds (common/stackrec.h), those its source ranks took
 * during the anomaly's steps (its affected steps when it lists them all, else its span),
 * grouped by identical stack, the top ones with how many samples and ranks share them;
 * beside them the same for the healthy peers: the samples rank 0 asked other ranks for
 * while a source stalled at one of those steps, and other ranks' own samples of them.
 * Pure computation: no allocation, no I/O; linear in the samples (bounded groups). The
 * result points into the set (valid while the set is unchanged).
 */
#ifndef ARGUS_ANALYSIS_HOSTSTACKS_H
#define ARGUS_ANALYSIS_HOSTSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "common/stackrec.h"

#define ARGUS_STACKS_TOP 3     /* stacks shown per side and kind of frames */
#define ARGUS_STACKS_GROUPS 64 /* distinct stacks told apart; the rest counted as other */

struct argus_stack_top {
    const char *folded; /* outermost first, into the set */
    uint16_t nframes;
    uint32_t samples, ranks;
};

/* One side (sources or peers), one kind of frames. */
struct argus_stack_side {
    uint32_t samples, ranks; /* all of that side's samples of this kind; ranks sampled */
    uint32_t other;          /* samples in stacks past ARGUS_STACKS_GROUPS */
    size_t n;
    struct argus_stack_top top[ARGUS_STACKS_TOP]; /* most samples first */
};

struct argus_anomaly_stacks {
    struct argus_stack_side src[2], peer[2]; /* [0] Python, [1] native */
    uint64_t cost_ns_max, cost_ns_sum;       /* over the source samples */
    uint32_t cost_n;
};

/* 1 when a sample of step belongs to anomaly a: in its affected steps when it lists them
 * all, else in its span. */
int argus_hoststacks_in_steps(const struct argus_anomaly *a, uint64_t step);

/* Which side of anomaly a sample r is on: 1 a source's own sample of its steps, 2 a
 * peer's (asked for during a source's stall at one of its steps, or another rank's own
 * sample of them), 0 neither. */
int argus_hoststacks_side(const struct argus_anomaly *a, const struct argus_stackrec *r);

/* The merge for anomaly a: 1 when any source sample matched (out filled), else 0. */
int argus_hoststacks_for(const struct argus_stackset *s, const struct argus_anomaly *a,
                         struct argus_anomaly_stacks *out);

/* The innermost frame of the top source stack of kind lang (0 Python, 1 native) that the
 * top peer stack of the same kind lacks (all of them when peers have none): the frames
 * that differ, innermost first, as offsets/lengths into top->folded. At most max; the
 * count. */
size_t argus_hoststacks_differ(const struct argus_anomaly_stacks *st, int lang,
                               size_t *off, size_t *len, size_t max);

#endif /* ARGUS_ANALYSIS_HOSTSTACKS_H */
