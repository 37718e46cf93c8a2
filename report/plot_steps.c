/* plot_steps.c — steptime.svg (report/plots.h): the job's step time over the held steps,
 * median and max across ranks as a band, anomalies as shaded spans with their number,
 * change points and periodic events marked, the result's median as a reference line.
 * Steps past AN_PLOT_MAX_POINTS are bucketed (the bucket's mean median, its largest max).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/stats.h"
#include "report/plots.h"
#include "report/svgplot.h"

#define W 900
#define H 360
#define MAX_SPANS 64

/* Kind colours of the anomaly spans (by enum argus_anomaly_kind). */
static const char *kind_fill(int k)
{
    static const char *const c[] = {"#d62728", "#9467bd", "#8c564b", "#e377c2",
                                    "#ff7f0e", "#bcbd22", "#17becf", "#7f7f7f"};
    return k >= 0 && k < (int)(sizeof c / sizeof c[0]) ? c[k] : "#7f7f7f";
}

static void spans(FILE *f, const struct svp_frame *fr, const struct argus_result *r)
{
    fputs("<g class=\"anomaly-spans\">\n", f);
    for (size_t i = 0; i < r->n_anomalies && i < MAX_SPANS; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        const double x0 = svp_x(fr, (double)a->step_first - 0.5);
        double x1 = svp_x(fr, (double)a->step_last + 0.5);
        x1 = x1 - x0 < 2 ? x0 + 2 : x1;
        const char *kn = argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind);
        fprintf(f, "<g class=\"anomaly-span\" data-anomaly=\"%d\" data-kind=\"%s\" "
                   "data-step-start=\"%llu\" data-step-end=\"%llu\"><rect x=\"%.1f\" "
                   "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.14\" "
                   "stroke=\"%s\" stroke-opacity=\"0.5\"><title>anomaly %d: %s, steps "
                   "%llu-%llu</title></rect><text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\" "
                   "fill=\"%s\">%d</text></g>\n",
                a->id, kn, (unsigned long long)a->step_first, (unsigned long long)a->step_last,
                x0, fr->y0, x1 - x0, fr->h, kind_fill(a->kind), kind_fill(a->kind), a->id, kn,
                (unsigned long long)a->step_first, (unsigned long long)a->step_last, x0 + 2,
                fr->y0 + 11 + 11.0 * (double)(i % 3), kind_fill(a->kind), a->id);
    }
    fputs("</g>\n<g class=\"events\">\n", f);
    for (size_t i = 0; i < r->n_anomalies && i < MAX_SPANS; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        if (a->kind == ARGUS_AK_STEP_REGRESSION) {
            const double x = svp_x(fr, (double)a->step_first - 0.5);
            fprintf(f, "<line class=\"change-point\" data-anomaly=\"%d\" data-step=\"%llu\" "
                       "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>change point at "
                       "step %llu (anomaly %d)</title></line>\n",
                    a->id, (unsigned long long)a->step_first, x, fr->y0, x, fr->y0 + fr->h,
                    (unsigned long long)a->step_first, a->id);
        }
        if (a->kind != ARGUS_AK_ITERATION_JITTER)
            continue;
        for (uint32_t k = 0; k < a->n_hits && k < ARGUS_ANOMALY_MAX_HITS; k++) {
            const double x = svp_x(fr, (double)a->hits[k]), y = fr->y0 + fr->h;
            fprintf(f, "<path class=\"event\" data-anomaly=\"%d\" data-step=\"%llu\" "
                       "data-periodic=\"%u\" d=\"M%.1f %.1fl-4 8h8z\" fill=\"#bcbd22\" "
                       "stroke=\"#555\"><title>step %llu: %s event (anomaly %d)</title>"
                       "</path>\n",
                    a->id, (unsigned long long)a->hits[k], a->period_steps, x, y - 8,
                    (unsigned long long)a->hits[k], a->period_steps ? "periodic" : "spike",
                    a->id);
        }
    }
    fputs("</g>\n", f);
}

