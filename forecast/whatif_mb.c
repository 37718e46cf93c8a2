/* whatif_mb.c — the forecast's microbatch what-if (forecast/internal.h: fc_whatif_mb;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "What-ifs"): the held regime steps with m'
 * microbatches instead of m, the 1F1B pipeline schedule re-run. With p stages and a
 * stage's forward+backward of one microbatch taking u, the pipelined part of a step spans
 * (m + p - 1) u (the bubble is the (p - 1) u of it, a share (p - 1) / (m + p - 1)); the
 * rest of the step (host gap, optimizer, DP communication) does not depend on m. A held
 * step's pipelined span is the longest forward+backward phase wall of its ranks (the
 * first stage's, which starts first and ends last; the waits for the other stages lie
 * inside those phases), so u = span / (m + p - 1), and the step becomes
 * t + (m' - m) u. The microbatch is the same size (the global batch x m'/m); the planned
 * steps stay the same. Reads the held cells through the store; no allocation.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

/* Held step i's pipelined span (ms): the longest forward+backward phase wall of its
 * ranks, 0 when no rank has one. */
static double fc_span(const struct fc *f, size_t i)
{
    const uint64_t step = f->step[f->h0 + i];
    uint64_t best = 0;
    for (uint32_t r = 0; r < f->P; r++) {
        const struct argus_step_summary *s = argus_jobstore_get(f->js, r, step);
        if (!s)
            continue;
        const uint64_t fb = s->phase_wall_ns[ARGUS_PH_FORWARD] +
                            s->phase_wall_ns[ARGUS_PH_BACKWARD];
        if (fb > best)
            best = fb;
    }
    return (double)best / 1e6;
}

int fc_whatif_mb(const struct fc *f, const struct argus_result *res, size_t i0,
                 uint32_t m, uint32_t m1, double *out, size_t *nout,
                 struct argus_fc_whatif *wo)
{
    const uint32_t p = res && res->layout.pp >= 1 ? (uint32_t)res->layout.pp : 1;
    const double slots = (double)m + p - 1;
    size_t n_span = 0, n_steps = 0;
    double span_sum = 0, t_sum = 0;

    *nout = 0;
    for (size_t i = i0; i < f->nh; i++) {
        const double t = f->t[f->h0 + i];
        if (f->ev[f->h0 + i] || t <= 0)
            continue;
        n_steps++;
        const double s = fc_span(f, i);
        if (s <= 0 || s > t * 1.001)
            continue; /* no phases, or phases not inside the step: not this model's */
        const double u = s / slots;
        const double t1 = t + ((double)m1 - (double)m) * u;
        out[(*nout)++] = t1 > 0 ? t1 : 0;
        span_sum += s;
        t_sum += t;
        n_span++;
    }
    if (n_span * 2 < n_steps || n_span < 2) {
        *nout = 0;
        snprintf(wo->note, sizeof wo->note, "no forward/backward phases in %zu of %zu held "
                 "steps: the microbatch what-if needs them (not modelled)", n_steps - n_span,
                 n_steps);
        return 0;
    }
    snprintf(wo->note, sizeof wo->note, "1F1B over %u stage%s: %u -> %u microbatches of the "
             "same size (global batch x %.3g); pipelined %.1f %% of the step, bubble share "
             "%.1f %% -> %.1f %%; host gap, optimizer, DP communication unchanged; same planned "
             "steps", p, p > 1 ? "s" : "", m, m1, (double)m1 / m,
             t_sum > 0 ? 100 * span_sum / t_sum : 0, 100.0 * (p - 1) / slots,
             100.0 * (p - 1) / ((double)m1 + p - 1));
    return 0;
}
