/* plot_ranks.c — breakdown.svg and phases.svg (report/plots.h): per-rank stacked bars of
 * where the mean step goes. breakdown: each held step's wall split into compute (at most
 * the GPU's busy time), communication not hidden by compute (at most the rest of the busy
 * time), other GPU work (memcpy, memset), host gap (GPU idle) and, below the data level
 * that splits it, unattributed; the parts of a step sum to its wall, so each bar is the
 * rank's mean step. phases: the marked phases' wall time (forward, backward, optimizer,
 * other). The result's median step time of each rank is a tick on its bar; sources and
 * victims of any anomaly are marked under it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/plots.h"
#include "report/svgplot.h"

#define H 380
#define NSEG 5

struct seg {
    const char *name, *label, *fill;
};
static const struct seg SEG[2][NSEG] = {
    {{"compute", "compute", "#4c78a8"},
     {"comm", "communication not hidden by compute", "#f58518"},
     {"other_gpu", "other GPU work (memcpy, memset)", "#72b7b2"},
     {"host_gap", "host gap (GPU idle)", "#e45756"},
     {"unattributed", "unattributed (no kernel data)", "#bab0ac"}},
    {{"forward", "forward", "#4c78a8"},
     {"backward", "backward", "#54a24b"},
     {"optimizer", "optimizer", "#b279a2"},
     {"other", "other marked ranges", "#9d755d"},
     {"", "", "none"}},
};

/* Adds one step's parts (ns) of slot q at si into acc[NSEG]; 0 when the step is not held. */
static int step_parts(const struct an_ctx *c, uint32_t q, size_t si, int phases, double *acc)
{
    const size_t at = (size_t)q * c->S + si;
    const double w = c->vwall[at];
    if (isnan(w))
        return 0;
    if (phases) {
        const struct argus_step_summary *s = an_cell(c, q, si);
        if (!s)
            return 0;
        acc[0] += (double)s->phase_wall_ns[ARGUS_PH_FORWARD];
        acc[1] += (double)s->phase_wall_ns[ARGUS_PH_BACKWARD];
        acc[2] += (double)s->phase_wall_ns[ARGUS_PH_OPTIMIZER];
        acc[3] += (double)s->phase_wall_ns[ARGUS_PH_OTHER];
        return 1;
    }
    const double h = c->vhost[at];
    if (isnan(h)) {
        acc[4] += w;
        return 1;
    }
    const double gap = h < w ? h : w, busy = w - gap, comp = c->vcomp[at];
    acc[3] += gap;
    if (isnan(comp)) {
        acc[4] += busy;
        return 1;
    }
    const double cs = comp < busy ? comp : busy, comm = c->vcomm[at];
    const double cm = isnan(comm) ? 0 : comm < busy - cs ? comm : busy - cs;
    acc[0] += cs;
    acc[1] += cm;
    acc[2] += busy - cs - cm;
    return 1;
}

/* role[q]: 1 source, 2 victim (of any anomaly), 0 neither. */
static void roles(const struct an_ctx *c, const struct argus_result *r, uint8_t *role)
{
    memset(role, 0, c->n);
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        for (uint32_t k = 0; k < a->n_victims; k++) {
            const long s = an_slot_of(c, a->victims[k]);
            if (s >= 0 && !role[s])
                role[s] = 2;
        }
        for (uint32_t k = 0; k < a->n_ranks; k++) {
            const long s = an_slot_of(c, a->ranks[k]);
            if (s >= 0)
                role[s] = 1;
        }
    }
}

