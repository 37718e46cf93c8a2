/* stacks.c — the host call stacks of an anomaly in the reports (docs/REPORT_SCHEMA.md,
 * "anomalies[].stacks"): its "stacks" object in report.json, the lines of report.md that
 * name the frames that differ from the healthy peers, and stacks.folded (flamegraph.pl /
 * speedscope "folded" format: `frame;frame;frame count`, one root frame per anomaly and
 * rank). The merge itself is analysis/hoststacks.c; this file only writes it. Allocates
 * only while writing; nothing when no anomaly has samples (a healthy run writes no file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hoststacks.h"
#include "common/jsongen.h"
#include "common/outdir.h"
#include "report/report_int.h"

#define CK(x) ARGUS_JSON_CK(x)
#define CKR(x) ARGUS_JSON_TRY(x)

static const char *const lang_name[2] = {"python", "native"};

/* The frame at [b, e) of a folded stack as a JSON string. */
static int gen_frame(yajl_gen g, const char *b, size_t n)
{
    char tmp[ARGUS_STACKREC_TEXT];
    if (n >= sizeof tmp)
        n = sizeof tmp - 1;
    memcpy(tmp, b, n);
    tmp[n] = '\0';
    return argus_json_str(g, tmp);
}

/* "function (file:line)" or "symbol (object)": the innermost frame's parts. */
static int gen_leaf(yajl_gen g, const char *folded, int lang)
{
    const char *leaf = strrchr(folded, ';');
    leaf = leaf ? leaf + 1 : folded;
    char fn[ARGUS_STACKREC_TEXT], where[ARGUS_STACKREC_TEXT];
    const char *par = strstr(leaf, " (");
    const size_t ln = strlen(leaf);
    if (!par || ln < 2 || leaf[ln - 1] != ')')
        return 0;
    snprintf(fn, sizeof fn, "%.*s", (int)(par - leaf), leaf);
    snprintf(where, sizeof where, "%.*s", (int)(leaf + ln - 1 - (par + 2)), par + 2);
    CKR(argus_json_key(g, "leaf"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "function"));
    CKR(argus_json_str(g, fn));
    if (lang == 0) {
        char *colon = strrchr(where, ':');
        if (colon)
            *colon = '\0';
        CKR(argus_json_key(g, "file"));
        CKR(argus_json_str(g, where));
        CKR(argus_json_key(g, "line"));
        CKR(argus_json_uint(g, colon ? strtoull(colon + 1, NULL, 10) : 0));
    } else {
        CKR(argus_json_key(g, "object"));
        CKR(argus_json_str(g, where));
    }
    CK(yajl_gen_map_close(g));
    return 0;
}

