/* util.c — small facts about a job that every report writer needs: its distinct
 * step ids, its node count, its time span, and a short description of an anomaly's
 * sources. Reads the job store only. an_emit_memstream writes one report file relative to
 * the output directory's fd (common/outdir.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/labels.h"
#include "report/report_int.h"
#include "common/outdir.h"

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int an_job_steps(const struct argus_jobstore *js, uint64_t **out, size_t *n)
{
    const uint32_t nr = argus_jobstore_nranks(js);
    size_t total = argus_jobstore_count(js), k = 0;
    uint64_t *v = malloc((total ? total : 1) * sizeof *v);

    *out = NULL;
    *n = 0;
    if (!v)
        return -ENOMEM;
    for (uint32_t r = 0; r < nr; r++) {
        const struct argus_step_summary *const *s;
        size_t m = argus_jobstore_rank_steps(js, r, &s);
        for (size_t i = 0; i < m && k < total; i++)
            v[k++] = s[i]->step;
    }
    qsort(v, k, sizeof *v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    *out = v;
    *n = u;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

uint32_t an_job_nodes(const struct argus_jobstore *js)
{
    const uint32_t nr = argus_jobstore_nranks(js);
    const char **h = malloc((nr ? nr : 1) * sizeof *h);
    uint32_t m = 0, u = 0;

    if (!h)
        return 1;
    for (uint32_t r = 0; r < nr; r++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, r);
        if (ri && ri->host[0])
            h[m++] = ri->host;
    }
    qsort(h, m, sizeof *h, cmp_str);
    for (uint32_t i = 0; i < m; i++)
        u += i == 0 || strcmp(h[i - 1], h[i]) != 0;
    free(h);
    return u ? u : 1;
}

void an_job_span(const struct argus_jobstore *js, uint64_t *start, uint64_t *end)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    uint64_t lo = UINT64_MAX, hi = 0;
    const uint32_t nr = argus_jobstore_nranks(js);

    for (uint32_t r = 0; r < nr; r++) {
        const struct argus_step_summary *const *s;
        size_t n = argus_jobstore_rank_steps(js, r, &s);
        if (n == 0)
            continue;
        lo = s[0]->start_ns < lo ? s[0]->start_ns : lo;
        hi = s[n - 1]->end_ns > hi ? s[n - 1]->end_ns : hi;
    }
    *start = m->started_ns ? m->started_ns : (lo == UINT64_MAX ? 0 : lo);
    *end = m->ended_ns ? m->ended_ns : hi;
    if (*end < *start)
        *end = *start;
}

void an_describe_sources(const struct argus_anomaly *a, char *buf, size_t len)
{
    char rk[256];
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);

    if (a->n_ranks == 0) {
        snprintf(buf, len, "all ranks");
        return;
    }
    an_format_ranks(a->ranks, a->n_ranks, rk, sizeof rk);
    if (gt && a->n_group)
        snprintf(buf, len, "%s group %s", gt, rk);
    else
        snprintf(buf, len, "rank%s %s", a->n_ranks > 1 ? "s" : "", rk);
}

int an_emit_memstream(FILE *f, char **data, size_t *len, const struct argus_outdir *od,
                      const char *name, char *errbuf, size_t errlen)
{
    int rc;

    if (fclose(f) != 0 || !*data) {
        snprintf(errbuf, errlen, "%s: out of memory", name);
        rc = -ENOMEM;
    } else {
        rc = argus_file_write_at(od->fd, od->path, name, *data, *len, errbuf, errlen);
    }
    free(*data);
    *data = NULL;
    *len = 0;
    return rc;
}
