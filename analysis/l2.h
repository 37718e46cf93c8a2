/* l2.h — internal to analysis/: what the L2 detector files share (l2.c compute, l2host.c
 * host_stall, bubbles.c pipeline_bubble, episodes.c the machinery): a peer class's
 * per-step reference, the rank-level scratch, one rank's runs of flagged steps, the
 * stage-level pass and the straggler/bubble reconciliation. All work on the caller's
 * struct an_ctx; no globals, no I/O.
 */
#ifndef ARGUS_ANALYSIS_L2_H
#define ARGUS_ANALYSIS_L2_H

#include "analysis/internal.h"

/* Reference of one value over the members of a peer class present at one step. */
struct an_pref {
    double ref, scale, wall;
    uint32_t n;
};

/* Scratch of the rank-level detectors: the class references (n_cls x S) and one rank's
 * per-step series (S each). */
struct an_rank_scratch {
    struct an_pref *ref;
    double *ratio, *z, *exc, *buf;
    uint8_t *flag;
    struct an_span *spans;
};

/* episodes.c */
/* Lower-half reference of v (a rank x step table: c->vcomp, c->vhost, a phase's walls)
 * over the members of each peer class present at each step, and their median step wall,
 * into out[k * S + si]; med (when not NULL) gets the median of v over them (NAN when
 * none). Uses c->gat (an_class_gather) and c->tmp2. */
void an_class_refs(struct an_ctx *c, const double *v, struct an_pref *out, double *med);
/* Allocate w's arrays for c (n_cls x S references, S per series). 0 or -ENOMEM (then
 * an_rank_scratch_free still frees what was allocated). */
int an_rank_scratch_alloc(const struct an_ctx *c, struct an_rank_scratch *w);
void an_rank_scratch_free(struct an_rank_scratch *w);
/* The runs of flagged steps of rank r (flag[0..S)) as per-rank runs of that kind
 * appended to runs, with their medians (w->ratio, z, exc). run_z > 0 (noisy steps, below
 * the kernel level): runs a few steps apart are joined, a run must be a shift of the
 * rank's own level by run_z standard errors, and it grows to its edges. Uses w->spans,
 * w->buf and c->tmp1..3. 0 or -ENOMEM. */
int an_rank_runs(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                 const struct an_rank_scratch *w, int kind, double run_z,
                 struct an_rruns *runs);

/* bubbles.c */
/* Stage-level load: the median compute of a stage (c->ccomp, filled) relative to the
 * other stages, against its own baseline over time. Adds pipeline_bubble candidates;
 * nothing with fewer than two classes. 0 or -ENOMEM. */
int an_detect_stages(struct an_ctx *c);
/* Stragglers and bubbles of the candidates from `first` on made consistent: stragglers
 * covering a stage become its bubble, a bubble gives way to the stragglers that explain
 * it (or drops those inside it), one bubble per stage and window. */
void an_reconcile_bubbles(struct an_ctx *c, size_t first);

#endif /* ARGUS_ANALYSIS_L2_H */
