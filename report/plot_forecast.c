/* plot_forecast.c — forecast.svg (report/plots.h): the forecast's fan chart. x: steps,
 * from 0 to the planned total (the next 1,000 when the plan is unknown); y: wall time.
 * The elapsed part is the line from 0 to (steps done, elapsed time); from there the fan
 * opens to the remaining time's quantiles at the planned total: P10-P90 darker, P90-P99
 * lighter, P50 as a line; each quantile labelled at the end with its value.
 */
#include <stdio.h>

#include "report/plots.h"
#include "report/svgplot.h"

#define W 760
#define H 340

void an_plot_forecast(FILE *f, const struct argus_forecast *fc)
{
    const double done = (double)fc->steps_done, total = (double)fc->steps_total;
    const double e = fc->elapsed_s;
    const double q[4] = {fc->remaining_s.p10, fc->remaining_s.p50, fc->remaining_s.p90,
                         fc->remaining_s.p99};
    const double top_s = e + fc->remaining_s.p99;
    const double div = top_s >= 7200 ? 3600 : top_s >= 120 ? 60 : 1;
    const char *unit = div == 3600 ? "h" : div == 60 ? "min" : "s";
    struct svp_frame fr = {.x0 = 70, .y0 = 44, .w = W - 70 - 110, .h = H - 44 - 64};
    double lo = 0, hi = total > done ? total : done + 1, st;
    svp_nice(&lo, &hi, 8, &st);
    fr.xlo = 0;
    fr.xhi = total > done ? total : done + 1;
    lo = 0;
    hi = top_s / div * 1.05;
    svp_nice(&lo, &hi, 5, &st);
    fr.ylo = lo;
    fr.yhi = hi;
    char data[256], ylab[48];
    snprintf(data, sizeof data,
             "data-steps-done=\"%llu\" data-steps-total=\"%llu\" data-elapsed-s=\"%.3f\" "
             "data-p10-s=\"%.3f\" data-p50-s=\"%.3f\" data-p90-s=\"%.3f\" data-p99-s=\"%.3f\"",
             (unsigned long long)fc->steps_done, (unsigned long long)fc->steps_total, e, q[0],
             q[1], q[2], q[3]);
    svp_open(f, W, H, "argus-plot forecast", data,
             fc->per_1000 ? "Forecast: wall time of the next 1,000 steps (plan unknown)"
                          : "Forecast: wall time to the planned steps");
    snprintf(ylab, sizeof ylab, "wall time (%s)", unit);
    svp_axes(f, &fr, "step", ylab, 1);
    const double x0 = svp_x(&fr, done), y0 = svp_y(&fr, e / div), x1 = svp_x(&fr, total);
    fprintf(f, "<path class=\"fan\" data-from=\"p90\" data-to=\"p99\" d=\"M%.1f %.1fL%.1f "
               "%.1fL%.1f %.1fZ\" fill=\"#ff7f0e\" fill-opacity=\"0.18\"/>\n",
            x0, y0, x1, svp_y(&fr, (e + q[2]) / div), x1, svp_y(&fr, (e + q[3]) / div));
    fprintf(f, "<path class=\"fan\" data-from=\"p10\" data-to=\"p90\" d=\"M%.1f %.1fL%.1f "
               "%.1fL%.1f %.1fZ\" fill=\"#ff7f0e\" fill-opacity=\"0.4\"/>\n",
            x0, y0, x1, svp_y(&fr, (e + q[0]) / div), x1, svp_y(&fr, (e + q[2]) / div));
    fprintf(f, "<line class=\"p50\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#d62728\" stroke-width=\"1.5\"/>\n",
            x0, y0, x1, svp_y(&fr, (e + q[1]) / div));
    fprintf(f, "<line class=\"elapsed\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#1f77b4\" stroke-width=\"2\"><title>%llu steps done in %.1f %s"
               "</title></line>\n",
            svp_x(&fr, 0), svp_y(&fr, 0), x0, y0, (unsigned long long)fc->steps_done,
            e / div, unit);
    static const char *const qn[] = {"P10", "P50", "P90", "P99"};
    for (int i = 0; i < 4; i++)
        fprintf(f, "<text class=\"quantile\" data-q=\"%s\" data-remaining-s=\"%.3f\" "
                   "x=\"%.1f\" y=\"%.1f\" font-size=\"9\">%s %.2f %s</text>\n",
                qn[i], q[i], x1 + 4, svp_y(&fr, (e + q[i]) / div) + 3 + (i == 3 ? -4 : 0),
                qn[i], (e + q[i]) / div, unit);
    const double ly = H - 8;
    svp_legend(f, 70, ly, "none", "#1f77b4", "elapsed");
    svp_legend(f, 150, ly, "none", "#d62728", "P50");
    svp_legend(f, 210, ly, "#ff7f0e", "none", "P10-P90");
    svp_legend(f, 300, ly, "#fbd5b5", "none", "P90-P99");
    svp_close(f);
}
