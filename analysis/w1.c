/* w1.c — Wasserstein-1 (earth mover's) distance between two one-dimensional samples,
 * W1 = integral over q in (0,1) of |F_a^-1(q) - F_b^-1(q)|, evaluated on the grid
 * q_i = (i + 1/2) / Q (docs/ALGORITHMS.md, W1 distance), and the block-structure summary of a
 * W1 matrix (mean distance inside a set of members versus between members and the
 * rest). Pure functions on caller-owned arrays; no allocation, no globals.
 */
#include "analysis/internal.h"

#include <math.h>

double an_w1_sorted(const double *a, size_t na, const double *b, size_t nb)
{
    if (na == 0 || nb == 0)
        return NAN;
    double s = 0;
    for (int i = 0; i < AN_W1_Q; i++) {
        const double q = ((double)i + 0.5) / AN_W1_Q;
        s += fabs(argus_stats_quantile_sorted(a, na, q) - argus_stats_quantile_sorted(b, nb, q));
    }
    return s / AN_W1_Q;
}

void an_w1_blocks(const double *M, size_t n, const uint8_t *in, double *intra, double *inter)
{
    double si = 0, sx = 0;
    size_t ni = 0, nx = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const double v = M[i * n + j];
            if (isnan(v))
                continue;
            if (in[i] && in[j]) {
                si += v;
                ni++;
            } else if (in[i] != in[j]) {
                sx += v;
                nx++;
            }
        }
    *intra = ni ? si / (double)ni : NAN;
    *inter = nx ? sx / (double)nx : NAN;
}

#include <stdlib.h>
#include <string.h>

/* r's group: from the layout, else from communicator membership (UINT32_MAX: none). */
static uint32_t group_key(const struct an_ctx *c, uint32_t r, int type)
{
    if (!c->layout_known)
        return an_group_of(c, r, type);
    const struct argus_coords *x = &c->co[r];
    return type == ARGUS_GT_TP ? (uint32_t)x->pp * (uint32_t)c->lay.dp + x->dp
                               : (uint32_t)x->pp * (uint32_t)c->lay.tp + x->tp;
}

/* r's PP stage, or its peer class without a layout. */
static uint32_t stage_of(const struct an_ctx *c, uint32_t r)
{
    return c->layout_known ? (uint32_t)c->co[r].pp : c->cls[r];
}

size_t an_w1_matrix(struct an_ctx *c, const struct argus_anomaly *an, uint64_t hash, size_t a,
                    size_t b, uint32_t *reps, uint8_t *in, double *M)
{
    const int type = an->group_type == ARGUS_GT_TP ? ARGUS_GT_TP : ARGUS_GT_DP;
    if ((!c->layout_known && !c->mgrp[type == ARGUS_GT_TP]) || an->n_group == 0 || b < a ||
        b >= c->S)
        return 0;
    const uint32_t stage = stage_of(c, an->group[0]);
    size_t n = 0;
    for (uint32_t i = 0; i < an->n_group && n < AN_W1_MAX_REPS; i++) {
        reps[n] = an->group[i];
        in[n++] = 1;
    }
    /* the other groups, same stage first, whole groups in key order */
    for (int pass = 0; pass < 2 && n < AN_W1_MAX_REPS; pass++) {
        uint32_t last_key = UINT32_MAX;
        for (;;) {
            uint32_t best = UINT32_MAX;
            for (uint32_t r = 0; r < c->n; r++) {
                const uint32_t k = group_key(c, r, type);
                if ((stage_of(c, r) == stage) != (pass == 0) ||
                    k == group_key(c, an->group[0], type))
                    continue;
                if ((last_key == UINT32_MAX || k > last_key) && k < best)
                    best = k;
            }
            if (best == UINT32_MAX)
                break;
            uint32_t cnt = 0;
            for (uint32_t r = 0; r < c->n; r++)
                cnt += group_key(c, r, type) == best;
            if (n + cnt > AN_W1_MAX_REPS)
                break;
            for (uint32_t r = 0; r < c->n; r++)
                if (group_key(c, r, type) == best) {
                    reps[n] = r;
                    in[n++] = 0;
                }
            last_key = best;
        }
    }
    const size_t W = b - a + 1;
    double *smp = malloc(n * W * sizeof *smp);
    size_t *cnt = calloc(n, sizeof *cnt);
    if (!smp || !cnt) {
        free(smp);
        free(cnt);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t si = a; si <= b; si++) {
            const struct argus_step_summary *s = an_kcell(c, reps[i], si);
            double calls, v = s ? an_name_typical(c, s, hash, &calls) : 0;
            if (v > 0)
                smp[i * W + cnt[i]++] = v;
        }
        argus_stats_sort(smp + i * W, cnt[i]);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            M[i * n + j] = i == j ? 0
                                  : an_w1_sorted(smp + i * W, cnt[i], smp + j * W, cnt[j]);
    free(smp);
    free(cnt);
    return n;
}
