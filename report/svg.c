/* svg.c — the pictures of a report, as standalone SVG files embedded in report.md and
 * inlined, the same text, in report.html (an_svg_set keeps them):
 *   heatmap.svg        per-rank median compute time over the whole run (step wall time
 *                      below the kernel data level) over its peers' median (the ranks of
 *                      the same PP stage): deviation, not absolute work, so a stage that
 *                      simply has more work is not red; rank grid with one row per DP
 *                      replica and one column per (PP stage, TP index);
 *   heatmap-<id>.svg   per anomaly with source ranks: each rank's time in the anomaly's
 *                      window (compute, host gap, or a link's main collective kernel, by
 *                      kind) over the median of its healthy peers (the sources left out)
 *                      — the sources stand out, victims do not;
 *   w1-<id>.svg        per comm_degradation anomaly: the W1 matrix of the flagged group and
 *                      its peer groups over the anomaly's main collective (block structure);
 *   steptime.svg, breakdown.svg, phases.svg, forecast.svg: report/plots.h.
 * Every ratio map uses svgplot.h's colour scale (neutral band, legend) and carries its
 * value in each cell (data-value, text when the grid is small, <title> on hover).
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
#include "report/html.h"
#include "report/plots.h"
#include "report/report_int.h"
#include "report/svgplot.h"
#include "common/outdir.h"

#define SVG_MAX_ROWS 128
#define SVG_MAX_COLS 128
#define CELL 18
#define CELL_BIG 28
#define MARGIN_L 70
#define MARGIN_T 48

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

/* The peer class a rank's value is compared with on the maps: its PP stage when the
 * layout is known (ranks of a stage do the same work), else the analysis' peer class
 * unless those classes split ranks by speed (then all ranks are peers). */
static uint32_t peer_key(const struct an_ctx *c, uint32_t r)
{
    if (c->layout_known)
        return (uint32_t)c->co[r].pp;
    return c->speed_classes ? 0 : c->cls[r];
}

/* ratio[q] = v[q] / median of v over q's peers (peer_key), leaving out the peers
 * marked in skip (an anomaly's sources: the reference is the healthy peers; all of the
 * class when every member is marked; skip may be NULL); NAN without data. O(n + K)
 * with the classes laid out as CSR (K = the number of keys). 0 or -ENOMEM. */
static int peer_ratio(struct an_ctx *c, const double *v, const uint8_t *skip, double *ratio)
{
    const uint32_t K = c->layout_known ? (uint32_t)(c->lay.pp > 0 ? c->lay.pp : 1)
                                       : c->speed_classes ? 1 : c->n_cls + 1;
    uint32_t *off = calloc((size_t)K + 1, sizeof *off), *mem = malloc(c->n * sizeof *mem);
    if (!off || !mem) {
        free(off);
        free(mem);
        return -ENOMEM;
    }
    for (uint32_t q = 0; q < c->n; q++) {
        const uint32_t k = peer_key(c, q);
        off[(k < K ? k : K - 1) + 1]++;
    }
    for (uint32_t k = 0; k < K; k++)
        off[k + 1] += off[k];
    for (uint32_t q = 0; q < c->n; q++) {
        const uint32_t k = peer_key(c, q);
        mem[off[k < K ? k : K - 1]++] = q;
    }
    for (uint32_t k = K; k > 0; k--) /* back to start offsets */
        off[k] = off[k - 1];
    off[0] = 0;
    for (uint32_t k = 0; k < K; k++) {
        size_t m = 0;
        for (int pass = 0; pass < 2 && m == 0; pass++) /* pass 1: every member */
            for (uint32_t j = off[k]; j < off[k + 1]; j++)
                if (!isnan(v[mem[j]]) && (pass || !skip || !skip[mem[j]]))
                    c->tmp2[m++] = v[mem[j]];
        const double ref = m ? argus_stats_median(c->tmp2, m) : NAN;
        for (uint32_t j = off[k]; j < off[k + 1]; j++)
            ratio[mem[j]] = ref > 0 && !isnan(v[mem[j]]) ? v[mem[j]] / ref : NAN;
    }
    free(off);
    free(mem);
    return 0;
}

/* Heatmap of ratio[slot] (value over peer median; NAN = no data), abs[slot] the value in
 * unit; a's sources (slots) outlined, its victims dashed. The value is written in each
 * cell when the grid is small enough to read it, and on hover (<title>) always. */
