/* svg.c — the pictures of a report, as standalone SVG files embedded in report.md:
 *   heatmap.svg        per-rank median compute time over the whole run, rank grid with
 *                      one row per DP replica and one column per (PP stage, TP index);
 *   heatmap-<id>.svg   per anomaly with source ranks: each rank's time in the anomaly's
 *                      window (compute, host gap or communication by kind) over its peer
 *                      class's median — the sources stand out, victims do not;
 *   w1-<id>.svg        per comm_degradation anomaly: the W1 matrix of the flagged group and
 *                      its peer groups over the anomaly's main collective (block structure).
 * Bounded: grids are cut at SVG_MAX_ROWS x SVG_MAX_COLS cells, at most AN_SVG_MAX anomalies
 * get pictures. Written to *.partial and renamed. Reads the job store and the result only.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/context.h"
#include "analysis/labels.h"
#include "analysis/stats.h"
#include "report/report_int.h"
#include "common/outdir.h"

#define SVG_MAX_ROWS 128
#define SVG_MAX_COLS 128
#define CELL 18
#define MARGIN_L 70
#define MARGIN_T 48

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n')
                fputc(*s, f);
        }
    }
}

/* Colour of t in [0,1] (white -> red), t < 0 (blue side for "below the reference"). */
static void colour(double t, char *buf, size_t len)
{
    if (isnan(t)) {
        snprintf(buf, len, "#dddddd");
        return;
    }
    if (t < -1)
        t = -1;
    if (t > 1)
        t = 1;
    int r = 255, g = 255, b = 255;
    if (t >= 0) {
        g = b = (int)lround(255 * (1 - t));
        r = (int)lround(255 - 75 * t);
    } else {
        r = g = (int)lround(255 * (1 + 0.6 * t));
    }
    snprintf(buf, len, "#%02x%02x%02x", r, g, b);
}

static void svg_open(FILE *f, int w, int h, const char *title)
{
    if (w < 600)
        w = 600; /* room for the title and legend */
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"10\">\n<title>",
            w, h, w, h);
    xml_text(f, title);
    fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"4\" "
          "y=\"14\" font-size=\"12\">",
          f);
    xml_text(f, title);
    fputs("</text>\n", f);
}

/* Grid position of slot r (analysis/context.h): row = DP replica, column = PP stage * TP
 * + TP index; without a layout by its rank id. */
static void grid_pos(const struct an_ctx *c, uint32_t r, uint32_t *row, uint32_t *col)
{
    if (c->layout_known) {
        *row = c->co[r].dp;
        *col = (uint32_t)c->co[r].pp * (uint32_t)c->lay.tp + c->co[r].tp;
    } else {
        *row = c->rank_of[r] / 32;
        *col = c->rank_of[r] % 32;
    }
}

/* Heatmap of v[slot] (NAN = no data): colour by t[slot]; a's sources (slots) outlined. */
static void heatmap(FILE *f, const struct an_ctx *c, const double *v, const double *t,
                    const char *title, const char *unit, const struct argus_anomaly *a)
{
    uint32_t rows = 1, cols = 1;
    for (uint32_t r = 0; r < c->n; r++) {
        uint32_t y, x;
        grid_pos(c, r, &y, &x);
        rows = y + 1 > rows ? y + 1 : rows;
        cols = x + 1 > cols ? x + 1 : cols;
    }
    rows = rows > SVG_MAX_ROWS ? SVG_MAX_ROWS : rows;
    cols = cols > SVG_MAX_COLS ? SVG_MAX_COLS : cols;
    const int w = MARGIN_L + (int)cols * CELL + 20, h = MARGIN_T + (int)rows * CELL + 40;
    svg_open(f, w, h, title);
    fprintf(f, "<text x=\"4\" y=\"%d\">rows: DP replica; columns: %s; cell: %s</text>\n",
            MARGIN_T - 20, c->layout_known ? "PP stage / TP index" : "rank mod 32", unit);
    for (uint32_t x = 0; x < cols && c->layout_known; x++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"7\">%u/%u</text>\n",
                MARGIN_L + (int)x * CELL + 1, MARGIN_T - 4, x / (uint32_t)c->lay.tp,
                x % (uint32_t)c->lay.tp);
    for (uint32_t y = 0; y < rows; y++)
        fprintf(f, "<text x=\"4\" y=\"%d\">%s %u</text>\n", MARGIN_T + (int)y * CELL + 13,
                c->layout_known ? "DP" : "ranks", c->layout_known ? y : y * 32);
    for (uint32_t r = 0; r < c->n; r++) {
        uint32_t y, x;
        char col[16];
        grid_pos(c, r, &y, &x);
        if (y >= rows || x >= cols)
            continue;
        int src = 0;
        for (uint32_t i = 0; a && i < a->n_ranks; i++)
            src |= a->ranks[i] == r;
        colour(t[r], col, sizeof col);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                   "stroke=\"%s\" stroke-width=\"%d\"><title>rank %u: %.3g %s</title></rect>\n",
                MARGIN_L + (int)x * CELL, MARGIN_T + (int)y * CELL, CELL - 1, CELL - 1, col,
                src ? "black" : "#999999", src ? 2 : 1, c->rank_of[r], v[r], unit);
    }
    fprintf(f, "<text x=\"4\" y=\"%d\">%s</text>\n</svg>\n", h - 10,
            a ? "outlined: source ranks; red: above the peer median, blue: below"
              : "red: slower");
}

