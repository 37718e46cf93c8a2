/* plots.h — the report's plots beyond the rank grids (internal to report/), each one
 * standalone SVG text written to f (report/svgplot.h), drawn from the analysis context of
 * the job store (analysis/context.h) and the result, never deciding anything:
 *   an_plot_steps      steptime.svg: the job's step time over the held steps, median and
 *                      max across ranks as a band, the result's anomalies as shaded spans
 *                      labelled with their number, change points (step_regression) and
 *                      periodic events (iteration_jitter affected steps) marked, the
 *                      result's median step time as a reference line;
 *   an_plot_breakdown  breakdown.svg (phases 0): each rank's mean step split into compute,
 *                      communication not hidden by compute, other GPU work, host gap and
 *                      unattributed time as stacked bars, the rank's median step time
 *                      (the result's) as a tick; phases.svg (phases 1): the same bars of
 *                      the marked phases' wall time. Sources and victims are marked;
 *   an_plot_forecast   forecast.svg: elapsed time, then the fan of the forecast's
 *                      remaining time (P10-P90, P90-P99, P50) to the planned steps.
 * Bounded: at most AN_PLOT_MAX_POINTS points per line (steps bucketed), AN_PLOT_MAX_BARS
 * bars (sources and victims always among them), 64 anomaly spans. Every element a test
 * reads carries data-* attributes (docs/REPORT_SCHEMA.md, "report.html").
 */
#ifndef ARGUS_REPORT_PLOTS_H
#define ARGUS_REPORT_PLOTS_H

#include <stdio.h>

#include "analysis/context.h"
#include "forecast/forecast.h"

#define AN_PLOT_MAX_POINTS 1200
#define AN_PLOT_MAX_BARS 256

/* 0, or -ENOMEM (f then holds a partial picture). */
int an_plot_steps(FILE *f, struct an_ctx *c, const struct argus_result *r);
/* 1 drawn, 0 nothing to draw (no phase was marked, phases 1), -ENOMEM. */
int an_plot_breakdown(FILE *f, struct an_ctx *c, const struct argus_result *r, int phases);
void an_plot_forecast(FILE *f, const struct argus_forecast *fc);

#endif /* ARGUS_REPORT_PLOTS_H */
