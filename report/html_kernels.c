/* html_kernels.c — report.html's kernel table of one anomaly (report/html.h): for each
 * kernel the anomaly names, the per-step time of that kernel (all its modes) on the
 * source ranks and on their peers (the other members of the sources' peer classes), in
 * the anomaly's steps: medians over the steps per rank, then over the ranks. Reads the
 * kernel-level cells only (an_kcell), so thin cells never count as zero.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/labels.h"
#include "analysis/stats.h"
#include "report/html.h"

double an_rank_kernel_ns(const struct an_ctx *c, uint32_t q, uint64_t h, size_t sa, size_t sb,
                         double *calls)
{
    size_t m = 0;
    double n = 0;
    for (size_t si = sa; si <= sb && si < c->S; si++) {
        const struct argus_step_summary *s = an_kcell(c, q, si);
        if (!s)
            continue;
        double t = 0;
        for (uint32_t k = 0; k < s->n_kmodes && k < ARGUS_MAX_KMODES; k++)
            if (s->kmodes[k].name_hash == h) {
                t += (double)s->kmodes[k].sum_ns;
                n += s->kmodes[k].count;
            }
        c->tmp1[m++] = t;
    }
    *calls = m ? n / (double)m : NAN;
    return m ? argus_stats_median(c->tmp1, m) : NAN;
}

int an_html_kernel_table(FILE *f, struct an_ctx *c, const struct argus_jobstore *js,
                         const struct argus_anomaly *a_slots, size_t sa, size_t sb)
{
    const struct argus_anomaly *a = a_slots;
    if (!a->n_kernels || !a->n_ranks || !c->S)
        return 0;
    uint8_t *src = calloc(c->n ? c->n : 1, 1), *cls = calloc(c->n_cls + 1, 1);
    double *sv = malloc((c->n ? c->n : 1) * sizeof *sv), *pv = malloc((c->n ? c->n : 1) * sizeof *pv);
    if (!src || !cls || !sv || !pv) {
        free(src);
        free(cls);
        free(sv);
        free(pv);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i] < c->n) {
            src[a->ranks[i]] = 1;
            if (c->cls[a->ranks[i]] <= c->n_cls)
                cls[c->cls[a->ranks[i]]] = 1;
        }
    fprintf(f, "<table class=\"kernels\" data-anomaly=\"%d\"><caption>Kernels named by anomaly "
               "%d: time per step in steps %llu&ndash;%llu, source ranks vs their peers (same "
               "peer class)</caption>\n<tr><th>kernel</th><th>sources ms/step</th><th>peers "
               "ms/step</th><th>&times; peers</th><th>sources calls/step</th><th>peers "
               "calls/step</th></tr>\n",
            a->id, a->id, (unsigned long long)c->step_id[sa], (unsigned long long)c->step_id[sb]);
    for (uint32_t k = 0; k < a->n_kernels && k < ARGUS_ANOMALY_MAX_KERNELS; k++) {
        size_t ns = 0, np = 0;
        double scalls = 0, pcalls = 0, calls;
        for (uint32_t q = 0; q < c->n; q++) {
            const int is_src = src[q], is_peer = !is_src && c->cls[q] <= c->n_cls &&
                                                  cls[c->cls[q]];
            if (!is_src && !is_peer)
                continue;
            const double v = an_rank_kernel_ns(c, q, a->kernels[k], sa, sb, &calls);
            if (isnan(v))
                continue;
            if (is_src) {
                sv[ns++] = v;
                scalls += calls;
            } else {
                pv[np++] = v;
                pcalls += calls;
            }
        }
        const double s = ns ? argus_stats_median(sv, ns) / 1e6 : NAN;
        const double p = np ? argus_stats_median(pv, np) / 1e6 : NAN;
        char kn[256];
        const char *name = an_kernel_name(js, a->kernels[k], kn, sizeof kn);
        fputs("<tr><td><code>", f);
        an_html_text(f, name);
        const double vals[5] = {s, p, p > 0 ? s / p : NAN, ns ? scalls / (double)ns : NAN,
                                np ? pcalls / (double)np : NAN};
        const int prec[5] = {3, 3, 2, 1, 1};
        fputs("</code></td>", f);
        for (int i = 0; i < 5; i++) {
            fprintf(f, "<td data-col=\"%d\">", i);
            an_html_num(f, vals[i], prec[i]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    free(src);
    free(cls);
    free(sv);
    free(pv);
    return 1;
}