static double v_compute(const struct argus_step_summary *s)
{
    return (double)s->compute_ns;
}
static double v_host(const struct argus_step_summary *s)
{
    return (double)s->phase_wall_ns[ARGUS_PH_HOST];
}
static double v_comm(const struct argus_step_summary *s)
{
    return (double)s->phase_wall_ns[ARGUS_PH_COMM];
}

/* Per-rank median of fn over step indices [a,b] into v (NAN when no data). */
static void rank_medians(struct an_ctx *c, size_t a, size_t b,
                         double (*fn)(const struct argus_step_summary *), double *v)
{
    for (uint32_t r = 0; r < c->n; r++) {
        size_t m = 0;
        for (size_t si = a; si <= b; si++) {
            const struct argus_step_summary *s = an_cell(c, r, si);
            if (s)
                c->tmp1[m++] = fn(s);
        }
        v[r] = m ? argus_stats_median(c->tmp1, m) : NAN;
    }
}

static void step_range(const struct an_ctx *c, const struct argus_anomaly *a, size_t *lo,
                       size_t *hi)
{
    *lo = 0;
    *hi = c->S - 1;
    for (size_t si = 0; si < c->S; si++) {
        if (c->step_id[si] <= a->step_first)
            *lo = si;
        if (c->step_id[si] <= a->step_last)
            *hi = si;
    }
}

static void w1_svg(FILE *f, const struct an_ctx *c, const struct argus_anomaly *a,
                   const char *kname, const uint32_t *reps, const uint8_t *in, size_t n,
                   const double *M)
{
    double mx = 0, intra, inter;
    for (size_t i = 0; i < n * n; i++)
        mx = M[i] > mx ? M[i] : mx;
    an_w1_blocks(M, n, in, &intra, &inter);
    char title[300];
    snprintf(title, sizeof title, "Anomaly %d: W1 distances of %s between ranks (us)", a->id,
             kname);
    const int w = MARGIN_L + (int)n * CELL + 20, h = MARGIN_T + (int)n * CELL + 40;
    svg_open(f, w, h, title);
    fprintf(f, "<text x=\"4\" y=\"%d\">flagged %s group first (bold); mean W1 inside it %.1f "
               "us, to the other groups %.1f us</text>\n",
            MARGIN_T - 20, argus_group_type_name((enum argus_group_type)a->group_type)
                               ? argus_group_type_name((enum argus_group_type)a->group_type)
                               : "dp",
            intra / 1e3, inter / 1e3);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<text x=\"4\" y=\"%d\"%s>rank %u</text>\n", MARGIN_T + (int)i * CELL + 13,
                in[i] ? " font-weight=\"bold\"" : "", c->rank_of[reps[i]]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"7\"%s>%u</text>\n",
                MARGIN_L + (int)i * CELL + 2, MARGIN_T - 4, in[i] ? " font-weight=\"bold\"" : "",
                c->rank_of[reps[i]]);
        for (size_t j = 0; j < n; j++) {
            char col[16];
            const double v = M[i * n + j];
            colour(mx > 0 && !isnan(v) ? log1p(v / 1e3) / log1p(mx / 1e3) : NAN, col, sizeof col);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
                       "<title>W1(rank %u, rank %u) = %.1f us</title></rect>\n",
                    MARGIN_L + (int)j * CELL, MARGIN_T + (int)i * CELL, CELL - 1, CELL - 1, col,
                    c->rank_of[reps[i]], c->rank_of[reps[j]], v / 1e3);
        }
    }
    fprintf(f, "<text x=\"4\" y=\"%d\">darker: larger distance (log scale)</text>\n</svg>\n",
            h - 10);
}