static double median_ms_of(const struct argus_result *r, uint32_t rank)
{
    size_t lo = 0, hi = r->n_ranks;
    while (lo < hi) { /* rows ascend by rank id */
        const size_t mid = lo + (hi - lo) / 2;
        if (r->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_ranks && r->ranks[lo].rank == rank ? r->ranks[lo].median_step_ms : NAN;
}

int an_plot_breakdown(FILE *f, struct an_ctx *c, const struct argus_result *r, int phases)
{
    const uint32_t n = c->n;
    double *mean = calloc((size_t)(n ? n : 1) * NSEG, sizeof *mean);
    uint8_t *role = malloc(n ? n : 1), *keep = calloc(n ? n : 1, 1);
    int rc = 0;
    if (!mean || !role || !keep) {
        rc = -ENOMEM;
        goto out;
    }
    double top = 0, any = 0;
    for (uint32_t q = 0; q < n; q++) {
        size_t m = 0;
        for (size_t si = 0; si < c->S; si++)
            m += (size_t)step_parts(c, q, si, phases, mean + (size_t)q * NSEG);
        double sum = 0;
        for (int k = 0; k < NSEG; k++) {
            mean[(size_t)q * NSEG + k] = m ? mean[(size_t)q * NSEG + k] / (double)m / 1e6 : 0;
            sum += mean[(size_t)q * NSEG + k];
        }
        const double md = median_ms_of(r, c->rank_of[q]);
        top = sum > top ? sum : top;
        top = !phases && md > top ? md : top;
        any += sum;
    }
    if (phases && !(any > 0))
        goto out; /* no phase was marked: no phases.svg */
    roles(c, r, role);
    /* the bars shown: every source and victim, then evenly spaced others */
    uint32_t shown = 0;
    for (uint32_t q = 0; q < n && shown < AN_PLOT_MAX_BARS; q++)
        if (role[q]) {
            keep[q] = 1;
            shown++;
        }
    const uint32_t room = AN_PLOT_MAX_BARS - shown, rest = n - shown;
    for (uint32_t q = 0, seen = 0, took = 0; q < n && took < room; q++) {
        if (keep[q])
            continue;
        if ((uint64_t)seen * room / (rest ? rest : 1) >= took) {
            keep[q] = 1;
            took++;
            shown++;
        }
        seen++;
    }
    const double bw = shown > 64 ? 4 : shown > 24 ? 10 : 22;
    const int w = (int)(70 + 20 + bw * 1.4 * shown) < 700 ? 700 : (int)(70 + 20 + bw * 1.4 * shown);
    struct svp_frame fr = {.x0 = 70, .y0 = 44, .w = w - 90, .h = H - 44 - 96};
    double lo = 0, hi = top > 0 ? top * 1.05 : 1, st;
    svp_nice(&lo, &hi, 5, &st);
    fr.xlo = 0;
    fr.xhi = shown;
    fr.ylo = lo;
    fr.yhi = hi;
    char data[80];
    snprintf(data, sizeof data, "data-ranks=\"%u\" data-shown=\"%u\"", n, shown);
    svp_open(f, w, H, phases ? "argus-plot phases" : "argus-plot breakdown", data,
             phases ? "Time per phase and rank (mean per step)"
                    : "Where each rank's step time goes (mean per step)");
    svp_axes(f, &fr, NULL, phases ? "phase wall time (ms)" : "time per step (ms)", 1);
    const double slot = fr.w / (shown ? shown : 1);
    uint32_t i = 0;
    for (uint32_t q = 0; q < n; q++) {
        if (!keep[q])
            continue;
        const double x = fr.x0 + slot * i + (slot - bw) / 2, md = median_ms_of(r, c->rank_of[q]);
        const char *rl = role[q] == 1 ? "source" : role[q] == 2 ? "victim" : "";
        fprintf(f, "<g class=\"bar\" data-rank=\"%u\" data-role=\"%s\"", c->rank_of[q], rl);
        if (!phases && !isnan(md))
            fprintf(f, " data-median-step-ms=\"%.3f\"", md);
        fputs(">", f);
        double base = 0;
        for (int k = 0; k < NSEG && SEG[phases][k].name[0]; k++) {
            const double v = mean[(size_t)q * NSEG + k];
            if (!(v > 0))
                continue;
            const double y1 = svp_y(&fr, base), y0 = svp_y(&fr, base + v);
            fprintf(f, "<rect data-part=\"%s\" data-ms=\"%.3f\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>rank %u: %s %.3f ms"
                       "</title></rect>",
                    SEG[phases][k].name, v, x, y0, bw, y1 - y0, SEG[phases][k].fill,
                    c->rank_of[q], SEG[phases][k].label, v);
            base += v;
        }
        if (!phases && !isnan(md)) {
            const double y = svp_y(&fr, md);
            fprintf(f, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#000\" stroke-width=\"2\"><title>rank %u: median step %.3f ms"
                       "</title></line>",
                    x - 2, y, x + bw + 2, y, c->rank_of[q], md);
        }
        if (role[q])
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\" "
                       "fill=\"%s\">%s</text>",
                    x + bw / 2, fr.y0 + fr.h + 24, role[q] == 1 ? "#d62728" : "#555",
                    role[q] == 1 ? "S" : "V");
        if (shown <= 64 || i % 8 == 0)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"8\">%u"
                       "</text>", x + bw / 2, fr.y0 + fr.h + 12, c->rank_of[q]);
        fputs("</g>\n", f);
        i++;
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">rank%s (S: source of an "
               "anomaly, V: victim)</text>\n",
            fr.x0 + fr.w / 2, fr.y0 + fr.h + 40,
            shown < n ? "s shown: every source and victim, others evenly spaced" : "");
    double lx = 70, ly = H - 30;
    for (int k = 0; k < NSEG && SEG[phases][k].name[0]; k++) {
        svp_legend(f, lx, ly, SEG[phases][k].fill, "none", SEG[phases][k].label);
        lx += 30 + 5.5 * (double)strlen(SEG[phases][k].label);
        if (lx > w - 160) {
            lx = 70;
            ly += 14;
        }
    }
    if (!phases)
        svp_legend(f, lx, ly, "#000", "#000", "median step time (tick)");
    svp_close(f);
    rc = 1;
out:
    free(mean);
    free(role);
    free(keep);
    return rc;
}
