/* svgplot.h — a small SVG writer for the report's plots (report/plot_*.c, report/svg.c):
 * a document with a title, a plot frame mapping data to pixels, axes with "nice" ticks,
 * units and labels, legend swatches, and the one colour scale every ratio map uses
 * (×peer median, diverging around a neutral band). Everything is written to a FILE*
 * (a memstream) as standalone SVG 1.1 (an XML declaration, then <svg xmlns=...>); the
 * HTML page inlines the same text after its first line. No ids are emitted, so that many
 * pictures can share one page. Stateless; numbers are printed with a C locale's dot.
 */
#ifndef ARGUS_REPORT_SVGPLOT_H
#define ARGUS_REPORT_SVGPLOT_H

#include <stddef.h>
#include <stdio.h>

/* The colour scale of ratio maps: a cell within [1/(1+SVP_NEUTRAL), 1+SVP_NEUTRAL] of its
 * peer median is neutral (SVP_NEUTRAL_FILL); above it reddens, below it bluens, saturating
 * at SVP_SATURATE (and its inverse). */
#define SVP_NEUTRAL 0.05
#define SVP_SATURATE 1.5
#define SVP_NEUTRAL_FILL "#f4f4f4"
#define SVP_NODATA_FILL "#cccccc"

/* A plot area: pixels [x0, x0 + w] x [y0, y0 + h] (y grows down) showing data
 * [xlo, xhi] x [ylo, yhi]. */
struct svp_frame {
    double x0, y0, w, h;
    double xlo, xhi, ylo, yhi;
};

/* XML-escaped text of s (control characters dropped). */
void svp_text(FILE *f, const char *s);
/* <?xml?> and <svg> of w x h pixels with a <title> and a visible title line; cls is the
 * root's class attribute (e.g. "argus-plot steptime"), data (may be NULL) more
 * attributes, written as is (the caller escapes). */
void svp_open(FILE *f, int w, int h, const char *cls, const char *data, const char *title);
void svp_close(FILE *f);
/* Data to pixels (clamped to the frame). */
double svp_x(const struct svp_frame *fr, double x);
double svp_y(const struct svp_frame *fr, double y);
/* Widen [lo, hi] to nice tick bounds (step *step); returns the tick count. */
int svp_nice(double *lo, double *hi, int want, double *step);
/* Axis lines, ticks with values and the axis labels (with units) of the frame; grid
 * lines across when grid is set. xlabel/ylabel may be NULL (no ticks on that axis). */
void svp_axes(FILE *f, const struct svp_frame *fr, const char *xlabel, const char *ylabel,
              int grid);
/* One legend entry: a swatch (fill, stroke; "none" allowed) and its label at (x, y). */
void svp_legend(FILE *f, double x, double y, const char *fill, const char *stroke,
                const char *label);
/* The fill of ratio (value / peer median), "#rrggbb"; NaN: SVP_NODATA_FILL. */
void svp_ratio_fill(double ratio, char *buf, size_t len);
/* "neutral", "above" or "below" (or "none" for NaN): where ratio falls on the scale. */
const char *svp_ratio_band(double ratio);
/* The colour scale as a legend at (x, y), w pixels wide: class "colour-scale" with
 * data-neutral-lo / data-neutral-hi / data-min / data-max, ticks labelled "×0.67".."×1.5". */
void svp_ratio_scale(FILE *f, double x, double y, double w);

#endif /* ARGUS_REPORT_SVGPLOT_H */