static void heatmap(FILE *f, const struct an_ctx *c, const double *ratio, const double *abs,
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
    const int cell = cols <= 24 && rows <= 48 ? CELL_BIG : CELL;
    int w = MARGIN_L + (int)cols * cell + 20, h = MARGIN_T + (int)rows * cell + 64;
    w = w < 760 ? 760 : w; /* room for the title and the colour scale */
    char data[64];
    snprintf(data, sizeof data, "data-anomaly=\"%d\"", a ? a->id : 0);
    svp_open(f, w, h, "argus-plot heatmap", data, title);
    fprintf(f, "<text x=\"4\" y=\"%d\">rows: DP replica; columns: %s; cell: \xc3\x97 peer "
               "median of %s</text>\n",
            MARGIN_T - 20, c->layout_known ? "PP stage / TP index" : "rank mod 32", unit);
    for (uint32_t x = 0; x < cols && c->layout_known; x++)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"7\">%u/%u</text>\n",
                MARGIN_L + (int)x * cell + 1, MARGIN_T - 4, x / (uint32_t)c->lay.tp,
                x % (uint32_t)c->lay.tp);
    for (uint32_t y = 0; y < rows; y++)
        fprintf(f, "<text x=\"4\" y=\"%d\">%s %u</text>\n", MARGIN_T + (int)y * cell + cell / 2 + 4,
                c->layout_known ? "DP" : "ranks", c->layout_known ? y : y * 32);
    for (uint32_t r = 0; r < c->n; r++) {
        uint32_t y, x;
        char col[16];
        grid_pos(c, r, &y, &x);
        if (y >= rows || x >= cols)
            continue;
        int src = 0, vic = 0;
        for (uint32_t i = 0; a && i < a->n_ranks; i++)
            src |= a->ranks[i] == r;
        for (uint32_t i = 0; a && i < a->n_victims; i++)
            vic |= a->victims[i] == r;
        svp_ratio_fill(ratio[r], col, sizeof col);
        const int px = MARGIN_L + (int)x * cell, py = MARGIN_T + (int)y * cell;
        fprintf(f, "<g class=\"cell\" data-rank=\"%u\" data-value=\"%.4f\" data-abs=\"%.4f\" "
                   "data-band=\"%s\" data-role=\"%s\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                   "height=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"%s>"
                   "<title>rank %u: \xc3\x97%.3f peer median (%.4g %s)</title></rect>",
                c->rank_of[r], ratio[r], abs[r], svp_ratio_band(ratio[r]),
                src ? "source" : vic ? "victim" : "", px, py, cell - 1, cell - 1, col,
                src ? "black" : vic ? "#555555" : "#999999", src ? 2 : 1,
                vic && !src ? " stroke-dasharray=\"3 2\"" : "", c->rank_of[r], ratio[r],
                abs[r], unit);
        if (cell == CELL_BIG && !isnan(ratio[r])) /* white on the dark end of the scale */
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"8\" text-anchor=\"middle\" "
                       "pointer-events=\"none\" fill=\"%s\">%.2f</text>",
                    px + cell / 2, py + cell / 2 + 3,
                    ratio[r] > 1.3 || ratio[r] < 1 / 1.3 ? "white" : "black", ratio[r]);
        fputs("</g>\n", f);
    }
    svp_ratio_scale(f, 16, h - 46, 240);
    fprintf(f, "<text x=\"4\" y=\"%d\">%s</text>\n", h - 8,
            a ? "outlined: source ranks, dashed: victims; red: above the peer median, blue: "
                "below"
              : "peers: the ranks of the same PP stage; red: slower than its peers, blue: "
                "faster");
    svp_close(f);
}

