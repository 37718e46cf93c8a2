/* confidence.c — the data level each verdict was judged on and how sure it is
 * (docs/ALGORITHMS.md, "Data levels"). The strength of the evidence (the score against
 * the z gate) is lowered by what is missing: a short window, a peer class that had to be
 * inferred, kernels or phases the data does not have. A missing level lowers confidence;
 * it never changes a kind. Detectors that know better set their own (stalls.c,
 * periodic.c); this fills the rest.
 */
#include "analysis/internal.h"

#include <math.h>

/* The level a verdict of this kind rests on when its detector did not say. */
static int kind_level(const struct an_ctx *c, int kind)
{
    switch (kind) {
    case ARGUS_AK_STEP_REGRESSION:
    case ARGUS_AK_ITERATION_JITTER:
        return ARGUS_DL_STEPS; /* the job step time */
    case ARGUS_AK_HOST_STALL:
    case ARGUS_AK_COMPUTE_STRAGGLER:
    case ARGUS_AK_PERSISTENT_IMBALANCE:
        return c->level ? c->level : ARGUS_DL_KERNELS;
    default:
        return ARGUS_DL_KERNELS; /* kernels, groups, stage compute */
    }
}

/* 0.5 at the z gate, rising towards 1 with the score; below the gate, under 0.5. */
static double strength(double score, double z)
{
    if (!(z > 0) || !isfinite(score))
        return 0.5;
    return score >= z ? 1.0 - 0.5 * exp(-(score - z) / z) : 0.5 * fmax(score, 0) / z;
}

void an_confidence(struct an_ctx *c)
{
    for (size_t i = 0; i < c->cand.n; i++) {
        struct an_cand *k = &c->cand.v[i];
        struct argus_anomaly *a = &k->a;
        if (k->dropped)
            continue;
        if (!a->data_level)
            a->data_level = kind_level(c, a->kind);
        if (a->confidence > 0)
            continue;
        double f = strength(a->score, c->o.z);
        const int ranked = a->n_ranks > 0 && a->kind != ARGUS_AK_COMM_DEGRADATION;
        if (k->si_b - k->si_a + 1 < 5 && a->kind != ARGUS_AK_ITERATION_JITTER)
            f *= 0.85; /* a short window */
        if (ranked && !c->layout_known)
            f *= 0.9; /* peers from an inferred layout */
        if (ranked && a->data_level == ARGUS_DL_PHASES)
            f *= 0.9; /* phases without kernels: compute and waiting share a phase */
        if (ranked && a->data_level == ARGUS_DL_STEPS)
            f *= 0.75; /* step times only: compute and host cannot be told apart */
        a->confidence = fmin(0.99, fmax(0.05, f));
    }
}
