/* svgplot.c — the SVG primitives of the report's plots (report/svgplot.h): document,
 * frame mapping, nice ticks, axes, legend entries and the ×peer-median colour scale.
 */
#include "report/svgplot.h"

#include <math.h>
#include <stdio.h>

void svp_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
    }
}

void svp_open(FILE *f, int w, int h, const char *cls, const char *data, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
               "font-size=\"10\"%s%s>\n<title>",
            cls, w, h, w, h, data ? " " : "", data ? data : "");
    svp_text(f, title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
          "<text x=\"4\" y=\"14\" font-size=\"12\" font-weight=\"bold\">", f);
    svp_text(f, title);
    fputs("</text>\n", f);
}

void svp_close(FILE *f)
{
    fputs("</svg>\n", f);
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double svp_x(const struct svp_frame *fr, double x)
{
    const double span = fr->xhi - fr->xlo;
    const double t = span > 0 ? (x - fr->xlo) / span : 0.5;
    return fr->x0 + fr->w * clampd(t, 0, 1);
}

double svp_y(const struct svp_frame *fr, double y)
{
    const double span = fr->yhi - fr->ylo;
    const double t = span > 0 ? (y - fr->ylo) / span : 0.5;
    return fr->y0 + fr->h * (1 - clampd(t, 0, 1));
}

int svp_nice(double *lo, double *hi, int want, double *step)
{
    if (!isfinite(*lo) || !isfinite(*hi)) {
        *lo = 0;
        *hi = 1;
    }
    if (*hi <= *lo)
        *hi = *lo + (*lo != 0 ? fabs(*lo) * 0.1 : 1);
    if (want < 2)
        want = 2;
    const double raw = (*hi - *lo) / want, mag = pow(10, floor(log10(raw)));
    const double r = raw / mag;
    const double s = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
    *lo = floor(*lo / s) * s;
    *hi = ceil(*hi / s) * s;
    *step = s;
    return (int)lround((*hi - *lo) / s) + 1;
}

void svp_axes(FILE *f, const struct svp_frame *fr, const char *xlabel, const char *ylabel,
              int grid)
{
    const double xb = fr->x0, yb = fr->y0 + fr->h;
    fprintf(f, "<g class=\"axes\" stroke=\"#333\" fill=\"none\"><line x1=\"%.1f\" y1=\"%.1f\" "
               "x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
               "y2=\"%.1f\"/></g>\n",
            xb, yb, xb + fr->w, yb, xb, fr->y0, xb, yb);
    if (ylabel) {
        double lo = fr->ylo, hi = fr->yhi, st;
        int n = svp_nice(&lo, &hi, 5, &st);
        for (int i = 0; i < n && n < 64; i++) {
            const double v = lo + i * st;
            if (v < fr->ylo - st * 1e-9 || v > fr->yhi + st * 1e-9)
                continue;
            const double y = svp_y(fr, v);
            if (grid)
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#e4e4e4\"/>\n", xb, y, xb + fr->w, y);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                    xb - 4, y, xb, y, xb - 6, y + 3, v);
        }
        fprintf(f, "<text class=\"ylabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                   "transform=\"rotate(-90 %.1f %.1f)\">",
                xb - 44, fr->y0 + fr->h / 2, xb - 44, fr->y0 + fr->h / 2);
        svp_text(f, ylabel);
        fputs("</text>\n", f);
    }
    if (xlabel) {
        double lo = fr->xlo, hi = fr->xhi, st;
        int n = svp_nice(&lo, &hi, 8, &st);
        for (int i = 0; i < n && n < 64; i++) {
            const double v = lo + i * st;
            if (v < fr->xlo - st * 1e-9 || v > fr->xhi + st * 1e-9)
                continue;
            const double x = svp_x(fr, v);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                    x, yb, x, yb + 4, x, yb + 15, v);
        }
        fprintf(f, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                fr->x0 + fr->w / 2, yb + 30);
        svp_text(f, xlabel);
        fputs("</text>\n", f);
    }
}

void svp_legend(FILE *f, double x, double y, const char *fill, const char *stroke,
                const char *label)
{
    fprintf(f, "<g class=\"legend-item\"><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" "
               "fill=\"%s\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">",
            x, y - 9, fill, stroke, x + 16, y);
    svp_text(f, label);
    fputs("</text></g>\n", f);
}

const char *svp_ratio_band(double ratio)
{
    if (isnan(ratio))
        return "none";
    if (ratio > 1 + SVP_NEUTRAL)
        return "above";
    if (ratio < 1 / (1 + SVP_NEUTRAL))
        return "below";
    return "neutral";
}

void svp_ratio_fill(double ratio, char *buf, size_t len)
{
    if (isnan(ratio) || ratio <= 0) {
        snprintf(buf, len, "%s", isnan(ratio) ? SVP_NODATA_FILL : "#2c5aa0");
        return;
    }
    const double l = log(ratio), n = log1p(SVP_NEUTRAL), s = log(SVP_SATURATE);
    if (fabs(l) <= n) {
        snprintf(buf, len, "%s", SVP_NEUTRAL_FILL);
        return;
    }
    /* past the band: from a light tint (visibly not neutral) to full saturation */
    const double t = 0.25 + 0.75 * clampd((fabs(l) - n) / (s - n), 0, 1);
    int r, g, b;
    if (l > 0) {
        r = (int)lround(255 - 75 * t);
        g = b = (int)lround(235 * (1 - t));
    } else {
        r = (int)lround(235 * (1 - 0.85 * t));
        g = (int)lround(235 * (1 - 0.55 * t));
        b = 255 - (int)lround(40 * t);
    }
    snprintf(buf, len, "#%02x%02x%02x", r, g, b);
}

void svp_ratio_scale(FILE *f, double x, double y, double w)
{
    const double lo = 1 / SVP_SATURATE, hi = SVP_SATURATE, L = log(lo), H = log(hi);
    const int n = 48;
    fprintf(f, "<g class=\"colour-scale\" data-neutral-lo=\"%.4f\" data-neutral-hi=\"%.4f\" "
               "data-min=\"%.4f\" data-max=\"%.4f\" data-neutral-fill=\"%s\">\n",
            1 / (1 + SVP_NEUTRAL), 1 + SVP_NEUTRAL, lo, hi, SVP_NEUTRAL_FILL);
    for (int i = 0; i < n; i++) {
        char c[16];
        svp_ratio_fill(exp(L + (H - L) * (i + 0.5) / n), c, sizeof c);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"10\" fill=\"%s\"/>",
                x + w * i / n, y, w / n + 0.3, c);
    }
    const double ticks[] = {1 / SVP_SATURATE, 1 / (1 + SVP_NEUTRAL), 1, 1 + SVP_NEUTRAL,
                            SVP_SATURATE};
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        const double px = x + w * (log(ticks[i]) - L) / (H - L);
        fprintf(f, "\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>",
                px, y + 10, px, y + 13);
        if (i % 2 == 0) /* the band's edges are ticks only: too close to label */
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"8\">"
                       "\xc3\x97%.2f</text>", px, y + 22, ticks[i]);
    }
    fprintf(f, "\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" fill=\"none\" "
               "stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\">\xc3\x97 peer median "
               "(neutral band \xc2\xb1%g %%)</text></g>\n",
            x, y, w, x + w + 6, y + 9, 100 * SVP_NEUTRAL);
}
