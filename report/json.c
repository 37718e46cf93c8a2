/* json.c — report.json (docs/REPORT_SCHEMA.md, version 1) and the one-line anomaly
 * object of anomalies.jsonl, generated with YAJL's yajl_gen. Derived only from the result
 * and the job store; written to report.json.partial and renamed.
 */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "common/clock.h"
#include "common/outdir.h"

#define REPORT_VERSION 1

#define CK(x)                                                                                \
    do {                                                                                     \
        if ((x) != yajl_gen_status_ok)                                                       \
            return -EIO;                                                                     \
    } while (0)
#define CKR(x)                                                                               \
    do {                                                                                     \
        int rc_ = (x);                                                                       \
        if (rc_)                                                                             \
            return rc_;                                                                      \
    } while (0)

static int key(yajl_gen g, const char *k)
{
    return yajl_gen_string(g, (const unsigned char *)k, strlen(k)) == yajl_gen_status_ok
               ? 0
               : -EIO;
}

/* Length of the valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4
                                                                                             : 0;
    if (n == 0 || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

int an_gen_str(yajl_gen g, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    char stackbuf[1024] = "", *buf = n < sizeof stackbuf ? stackbuf : malloc(n + 1);
    if (!buf)
        return -ENOMEM;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t l = utf8_len(p);
        if (l == 0) {
            buf[o++] = '?';
            p++;
            continue;
        }
        memcpy(buf + o, p, l);
        o += l;
        p += l;
    }
    int rc = yajl_gen_string(g, (const unsigned char *)buf, o) == yajl_gen_status_ok ? 0 : -EIO;
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int an_gen_num(yajl_gen g, double v, int decimals)
{
    char buf[64];
    if (!isfinite(v))
        return yajl_gen_null(g) == yajl_gen_status_ok ? 0 : -EIO;
    int n = snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return -EIO;
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0')
            buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '.')
            buf[--n] = '\0';
    }
    if (!strcmp(buf, "-0")) {
        strcpy(buf, "0");
        n = 1;
    }
    return yajl_gen_number(g, buf, (size_t)n) == yajl_gen_status_ok ? 0 : -EIO;
}

int an_gen_uint(yajl_gen g, uint64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return yajl_gen_number(g, buf, (size_t)n) == yajl_gen_status_ok ? 0 : -EIO;
}

const char *an_kernel_name(const struct argus_jobstore *js, uint64_t hash, char *buf,
                           size_t len)
{
    const char *n = argus_jobstore_name(js, hash);
    if (n)
        return n;
    snprintf(buf, len, "0x%016llx", (unsigned long long)hash);
    return buf;
}

static int gen_ranks(yajl_gen g, const uint32_t *v, uint32_t n)
{
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < n; i++)
        CKR(an_gen_uint(g, v[i]));
    CK(yajl_gen_array_close(g));
    return 0;
}

int an_gen_anomaly(yajl_gen g, const struct argus_jobstore *js, const struct argus_anomaly *a)
{
    char lv[8], kb[40];
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);

    CK(yajl_gen_map_open(g));
    CKR(key(g, "id"));
    CKR(an_gen_uint(g, (uint64_t)(a->id > 0 ? a->id : 0)));
    CKR(key(g, "level"));
    snprintf(lv, sizeof lv, "L%d", a->level);
    CKR(an_gen_str(g, lv));
    CKR(key(g, "kind"));
    CKR(an_gen_str(g, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind)));
    CKR(key(g, "steps"));
    CK(yajl_gen_array_open(g));
    CKR(an_gen_uint(g, a->step_first));
    CKR(an_gen_uint(g, a->step_last));
    CK(yajl_gen_array_close(g));
    CKR(key(g, "ranks"));
    CKR(gen_ranks(g, a->ranks, a->n_ranks));
    CKR(key(g, "victims"));
    CKR(gen_ranks(g, a->victims, a->n_victims));
    if (gt && a->n_group) {
        CKR(key(g, "group"));
        CK(yajl_gen_map_open(g));
        CKR(key(g, "type"));
        CKR(an_gen_str(g, gt));
        CKR(key(g, "ranks"));
        CKR(gen_ranks(g, a->group, a->n_group));
        CK(yajl_gen_map_close(g));
    }
    CKR(key(g, "phase"));
    if (a->phase >= 0 && a->phase < ARGUS_PH_COUNT)
        CKR(an_gen_str(g, argus_phase_name((enum argus_phase)a->phase)));
    else
        CK(yajl_gen_null(g));
    CKR(key(g, "kernels"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < a->n_kernels && i < ARGUS_ANOMALY_MAX_KERNELS; i++)
        CKR(an_gen_str(g, an_kernel_name(js, a->kernels[i], kb, sizeof kb)));
    CK(yajl_gen_array_close(g));
    CKR(key(g, "slowdown"));
    CKR(an_gen_num(g, a->slowdown, 3));
    CKR(key(g, "score"));
    CKR(an_gen_num(g, a->score, 2));
    CKR(key(g, "detected_at_step"));
    CKR(an_gen_uint(g, a->detected_at_step));
    CKR(key(g, "evidence"));
    CKR(an_gen_str(g, a->evidence));
    if (a->trace[0]) {
        CKR(key(g, "trace"));
        CKR(an_gen_str(g, a->trace));
    }
    if (a->period_steps) {
        CKR(key(g, "period_steps"));
        CKR(an_gen_uint(g, a->period_steps));
    }
    if (a->n_occurrences) {
        CKR(key(g, "occurrences"));
        CKR(an_gen_uint(g, a->n_occurrences));
    }
    if (a->w1_inter_ns > 0) {
        CKR(key(g, "w1_us"));
        CK(yajl_gen_map_open(g));
        CKR(key(g, "intra_group"));
        CKR(an_gen_num(g, a->w1_intra_ns / 1e3, 3));
        CKR(key(g, "to_other_groups"));
        CKR(an_gen_num(g, a->w1_inter_ns / 1e3, 3));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_map_close(g));
    return 0;
}

static const char *source_name(int s)
{
    switch (s) {
    case ARGUS_SRC_CUPTI: return "cupti";
    case ARGUS_SRC_KINETO: return "kineto";
    default: return "replay";
    }
}

static int gen_job(yajl_gen g, const struct argus_jobstore *js)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    char t[40];
    uint64_t start, end;

    an_job_span(js, &start, &end);
    CKR(key(g, "job"));
    CK(yajl_gen_map_open(g));
    CKR(key(g, "id"));
    CKR(an_gen_str(g, m->id[0] ? m->id : "unknown"));
    CKR(key(g, "step"));
    CKR(an_gen_str(g, m->step[0] ? m->step : "0"));
    CKR(key(g, "ranks"));
    CKR(an_gen_uint(g, argus_jobstore_nranks(js)));
    CKR(key(g, "nodes"));
    CKR(an_gen_uint(g, an_job_nodes(js)));
    CKR(key(g, "source"));
    CKR(an_gen_str(g, source_name(m->source)));
    CKR(key(g, "started_at"));
    argus_clock_rfc3339(start, t, sizeof t);
    CKR(an_gen_str(g, t));
    CKR(key(g, "ended_at"));
    argus_clock_rfc3339(end, t, sizeof t);
    CKR(an_gen_str(g, t));
    CKR(key(g, "complete"));
    CK(yajl_gen_bool(g, m->complete != 0));
    /* Ranks that stopped delivering, and from which step (empty when none). */
    CKR(key(g, "missing_ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t rk = 0; rk < argus_jobstore_nranks(js); rk++) {
        uint64_t since = argus_jobstore_missing_since(js, rk);
        if (since == UINT64_MAX)
            continue;
        CK(yajl_gen_map_open(g));
        CKR(key(g, "rank"));
        CKR(an_gen_uint(g, rk));
        CKR(key(g, "since_step"));
        CKR(an_gen_uint(g, since));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* Summaries held with kernel detail: thin ones (ARGUS_SF_THIN, rows only) saw kernels that
 * kernels_seen does not count, so they are no rank-step of the raw-bytes figure. */
static size_t kernel_held(const struct argus_jobstore *js)
{
    size_t n = 0;
    for (uint32_t r = 0; r < argus_jobstore_nranks(js); r++) {
        const struct argus_step_summary *const *v;
        const size_t m = argus_jobstore_rank_steps(js, r, &v);
        for (size_t i = 0; i < m; i++)
            n += !(v[i]->flags & ARGUS_SF_THIN);
    }
    return n;
}

/* "inputs": {files, analysed, skipped: ["FILE: why", ...]} (argus-analyze; a field added,
 * as docs/REPORT_SCHEMA.md allows). */
static int gen_inputs(yajl_gen g, const struct argus_report_inputs *in)
{
    CKR(key(g, "inputs"));
    CK(yajl_gen_map_open(g));
    CKR(key(g, "files"));
    CKR(an_gen_uint(g, in->files));
    CKR(key(g, "analysed"));
    CKR(an_gen_uint(g, in->analysed));
    CKR(key(g, "skipped"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < in->n_skipped; i++)
        CKR(an_gen_str(g, in->skipped[i]));
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

static int gen_report(yajl_gen g, const struct argus_jobstore *js, const struct argus_report *rep)
{
    const struct argus_result *r = &rep->res;
    const size_t held = kernel_held(js);

    CK(yajl_gen_map_open(g));
    CKR(key(g, "argus_report_version"));
    CKR(an_gen_uint(g, REPORT_VERSION));
    CKR(gen_job(g, js));

    CKR(key(g, "layout"));
    CK(yajl_gen_map_open(g));
    const char *lk[4] = { "tp", "pp", "dp", "ep" };
    const int lv[4] = { r->layout.tp, r->layout.pp, r->layout.dp, r->layout.ep };
    for (int i = 0; i < 4; i++) {
        CKR(key(g, lk[i]));
        CKR(an_gen_uint(g, (uint64_t)(lv[i] > 0 ? lv[i] : 1)));
    }
    CKR(key(g, "inferred"));
    CK(yajl_gen_bool(g, r->layout.inferred != 0));
    CK(yajl_gen_map_close(g));

    CKR(key(g, "steps"));
    CK(yajl_gen_map_open(g));
    CKR(key(g, "count"));
    CKR(an_gen_uint(g, r->steps.count));
    CKR(key(g, "first"));
    CKR(an_gen_uint(g, r->steps.first));
    CKR(key(g, "last"));
    CKR(an_gen_uint(g, r->steps.last));
    CKR(key(g, "median_ms"));
    CKR(an_gen_num(g, r->steps.median_ms, 3));
    CKR(key(g, "p99_ms"));
    CKR(an_gen_num(g, r->steps.p99_ms, 3));
    CKR(key(g, "cv"));
    CKR(an_gen_num(g, r->steps.cv, 4));
    CK(yajl_gen_map_close(g));

    CKR(key(g, "collection"));
    CK(yajl_gen_map_open(g));
    CKR(key(g, "kernels_seen"));
    CKR(an_gen_uint(g, r->kernels_seen));
    CKR(key(g, "summary_bytes_per_rank_step"));
    CKR(an_gen_uint(g, (uint64_t)llround(r->summary_bytes_per_rank_step)));
    CKR(key(g, "raw_bytes_per_rank_step"));
    CKR(an_gen_uint(g, held ? (uint64_t)llround((double)r->kernels_seen / (double)held *
                                                (double)sizeof(struct argus_kernel_event))
                            : 0));
    CKR(key(g, "dropped_events"));
    CKR(an_gen_uint(g, r->dropped_events));
    CK(yajl_gen_map_close(g));

    CKR(key(g, "anomalies"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < r->n_anomalies; i++)
        CKR(an_gen_anomaly(g, js, &r->anomalies[i]));
    CK(yajl_gen_array_close(g));

    CKR(key(g, "ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < r->n_ranks; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, row->rank);
        CK(yajl_gen_map_open(g));
        CKR(key(g, "rank"));
        CKR(an_gen_uint(g, row->rank));
        CKR(key(g, "host"));
        CKR(an_gen_str(g, ri && ri->host[0] ? ri->host : "unknown"));
        CKR(key(g, "device"));
        CK(yajl_gen_integer(g, ri ? ri->device : -1));
        CKR(key(g, "median_step_ms"));
        CKR(an_gen_num(g, row->median_step_ms, 3));
        CKR(key(g, "flags"));
        CK(yajl_gen_array_open(g));
        for (int k = 0; k < ARGUS_AK_COUNT; k++)
            if (row->flags & (1u << k))
                CKR(an_gen_str(g, argus_anomaly_kind_name((enum argus_anomaly_kind)k)));
        CK(yajl_gen_array_close(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    if (rep->inputs)
        CKR(gen_inputs(g, rep->inputs));
    CK(yajl_gen_map_close(g));
    return 0;
}


static int write_json(const char *dir, const struct argus_jobstore *js,
                      const struct argus_report *rep, char *errbuf, size_t errlen)
{
    char path[4096];
    const unsigned char *buf;
    size_t len;
    int rc;
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return -ENOMEM;
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_config(g, yajl_gen_indent_string, "  ");
    rc = gen_report(g, js, rep);
    if (!rc && yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        rc = -EIO;
    if (rc) {
        snprintf(errbuf, errlen, "report.json: JSON generation failed");
        goto out;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/report.json", dir) >= sizeof path) {
        snprintf(errbuf, errlen, "%s: output directory name too long", dir);
        rc = -ENAMETOOLONG;
        goto out;
    }
    /* a newline at the end, as text files have */
    char *copy = malloc(len + 1);
    if (!copy) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy(copy, buf, len);
    copy[len] = '\n';
    rc = argus_file_write_atomic(path, copy, len + 1, errbuf, errlen);
    free(copy);
out:
    yajl_gen_free(g);
    return rc;
}

int argus_report_write_all(const char *dir, const struct argus_jobstore *js,
                           const struct argus_report *rep, char *errbuf, size_t errlen)
{
    char dummy[8];
    int rc;

    if (!errbuf || !errlen) {
        errbuf = dummy;
        errlen = sizeof dummy;
    }
    errbuf[0] = '\0';
    if (!dir || !js || !rep) {
        snprintf(errbuf, errlen, "report: bad arguments");
        return -EINVAL;
    }
    const struct argus_result *r = &rep->res;
    if ((rc = write_json(dir, js, rep, errbuf, errlen)))
        return rc;
    /* pictures first, so that report.md links only to files that exist */
    struct an_svg_set set;
    if ((rc = an_write_svgs(dir, js, r, &set, errbuf, errlen)))
        return rc;
    if ((rc = an_write_md(dir, js, r, rep->inputs, &set, errbuf, errlen)))
        return rc;
    if ((rc = an_write_prom(dir, js, r, errbuf, errlen)))
        return rc;
    return an_write_csv(dir, js, errbuf, errlen);
}

int argus_report_write(const char *dir, const struct argus_jobstore *js,
                       const struct argus_result *r, char *errbuf, size_t errlen)
{
    if (!r) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "report: bad arguments");
        return -EINVAL;
    }
    const struct argus_report rep = {.res = *r, .inputs = NULL}; /* a view: r keeps its arrays */
    return argus_report_write_all(dir, js, &rep, errbuf, errlen);
}

long argus_report_anomaly_json(const struct argus_jobstore *js, const struct argus_anomaly *a,
                               char *buf, size_t len)
{
    const unsigned char *out;
    size_t n;
    long rc;
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return -ENOMEM;
    if (an_gen_anomaly(g, js, a) || yajl_gen_get_buf(g, &out, &n) != yajl_gen_status_ok) {
        rc = -EIO;
    } else if (n + 1 > len) {
        rc = -ENOSPC;
    } else {
        memcpy(buf, out, n);
        buf[n] = '\0';
        rc = (long)n;
    }
    yajl_gen_free(g);
    return rc;
}
