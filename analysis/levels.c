/* levels.c — which of the three levels of data each cell holds (docs/ALGORITHMS.md, "Data
 * levels"): kernels (it counted GPU kernels: live CUPTI, Kineto), phases (no kernels, but
 * marked phases: argus.h or Python marks without CUPTI, phase-only imports) or steps (a
 * step time only: steps CSV, trainer logs). Below the kernel level a cell's compute is
 * unknown (NAN, never 0), and its host time is what the phases leave out (the step's time
 * outside every marked phase): with no kernels the GPU idle time would be the whole step.
 * The job's level is the lowest of its ranks' usual levels: a verdict rests on what every
 * rank has.
 */
#include "analysis/internal.h"

#include <math.h>

/* Phases a program marks (at the phase level [COMM] holds the marked communication
 * ranges, tracer/stepsum.c; [HOST] is GPU idle time, never a mark). */
static const enum argus_phase marked[] = { ARGUS_PH_FORWARD, ARGUS_PH_BACKWARD,
                                           ARGUS_PH_OPTIMIZER, ARGUS_PH_COMM, ARGUS_PH_OTHER };

int an_cell_level(uint64_t kernel_count, const struct argus_step_summary *s)
{
    /* a thin cell (a condensed reduction's row) came from kernels too: its row values */
    if (kernel_count || (s->flags & ARGUS_SF_THIN) || s->busy_ns || s->compute_ns ||
        s->collective_ns || s->p2p_ns)
        return ARGUS_DL_KERNELS;
    for (size_t i = 0; i < sizeof marked / sizeof marked[0]; i++)
        if (s->phase_wall_ns[marked[i]])
            return ARGUS_DL_PHASES;
    return ARGUS_DL_STEPS;
}

double an_unphased_ns(const struct argus_step_summary *s)
{
    const double wall = an_wall(s);
    double in = 0;
    for (size_t i = 0; i < sizeof marked / sizeof marked[0]; i++)
        in += (double)s->phase_wall_ns[marked[i]];
    return wall > in ? wall - in : 0.0;
}

void an_levels_finish(struct an_ctx *c)
{
    int job = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        size_t n[4] = { 0 };
        const uint8_t *lv = c->lv + (size_t)r * c->S;
        for (size_t si = 0; si < c->S; si++)
            n[lv[si] < 4 ? lv[si] : 0]++;
        int best = 0;
        for (int l = 1; l < 4; l++)
            if (n[l] > (best ? n[best] : 0))
                best = l;
        if (best && (!job || best < job))
            job = best;
    }
    c->level = job;
}