static double v_compute(const struct argus_step_summary *s)
{
    return (double)s->compute_ns;
}
static double v_wall(const struct argus_step_summary *s)
{
    return an_wall(s);
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

/* Sequential fill for t in [0,1] (white -> red); NAN grey. */
static void seq_fill(double t, char *buf, size_t len)
{
    if (isnan(t)) {
        snprintf(buf, len, "%s", SVP_NODATA_FILL);
        return;
    }
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const int g = (int)lround(255 * (1 - t));
    snprintf(buf, len, "#%02x%02x%02x", (int)lround(255 - 75 * t), g, g);
}

static void w1_svg(FILE *f, const struct an_ctx *c, const struct argus_anomaly *a,
                   const char *kname, const uint32_t *reps, const uint8_t *in, size_t n,
                   const double *M)
{
    double mx = 0, intra, inter;
    for (size_t i = 0; i < n * n; i++)
        mx = M[i] > mx ? M[i] : mx;
    an_w1_blocks(M, n, in, &intra, &inter);
    char title[300], data[64];
    snprintf(title, sizeof title, "Anomaly %d: W1 distances of %s between ranks (us)", a->id,
             kname);
    snprintf(data, sizeof data, "data-anomaly=\"%d\"", a->id);
    int w = MARGIN_L + (int)n * CELL + 20;
    const int h = MARGIN_T + (int)n * CELL + 40;
    svp_open(f, w < 600 ? 600 : w, h, "argus-plot w1", data, title);
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);
    fprintf(f, "<text x=\"4\" y=\"%d\">flagged %s group first (bold); mean W1 inside it %.1f "
               "us, to the other groups %.1f us</text>\n",
            MARGIN_T - 20, gt ? gt : "dp", intra / 1e3, inter / 1e3);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<text x=\"4\" y=\"%d\"%s>rank %u</text>\n", MARGIN_T + (int)i * CELL + 13,
                in[i] ? " font-weight=\"bold\"" : "", c->rank_of[reps[i]]);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"7\"%s>%u</text>\n",
                MARGIN_L + (int)i * CELL + 2, MARGIN_T - 4, in[i] ? " font-weight=\"bold\"" : "",
                c->rank_of[reps[i]]);
        for (size_t j = 0; j < n; j++) {
            char col[16];
            const double v = M[i * n + j];
            seq_fill(mx > 0 && !isnan(v) ? log1p(v / 1e3) / log1p(mx / 1e3) : NAN, col,
                     sizeof col);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                       "data-w1-us=\"%.1f\"><title>W1(rank %u, rank %u) = %.1f us</title>"
                       "</rect>\n",
                    MARGIN_L + (int)j * CELL, MARGIN_T + (int)i * CELL, CELL - 1, CELL - 1, col,
                    v / 1e3, c->rank_of[reps[i]], c->rank_of[reps[j]], v / 1e3);
        }
    }
    fprintf(f, "<text x=\"4\" y=\"%d\">darker: larger distance (log scale, white 0, darkest "
               "%.1f us)</text>\n", h - 10, mx / 1e3);
    svp_close(f);
}

void an_svg_set_free(struct an_svg_set *set)
{
    if (!set)
        return;
    free(set->t_job);
    free(set->t_steps);
    free(set->t_breakdown);
    free(set->t_phases);
    free(set->t_forecast);
    for (size_t i = 0; i < AN_SVG_MAX; i++) {
        free(set->t_heat[i]);
        free(set->t_w1[i]);
    }
    memset(set, 0, sizeof *set);
}

/* Close the memstream f and write its text to name; the text is kept in *keep while the
 * set's kept texts stay within AN_SVG_KEEP_MAX bytes (else *keep stays NULL). */
