/* whatif_mb.c — the forecast's microbatch what-if (forecast/internal.h: fc_whatif_mb;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "What-ifs"): the held regime steps with m'
 * microbatches instead of m, the 1F1B pipeline schedule re-run. With p stages whose
 * forward+backward of one microbatch take u_s (stage s), the pipelined part of a step
 * spans sum_s u_s + (m - 1) max_s u_s: the first microbatch passes every stage, each
 * later one adds the slowest stage's slot (equal stages: (m + p - 1) u, the bubble
 * (p - 1) u of it); the rest of the step (host gap, optimizer, DP communication) does not
 * depend on m. A held step's pipelined span S is the longest forward+backward phase wall
 * of its ranks (the first stage's, which starts first and ends last; the waits for the
 * other stages lie inside those phases). Each stage's slot is its compute kernels
 * launched in forward and backward per microbatch, k_s (the slowest rank of the stage),
 * plus a per-microbatch overhead g common to the stages (launch gaps, transfers) that S
 * fixes: g = (S - sum_s k_s - (m - 1) max_s k_s) / (m + p - 1); so u_max = max_s k_s + g
 * and the step becomes t + (m' - m) u_max. Without kernel times (k_s 0) that is
 * S / (m + p - 1), the equal stages' slot. The microbatch is the same size (the global
 * batch x m'/m); the planned steps stay the same. Reads the held cells through the store;
 * no allocation.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

#define FC_MB_MAX_STAGES 64 /* stages told apart; more: taken as equal (k_s 0) */

/* Held step i's pipelined span (ms): the longest forward+backward phase wall of its
 * ranks, 0 when no rank has one; and, with p (<= FC_MB_MAX_STAGES) stages of `per`
 * consecutive ranks each (Megatron order), the stages' compute in forward+backward (ms,
 * the slowest rank of each) into k[0..p). */
static double fc_span(const struct fc *f, size_t i, uint32_t p, uint32_t per, double *k)
{
    const uint64_t step = f->step[f->h0 + i];
    uint64_t best = 0;
    for (uint32_t s = 0; s < p; s++)
        k[s] = 0;
    for (uint32_t r = 0; r < f->P; r++) {
        const struct argus_step_summary *s = argus_jobstore_get(f->js, r, step);
        if (!s)
            continue;
        const uint64_t fb = s->phase_wall_ns[ARGUS_PH_FORWARD] +
                            s->phase_wall_ns[ARGUS_PH_BACKWARD];
        if (fb > best)
            best = fb;
        const double c = (double)(s->phase_compute_ns[ARGUS_PH_FORWARD] +
                                  s->phase_compute_ns[ARGUS_PH_BACKWARD]) / 1e6;
        const uint32_t st = per ? r / per : 0;
        if (st < p && c > k[st])
            k[st] = c;
    }
    return (double)best / 1e6;
}

int fc_whatif_mb(const struct fc *f, const struct argus_result *res, size_t i0,
                 uint32_t m, uint32_t m1, double *out, size_t *nout,
                 struct argus_fc_whatif *wo)
{
    const uint32_t p = res && res->layout.pp >= 1 ? (uint32_t)res->layout.pp : 1;
    const double slots = (double)m + p - 1;
    /* stages apart when the layout accounts for every rank and they are few enough */
    const uint32_t ps = p <= FC_MB_MAX_STAGES && f->P % p == 0 &&
                                (!res || (uint64_t)res->layout.tp * res->layout.dp * p ==
                                             f->P) ? p : 1;
    const uint32_t per = f->P / ps;
    size_t n_span = 0, n_steps = 0, n_k = 0;
    double span_sum = 0, t_sum = 0, bub_sum = 0, k[FC_MB_MAX_STAGES];

    *nout = 0;
    for (size_t i = i0; i < f->nh; i++) {
        const double t = f->t[f->h0 + i];
        if (f->ev[f->h0 + i] || t <= 0)
            continue;
        n_steps++;
        const double s = fc_span(f, i, ps, per, k);
        if (s <= 0 || s > t * 1.001)
            continue; /* no phases, or phases not inside the step: not this model's */
        double ksum = 0, kmax = 0; /* per microbatch */
        for (uint32_t j = 0; j < ps; j++) {
            ksum += k[j] / m;
            kmax = k[j] / m > kmax ? k[j] / m : kmax;
        }
        if (ps == 1) /* one stage, or stages not told apart: equal slots */
            ksum = kmax * p;
        if (ksum + (m - 1.0) * kmax >= s) /* compute that does not fit the span */
            ksum = kmax = 0;
        n_k += kmax > 0;
        const double g = (s - ksum - (m - 1.0) * kmax) / slots;
        const double u = kmax + g;
        const double t1 = t + ((double)m1 - (double)m) * u;
        out[(*nout)++] = t1 > 0 ? t1 : 0;
        span_sum += s;
        t_sum += t;
        bub_sum += s - m * u;
        n_span++;
    }
    if (n_span * 2 < n_steps || n_span < 2) {
        *nout = 0;
        snprintf(wo->note, sizeof wo->note, "no forward/backward phases in %zu of %zu held "
                 "steps: the microbatch what-if needs them (not modelled)", n_steps - n_span,
                 n_steps);
        return 0;
    }
    const double bub = bub_sum / (double)n_span, span = span_sum / (double)n_span;
    const double span1 = span + ((double)m1 - (double)m) * (span - bub) / m;
    snprintf(wo->note, sizeof wo->note, "1F1B over %u stage%s: %u -> %u microbatches of the "
             "same size (global batch x %.3g); pipelined %.1f %% of the step, bubble share "
             "%.1f %% -> %.1f %%%s; host gap, optimizer, DP comm unchanged; same planned steps",
             p, p > 1 ? "s" : "", m, m1, (double)m1 / m,
             t_sum > 0 ? 100 * span_sum / t_sum : 0, span > 0 ? 100 * bub / span : 0,
             span1 > 0 ? 100 * bub / span1 : 0,
             n_k * 2 >= n_span && ps > 1 ? " (stages' slots from their kernels)" : "");
    return 0;
}