int an_write_svgs(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_result *r, struct an_svg_set *set, char *errbuf, size_t errlen)
{
    struct an_ctx c;
    struct argus_analysis_opts o;
    char *data = NULL, name[64], title[300];
    size_t len = 0;
    int rc;

    memset(set, 0, sizeof *set);
    argus_analysis_opts_default(&o);
    rc = an_ctx_build(&c, js, &o);
    if (rc) {
        an_ctx_free(&c);
        return rc == -ENOENT ? 0 : rc;
    }
    double *v = malloc(c.n * sizeof *v), *t = malloc(c.n * sizeof *t);
    double *M = malloc(AN_W1_MAX_REPS * AN_W1_MAX_REPS * sizeof *M);
    uint32_t reps[AN_W1_MAX_REPS];
    uint8_t in[AN_W1_MAX_REPS];
    if (!v || !t || !M) {
        rc = -ENOMEM;
        goto out;
    }
    /* the whole run: median compute per rank, coloured between the min and max */
    rank_medians(&c, 0, c.S - 1, v_compute, v);
    double lo = INFINITY, hi = 0;
    for (uint32_t q = 0; q < c.n; q++)
        if (!isnan(v[q])) {
            v[q] /= 1e6;
            lo = v[q] < lo ? v[q] : lo;
            hi = v[q] > hi ? v[q] : hi;
        }
    for (uint32_t q = 0; q < c.n; q++)
        t[q] = isnan(v[q]) ? NAN : hi > lo ? (v[q] - lo) / (hi - lo) : 0;
    FILE *f = open_memstream(&data, &len);
    if (!f) {
        rc = -ENOMEM;
        goto out;
    }
    heatmap(f, &c, v, t, "Median GPU compute time per step, whole run", "ms", NULL);
    if ((rc = an_emit_memstream(f, &data, &len, od, "heatmap.svg", errbuf, errlen)))
        goto out;
    set->job = 1;
    for (size_t i = 0; i < r->n_anomalies && i < AN_SVG_MAX; i++) {
        struct argus_anomaly as = r->anomalies[i]; /* its rank ids as the context's slots */
        const struct argus_anomaly *a = &as;
        size_t sa, sb;
        an_anomaly_to_slots(&c, &as);
        if (a->n_ranks == 0 || c.S == 0 || a->step_last < c.step_id[0])
            continue; /* no sources, or steps the store no longer holds */
        step_range(&c, a, &sa, &sb);
        const int host = a->kind == ARGUS_AK_HOST_STALL;
        const int comm = a->kind == ARGUS_AK_COMM_DEGRADATION;
        rank_medians(&c, sa, sb, host ? v_host : comm ? v_comm : v_compute, v);
        /* ratio to the rank's peer class median (same stage), in the window */
        for (uint32_t q = 0; q < c.n; q++) {
            const uint32_t k = c.cls[q];
            size_t m = 0;
            for (uint32_t j = c.cls_off[k]; j < c.cls_off[k + 1]; j++)
                if (!isnan(v[c.cls_mem[j]]))
                    c.tmp2[m++] = v[c.cls_mem[j]];
            const double ref = m ? argus_stats_median(c.tmp2, m) : NAN;
            t[q] = host ? (ref >= 0 && !isnan(v[q]) ? (v[q] - ref) / (ref + 1e6) : NAN)
                        : (ref > 0 ? v[q] / ref - 1 : NAN);
        }
        for (uint32_t q = 0; q < c.n; q++)
            v[q] = t[q] + (host ? 0 : 1);
        snprintf(title, sizeof title, "Anomaly %d (%s), steps %llu-%llu: %s per rank / peer "
                 "median", a->id, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                 (unsigned long long)a->step_first, (unsigned long long)a->step_last,
                 host ? "host gap" : comm ? "communication time" : "compute time");
        if (!(f = open_memstream(&data, &len))) {
            rc = -ENOMEM;
            goto out;
        }
        heatmap(f, &c, v, t, title, host ? "excess over peers (relative)" : "x peer median", a);
        snprintf(name, sizeof name, "heatmap-%d.svg", a->id);
        if ((rc = an_emit_memstream(f, &data, &len, od, name, errbuf, errlen)))
            goto out;
        set->heat[i] = 1;
        if (!comm || a->n_kernels == 0)
            continue;
        size_t n = an_w1_matrix(&c, a, a->kernels[0], sa, sb, reps, in, M);
        if (n < 2)
            continue;
        char kn[64];
        an_short_name(js, a->kernels[0], kn, sizeof kn);
        if (!(f = open_memstream(&data, &len))) {
            rc = -ENOMEM;
            goto out;
        }
        w1_svg(f, &c, a, kn, reps, in, n, M);
        snprintf(name, sizeof name, "w1-%d.svg", a->id);
        if ((rc = an_emit_memstream(f, &data, &len, od, name, errbuf, errlen)))
            goto out;
        set->w1[i] = 1;
    }
out:
    free(v);
    free(t);
    free(M);
    an_ctx_free(&c);
    return rc;
}
