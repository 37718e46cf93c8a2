/* html.h — the parts of report.html (report/html.c, report/html_kernels.c; internal to
 * report/). The page itself is an_write_html (report_int.h): one self-contained file,
 * inline CSS and the very SVG text of the pictures written beside it (an_svg_set), no
 * script and nothing fetched, so it opens from a shared filesystem in any browser.
 */
#ifndef ARGUS_REPORT_HTML_H
#define ARGUS_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/context.h"
#include "report/report_int.h"

/* HTML-escaped text (control characters dropped). */
void an_html_text(FILE *f, const char *s);
/* A number with prec decimals, "&ndash;" for NaN. */
void an_html_num(FILE *f, double v, int prec);
/* Median over the step indices [sa, sb] of slot q's time in kernel h per step (ns, all
 * its modes) and its mean call count per step (*calls); NAN when no kernel-level cell
 * (an_kcell) is held there. Uses c->tmp1. */
double an_rank_kernel_ns(const struct an_ctx *c, uint32_t q, uint64_t h, size_t sa, size_t sb,
                         double *calls);
/* The kernel table of a_slots (an anomaly whose ranks are the context's slots) over the
 * step indices [sa, sb]: 1 written, 0 nothing to show (no kernels, no sources), -ENOMEM. */
int an_html_kernel_table(FILE *f, struct an_ctx *c, const struct argus_jobstore *js,
                         const struct argus_anomaly *a_slots, size_t sa, size_t sb);

#endif /* ARGUS_REPORT_HTML_H */