static int emit_keep(struct an_svg_set *set, FILE *f, char **data, size_t *len,
                     const struct argus_outdir *od, const char *name, char **keep,
                     char *errbuf, size_t errlen)
{
    if (fclose(f) != 0 || !*data) {
        free(*data);
        *data = NULL;
        snprintf(errbuf, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    int rc = argus_file_write_at(od->fd, od->path, name, *data, *len, errbuf, errlen);
    if (rc || set->kept + *len > AN_SVG_KEEP_MAX) {
        free(*data);
    } else {
        *keep = *data;
        set->kept += *len;
    }
    *data = NULL;
    *len = 0;
    return rc;
}

#define OPEN_OR_FAIL()                                                                  \
    do {                                                                                \
        if (!(f = open_memstream(&data, &len))) {                                       \
            rc = -ENOMEM;                                                               \
            goto out;                                                                   \
        }                                                                               \
    } while (0)

int an_write_svgs(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_result *r, const struct argus_forecast *fc,
                  struct an_svg_set *set, char *errbuf, size_t errlen)
{
    struct an_ctx c;
    struct argus_analysis_opts o;
    char *data = NULL, name[64], title[300];
    size_t len = 0;
    int rc;
    FILE *f;

    memset(set, 0, sizeof *set);
    if (fc && fc->valid) { /* the forecast needs no store */
        if (!(f = open_memstream(&data, &len)))
            return -ENOMEM;
        an_plot_forecast(f, fc);
        if ((rc = emit_keep(set, f, &data, &len, od, "forecast.svg", &set->t_forecast, errbuf,
                            errlen)))
            return rc;
        set->forecast = 1;
    }
    argus_analysis_opts_default(&o);
    rc = an_ctx_build(&c, js, &o);
    if (rc) {
        an_ctx_free(&c);
        return rc == -ENOENT ? 0 : rc;
    }
    double *v = malloc(c.n * sizeof *v), *t = malloc(c.n * sizeof *t);
    uint8_t *src = malloc(c.n ? c.n : 1);
    double *M = malloc(AN_W1_MAX_REPS * AN_W1_MAX_REPS * sizeof *M);
    uint32_t reps[AN_W1_MAX_REPS];
    uint8_t in[AN_W1_MAX_REPS];
    if (!v || !t || !M || !src) {
        rc = -ENOMEM;
        goto out;
    }
    OPEN_OR_FAIL();
    if ((rc = an_plot_steps(f, &c, r))) {
        fclose(f);
        goto out;
    }
    if ((rc = emit_keep(set, f, &data, &len, od, "steptime.svg", &set->t_steps, errbuf, errlen)))
        goto out;
    set->steps = 1;
    for (int ph = 0; ph < 2; ph++) {
        OPEN_OR_FAIL();
        if ((rc = an_plot_breakdown(f, &c, r, ph)) <= 0) {
            fclose(f);
            free(data);
            data = NULL;
            if (rc < 0)
                goto out;
            continue;
        }
        if ((rc = emit_keep(set, f, &data, &len, od, ph ? "phases.svg" : "breakdown.svg",
                            ph ? &set->t_phases : &set->t_breakdown, errbuf, errlen)))
            goto out;
        *(ph ? &set->phases : &set->breakdown) = 1;
    }
    /* the whole run: median compute per rank (the step wall below the kernel level) over
     * its peers' median */
    const int kern = c.level >= ARGUS_DL_KERNELS;
    rank_medians(&c, 0, c.S - 1, kern ? v_compute : v_wall, v);
    for (uint32_t q = 0; q < c.n; q++)
        v[q] /= 1e6;
    if ((rc = peer_ratio(&c, v, NULL, t)))
        goto out;
    OPEN_OR_FAIL();
    heatmap(f, &c, t, v, kern ? "Median GPU compute time per step over the peer median, "
                                "whole run"
                              : "Median step time over the peer median, whole run",
            kern ? "median compute ms" : "median step ms", NULL);
    if ((rc = emit_keep(set, f, &data, &len, od, "heatmap.svg", &set->t_job, errbuf, errlen)))
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
        /* a link: the group's main collective itself (its waits equalise the ranks' total
         * communication time) */
        const int kcomm = comm && a->n_kernels > 0;
        for (uint32_t q = 0; q < c.n && kcomm; q++) {
            double calls;
            v[q] = an_rank_kernel_ns(&c, q, a->kernels[0], sa, sb, &calls);
        }
        char kn0[64] = "";
        if (kcomm)
            an_short_name(js, a->kernels[0], kn0, sizeof kn0);
        for (uint32_t q = 0; q < c.n; q++)
            v[q] = host ? v[q] / 1e6 + 1 : v[q] / 1e6; /* host gap: 1 ms floor (an idle
                                                          GPU's peers wait ~0) */
        memset(src, 0, c.n);
        for (uint32_t k = 0; k < a->n_ranks; k++)
            if (a->ranks[k] < c.n)
                src[a->ranks[k]] = 1;
        if ((rc = peer_ratio(&c, v, src, t)))
            goto out;
        for (uint32_t q = 0; q < c.n && host; q++)
            v[q] -= 1;
        snprintf(title, sizeof title, "Anomaly %d (%s), steps %llu-%llu: %s per rank / peer "
                 "median", a->id, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                 (unsigned long long)a->step_first, (unsigned long long)a->step_last,
                 host ? "host gap" : kcomm ? kn0 : comm ? "communication time" : "compute time");
        OPEN_OR_FAIL();
        heatmap(f, &c, t, v, title,
                host ? "host gap ms (+1 ms)" : kcomm ? "kernel ms per step"
                     : comm ? "communication ms" : "compute ms", a);
        snprintf(name, sizeof name, "heatmap-%d.svg", a->id);
        if ((rc = emit_keep(set, f, &data, &len, od, name, &set->t_heat[i], errbuf, errlen)))
            goto out;
        set->heat[i] = 1;
        if (!comm || a->n_kernels == 0)
            continue;
        size_t n = an_w1_matrix(&c, a, a->kernels[0], sa, sb, reps, in, M);
        if (n < 2)
            continue;
        char kn[64];
        an_short_name(js, a->kernels[0], kn, sizeof kn);
        OPEN_OR_FAIL();
        w1_svg(f, &c, a, kn, reps, in, n, M);
        snprintf(name, sizeof name, "w1-%d.svg", a->id);
        if ((rc = emit_keep(set, f, &data, &len, od, name, &set->t_w1[i], errbuf, errlen)))
            goto out;
        set->w1[i] = 1;
    }
out:
    if (rc == -ENOMEM && errbuf && errlen && !errbuf[0])
        snprintf(errbuf, errlen, "the SVG pictures: out of memory");
    free(v);
    free(t);
    free(M);
    free(src);
    an_ctx_free(&c);
    return rc;
}