static int gen_side(yajl_gen g, const struct argus_stack_side *s, int lang)
{
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "samples"));
    CKR(argus_json_uint(g, s->samples));
    CKR(argus_json_key(g, "ranks"));
    CKR(argus_json_uint(g, s->ranks));
    CKR(argus_json_key(g, "top"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < s->n; i++) {
        const struct argus_stack_top *t = &s->top[i];
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "samples"));
        CKR(argus_json_uint(g, t->samples));
        CKR(argus_json_key(g, "ranks"));
        CKR(argus_json_uint(g, t->ranks));
        CKR(gen_leaf(g, t->folded, lang));
        CKR(argus_json_key(g, "frames")); /* outermost first */
        CK(yajl_gen_array_open(g));
        for (const char *p = t->folded; p && *p;) {
            const char *e = strchr(p, ';');
            CKR(gen_frame(g, p, e ? (size_t)(e - p) : strlen(p)));
            p = e ? e + 1 : NULL;
        }
        CK(yajl_gen_array_close(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

int an_gen_stacks(yajl_gen g, const struct argus_stackset *set, const struct argus_anomaly *a)
{
    struct argus_anomaly_stacks st;
    size_t off[8], len[8];

    if (!set || !argus_hoststacks_for(set, a, &st))
        return 0;
    CKR(argus_json_key(g, "stacks"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "file"));
    CKR(argus_json_str(g, "stacks.folded"));
    CKR(argus_json_key(g, "sample_cost_ms"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "mean"));
    CKR(argus_json_num(g, st.cost_n ? (double)st.cost_ns_sum / st.cost_n / 1e6 : 0, 3));
    CKR(argus_json_key(g, "max"));
    CKR(argus_json_num(g, (double)st.cost_ns_max / 1e6, 3));
    CK(yajl_gen_map_close(g));
    for (int k = 0; k < 2; k++) {
        if (!st.src[k].samples && !st.peer[k].samples)
            continue;
        CKR(argus_json_key(g, lang_name[k]));
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "sources"));
        CKR(gen_side(g, &st.src[k], k));
        CKR(argus_json_key(g, "peers"));
        CKR(gen_side(g, &st.peer[k], k));
        CKR(argus_json_key(g, "differ")); /* innermost first */
        CK(yajl_gen_array_open(g));
        const size_t nd = argus_hoststacks_differ(&st, k, off, len, 8);
        for (size_t i = 0; i < nd; i++)
            CKR(gen_frame(g, st.src[k].top[0].folded + off[i], len[i]));
        CK(yajl_gen_array_close(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_map_close(g));
    return 0;
}

void an_md_stacks(FILE *f, const struct argus_stackset *set, const struct argus_anomaly *a)
{
    struct argus_anomaly_stacks st;
    size_t off[4], len[4];

    if (!set || !argus_hoststacks_for(set, a, &st))
        return;
    for (int k = 0; k < 2; k++) {
        const struct argus_stack_side *s = &st.src[k];
        if (!s->n)
            continue;
        const size_t nd = argus_hoststacks_differ(&st, k, off, len, 4);
        fprintf(f, "- Host stack (%s, %u of %u samples, %u rank%s; peers %u samples):",
                lang_name[k], s->top[0].samples, s->samples, s->top[0].ranks,
                s->top[0].ranks == 1 ? "" : "s", st.peer[k].samples);
        for (size_t i = 0; i < nd; i++)
            fprintf(f, "%s `%.*s`", i ? " <-" : "", (int)len[i], s->top[0].folded + off[i]);
        fputs(" (innermost first; all in stacks.folded)\n", f);
    }
}

/* ---- stacks.folded ------------------------------------------------------------------ */

struct fold_ref {
    const struct argus_stackrec *r;
};

static int cmp_ref(const void *x, const void *y)
{
    const struct argus_stackrec *a = ((const struct fold_ref *)x)->r;
    const struct argus_stackrec *b = ((const struct fold_ref *)y)->r;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->lang != b->lang)
        return a->lang < b->lang ? -1 : 1;
    return strcmp(a->folded, b->folded);
}

int an_write_stacks(const struct argus_outdir *od, const struct argus_result *r,
                    const struct argus_stackset *set, char *errbuf, size_t errlen)
{
    struct argus_anomaly_stacks st;
    struct fold_ref *refs = NULL;
    char *data = NULL;
    size_t len = 0, any = 0;
    int rc = 0;

    if (!set || set->n == 0)
        return 0;
    for (size_t i = 0; i < r->n_anomalies; i++)
        any += (size_t)argus_hoststacks_for(set, &r->anomalies[i], &st);
    if (!any)
        return 0;
    refs = malloc(set->n * sizeof *refs);
    FILE *f = refs ? open_memstream(&data, &len) : NULL;
    if (!f) {
        free(refs);
        snprintf(errbuf, errlen, "stacks.folded: out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        if (!argus_hoststacks_for(set, a, &st))
            continue;
        size_t n = 0;
        for (size_t j = 0; j < set->n; j++)
            if (argus_hoststacks_side(a, &set->v[j]))
                refs[n++].r = &set->v[j];
        qsort(refs, n, sizeof *refs, cmp_ref);
        for (size_t j = 0; j < n;) {
            size_t e = j + 1;
            while (e < n && cmp_ref(&refs[j], &refs[e]) == 0)
                e++;
            const struct argus_stackrec *x = refs[j].r;
            const int src = argus_hoststacks_side(a, x) == 1;
            fprintf(f, "anomaly %d %s;rank %u (%s);[%s];%s %zu\n", a->id,
                    argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind), x->rank,
                    src ? "source" : "peer", x->lang == ARGUS_STACK_PYTHON ? "python" : "native",
                    x->folded, e - j);
            j = e;
        }
    }
    rc = an_emit_memstream(f, &data, &len, od, "stacks.folded", errbuf, errlen);
    free(refs);
    return rc;
}