int an_plot_steps(FILE *f, struct an_ctx *c, const struct argus_result *r)
{
    const size_t S = c->S, B = S < AN_PLOT_MAX_POINTS ? S : AN_PLOT_MAX_POINTS;
    double *med = malloc((B ? B : 1) * sizeof *med), *mx = malloc((B ? B : 1) * sizeof *mx);
    double *xs = malloc((B ? B : 1) * sizeof *xs);
    if (!med || !mx || !xs) {
        free(med);
        free(mx);
        free(xs);
        return -ENOMEM;
    }
    double top = 0;
    for (size_t b = 0; b < B; b++) {
        const size_t s0 = b * S / B, s1 = (b + 1) * S / B;
        double msum = 0, mmax = NAN;
        size_t nm = 0;
        for (size_t si = s0; si < s1; si++) {
            size_t m = 0;
            for (uint32_t q = 0; q < c->n; q++) {
                const double w = c->vwall[(size_t)q * S + si];
                if (!isnan(w))
                    c->tmp1[m++] = w;
            }
            if (!m)
                continue;
            double hi = c->tmp1[0];
            for (size_t j = 1; j < m; j++)
                hi = c->tmp1[j] > hi ? c->tmp1[j] : hi;
            msum += argus_stats_median(c->tmp1, m);
            nm++;
            mmax = isnan(mmax) || hi > mmax ? hi : mmax;
        }
        xs[b] = (double)(c->step_id[s0] + c->step_id[s1 - 1]) / 2;
        med[b] = nm ? msum / (double)nm / 1e6 : NAN;
        mx[b] = isnan(mmax) ? NAN : mmax / 1e6;
        top = !isnan(mx[b]) && mx[b] > top ? mx[b] : top;
    }
    struct svp_frame fr = {.x0 = 70, .y0 = 44, .w = W - 70 - 20, .h = H - 44 - 64};
    fr.xlo = S ? (double)c->step_id[0] - 0.5 : 0;
    fr.xhi = S ? (double)c->step_id[S - 1] + 0.5 : 1;
    double lo = 0, hi = top > 0 ? top * 1.08 : 1, st;
    svp_nice(&lo, &hi, 5, &st);
    fr.ylo = lo;
    fr.yhi = hi;
    char data[256];
    snprintf(data, sizeof data, "data-steps=\"%zu\" data-points=\"%zu\" data-median-ms=\"%.3f\" "
             "data-frame=\"%g %g %g %g %.1f %.1f %g %g\"", S, B, r->steps.median_ms, fr.x0,
             fr.y0, fr.w, fr.h, fr.xlo, fr.xhi, fr.ylo, fr.yhi);
    svp_open(f, W, H, "argus-plot steptime", data,
             "Step time over the run: median and max across ranks");
    svp_axes(f, &fr, "step", "step time (ms)", 1);
    spans(f, &fr, r);
    /* the band: max forward, median back */
    fputs("<path class=\"band\" fill=\"#1f77b4\" fill-opacity=\"0.18\" stroke=\"none\" d=\"", f);
    int pen = 0;
    for (size_t b = 0; b < B; b++)
        if (!isnan(mx[b])) {
            fprintf(f, "%c%.1f %.1f", pen ? 'L' : 'M', svp_x(&fr, xs[b]), svp_y(&fr, mx[b]));
            pen = 1;
        }
    for (size_t b = B; b-- > 0;)
        if (!isnan(med[b]) && pen)
            fprintf(f, "L%.1f %.1f", svp_x(&fr, xs[b]), svp_y(&fr, med[b]));
    fputs(pen ? "Z\"/>\n" : "\"/>\n", f);
    const double *ser[2] = {mx, med};
    const char *name[2] = {"max", "median"}, *col[2] = {"#ff7f0e", "#1f77b4"};
    for (int k = 0; k < 2; k++) {
        fprintf(f, "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
                   "stroke-width=\"1.4\" points=\"", name[k], col[k]);
        for (size_t b = 0; b < B; b++)
            if (!isnan(ser[k][b]))
                fprintf(f, "%.1f,%.1f ", svp_x(&fr, xs[b]), svp_y(&fr, ser[k][b]));
        fputs("\"/>\n", f);
    }
    if (r->steps.median_ms > 0) {
        const double y = svp_y(&fr, r->steps.median_ms);
        fprintf(f, "<line class=\"reference\" data-value=\"%.3f\" x1=\"%.1f\" y1=\"%.1f\" "
                   "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" stroke-dasharray=\"2 3\"><title>job "
                   "median step %.3f ms</title></line>\n",
                r->steps.median_ms, fr.x0, y, fr.x0 + fr.w, y, r->steps.median_ms);
    }
    const double ly = H - 8;
    svp_legend(f, 70, ly, "none", "#1f77b4", "median across ranks");
    svp_legend(f, 200, ly, "none", "#ff7f0e", "max across ranks (job step)");
    svp_legend(f, 370, ly, "#1f77b4", "none", "band: median to max");
    svp_legend(f, 500, ly, "#d62728", "#d62728", "anomaly (number)");
    svp_legend(f, 620, ly, "none", "#000", "change point (dashed)");
    svp_legend(f, 760, ly, "#bcbd22", "#555", "spike / periodic event");
    svp_close(f);
    free(med);
    free(mx);
    free(xs);
    return 0;
}
