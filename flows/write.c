/* write.c — argus-flows' outputs (flows/flows.h): flows.json (yajl_gen), timeline.csv and
 * flows.md, each built in memory and written with argus_file_write_at relative to the
 * output directory's fd (common/outdir.h). Reads the analysed context only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/grow.h"
#include "common/jsongen.h"
#include "flows/flows_int.h"
#include "flows/xcheck.h"

#define FLOWS_JSON_VERSION 1
#define CK(x) ARGUS_JSON_CK(x)
#define TRY(x) ARGUS_JSON_TRY(x)

void fl_sb_printf(struct fl_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2 && !b->oom; tries++) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        if (argus_grow(&b->p, &b->cap, b->n + (size_t)k + 1, 1, 4096))
            b->oom = 1;
    }
}

static void ipstr(const struct argus_flows *f, uint32_t e, char *out, size_t n)
{
    argus_flow_addr_str(&f->ep[e].ip, out, n);
}

static int gen_ip(yajl_gen g, const struct argus_flows *f, uint32_t e)
{
    char s[64];
    ipstr(f, e, s, sizeof s);
    return argus_json_str(g, s);
}

static int gen_job(yajl_gen g, const struct argus_flows *f, size_t j)
{
    const struct fl_job *jb = &f->job[j];

    CK(yajl_gen_map_open(g));
    TRY(argus_json_key(g, "id"));
    TRY(argus_json_uint(g, j));
    TRY(argus_json_key(g, "endpoints"));
    CK(yajl_gen_array_open(g));
    for (size_t k = 0; k < jb->nep; k++)
        TRY(gen_ip(g, f, jb->ep[k]));
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "world"));
    TRY(argus_json_uint(g, (uint64_t)jb->world));
    TRY(argus_json_key(g, "dp"));
    TRY(argus_json_uint(g, (uint64_t)jb->dp));
    TRY(argus_json_key(g, "pp"));
    TRY(argus_json_uint(g, (uint64_t)jb->pp));
    TRY(argus_json_key(g, "tp"));
    TRY(argus_json_uint(g, (uint64_t)jb->tp));
    TRY(argus_json_key(g, "layout_regular"));
    CK(yajl_gen_bool(g, jb->layout_regular));
    TRY(argus_json_key(g, "pairs_dp"));
    TRY(argus_json_uint(g, jb->npairs_dp));
    TRY(argus_json_key(g, "pairs_pp"));
    TRY(argus_json_uint(g, jb->npairs_pp));
    TRY(argus_json_key(g, "dp_groups"));
    CK(yajl_gen_array_open(g));
    for (int gi = 0; gi < jb->ndp_groups; gi++) {
        CK(yajl_gen_array_open(g));
        for (size_t k = 0; k < jb->nep; k++)
            if (f->ep[jb->ep[k]].dp_group == gi)
                TRY(gen_ip(g, f, jb->ep[k]));
        CK(yajl_gen_array_close(g));
    }
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "pipelines"));   /* each in stage order */
    CK(yajl_gen_array_open(g));
    size_t pp = jb->pp > 0 ? (size_t)jb->pp : 1;
    for (int p = 0; p < jb->npipes && jb->pipe_order; p++) {
        CK(yajl_gen_array_open(g));
        for (size_t s = 0; s < pp; s++)
            if (jb->pipe_order[(size_t)p * pp + s] >= 0)
                TRY(gen_ip(g, f, (uint32_t)jb->pipe_order[(size_t)p * pp + s]));
        CK(yajl_gen_array_close(g));
    }
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "steps"));
    TRY(argus_json_uint(g, jb->nsteps));
    TRY(argus_json_key(g, "step_time_median_ns"));
    TRY(argus_json_num(g, jb->step_med_ns, 0));
    TRY(argus_json_key(g, "step_time_mad_ns"));
    TRY(argus_json_num(g, jb->step_mad_ns, 0));
    TRY(argus_json_key(g, "endpoints_other_step_count"));
    TRY(argus_json_uint(g, jb->eps_off_steps));
    TRY(argus_json_key(g, "boundary_agreement"));
    TRY(argus_json_num(g, jb->boundary_agreement, 4));
    TRY(fl_gen_u(g, "boundary_gaps", jb->boundary_gaps));
    TRY(fl_gen_u(g, "boundary_gaps_disagree", jb->boundary_disagree));
    TRY(argus_json_key(g, "step_method"));
    TRY(argus_json_str(g, jb->step_method ? "autocorrelation" : "bursts"));
    TRY(fl_gen_u(g, "endpoints_tracked_by_period", jb->eps_tracked));
    TRY(argus_json_key(g, "acf_period_ns"));
    TRY(argus_json_num(g, jb->acf_period_ns > 0 ? jb->acf_period_ns : NAN, 0));
    TRY(argus_json_key(g, "acf_peak"));
    TRY(argus_json_num(g, jb->acf_period_ns > 0 ? jb->acf_peak : NAN, 3));
    TRY(argus_json_key(g, "step_ends_ns"));
    CK(yajl_gen_array_open(g));
    for (size_t s = 0; s < jb->nsteps; s++)
        TRY(argus_json_uint(g, jb->step_end[s]));
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "slow_steps"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < jb->nslow; i++) {
        const struct fl_slow *s = &jb->slow[i];
        CK(yajl_gen_map_open(g));
        TRY(argus_json_key(g, "step"));
        TRY(argus_json_uint(g, s->step));
        TRY(argus_json_key(g, "duration_ns"));
        TRY(argus_json_uint(g, s->dur_ns));
        TRY(argus_json_key(g, "z"));
        TRY(argus_json_num(g, s->z, 2));
        TRY(argus_json_key(g, "late_dp_group"));
        if (s->dp_group >= 0)
            TRY(argus_json_uint(g, (uint64_t)s->dp_group));
        else
            CK(yajl_gen_null(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "pairs"));
    CK(yajl_gen_array_open(g));
    for (size_t q = 0; q < f->npair; q++) {
        const struct fl_pair *p = &f->pair[q];
        if (p->job != (int)j)
            continue;
        CK(yajl_gen_map_open(g));
        TRY(argus_json_key(g, "a"));
        TRY(gen_ip(g, f, p->a));
        TRY(argus_json_key(g, "b"));
        TRY(gen_ip(g, f, p->b));
        TRY(argus_json_key(g, "kind"));
        TRY(argus_json_str(g, p->kind == FL_PP ? "pp" : "dp"));
        TRY(argus_json_key(g, "flowlets"));
        TRY(argus_json_uint(g, p->fl_n));
        TRY(argus_json_key(g, "bytes"));
        TRY(argus_json_uint(g, p->bytes[0] + p->bytes[1]));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

static int cmp_link(const void *x, const void *y, void *ctx)
{
    const struct argus_flows *f = ctx;
    const struct fl_link *a = &f->link[*(const size_t *)x], *b = &f->link[*(const size_t *)y];
    if (a->degraded != b->degraded)
        return b->degraded - a->degraded;
    return a->z < b->z ? -1 : a->z > b->z;
}

static size_t *links_ranked(const struct argus_flows *f)
{
    size_t *ix = malloc((f->nlink + 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t i = 0; i < f->nlink; i++)
        ix[i] = i;
    qsort_r(ix, f->nlink, sizeof *ix, cmp_link, (void *)f);
    return ix;
}

int fl_gen_u(yajl_gen g, const char *k, uint64_t v)
{
    TRY(argus_json_key(g, k));
    return argus_json_uint(g, v);
}

static int gen_doc(yajl_gen g, const struct argus_flows *f, const struct argus_flows_inputs *in,
                   const size_t *rank, const size_t *prank)
{
    CK(yajl_gen_map_open(g));
    TRY(fl_gen_u(g, "version", FLOWS_JSON_VERSION));
    TRY(argus_json_key(g, "inputs"));
    CK(yajl_gen_map_open(g));
    TRY(fl_gen_u(g, "files", in->files));
    TRY(fl_gen_u(g, "files_skipped", in->files_skipped));
    TRY(fl_gen_u(g, "csv_lines_bad", in->csv_lines_bad));
    TRY(fl_gen_u(g, "packets_bad_framing", in->packets_bad_framing));
    TRY(fl_gen_u(g, "udp_datagrams", in->udp_datagrams));
    TRY(fl_gen_u(g, "port_lines_bad", in->port_lines_bad));
    TRY(fl_gen_u(g, "records_kept", f->nstore));
    TRY(fl_gen_u(g, "records_filtered", f->filtered));
    TRY(fl_gen_u(g, "records_dropped", f->dropped));
    TRY(fl_gen_u(g, "records_duplicate", f->duplicates));
    TRY(fl_gen_u(g, "records_expired", f->expired));
    TRY(argus_json_key(g, "window_ns"));
    if (f->o.window_ns) {
        CK(yajl_gen_array_open(g));   /* the flow time analysed: [from, to] */
        TRY(argus_json_uint(g, f->t_newest > f->o.window_ns ? f->t_newest - f->o.window_ns : 0));
        TRY(argus_json_uint(g, f->t_newest));
        CK(yajl_gen_array_close(g));
    } else
        CK(yajl_gen_null(g));
    if (in->decode) {
        const struct argus_flow_decode_stats *d = in->decode;
        TRY(argus_json_key(g, "export"));
        CK(yajl_gen_map_open(g));
        TRY(fl_gen_u(g, "packets", d->packets));
        TRY(fl_gen_u(g, "packets_bad", d->packets_bad));
        TRY(fl_gen_u(g, "records", d->records));
        TRY(fl_gen_u(g, "options_records", d->options_records));
        TRY(fl_gen_u(g, "templates", d->templates));
        TRY(fl_gen_u(g, "withdrawn", d->withdrawn));
        TRY(fl_gen_u(g, "sets_unknown_template", d->sets_unknown));
        TRY(fl_gen_u(g, "sets_bad", d->sets_bad));
        TRY(fl_gen_u(g, "untimed", d->untimed));
        TRY(fl_gen_u(g, "table_full", d->table_full));
        TRY(fl_gen_u(g, "sequence_gaps", d->seq_gaps));
        TRY(fl_gen_u(g, "lost_records", d->lost_records));
        TRY(fl_gen_u(g, "lost_packets", d->lost_packets));
        TRY(fl_gen_u(g, "reordered", d->reordered));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_map_close(g));
    TRY(fl_gen_u(g, "endpoints", f->nep));
    TRY(fl_gen_u(g, "pairs", f->npair));
    TRY(fl_gen_u(g, "pairs_across_node_lists", f->pairs_across_lists));
    TRY(fl_gen_u(g, "flowlets", f->nfl));
    TRY(argus_json_key(g, "jobs"));
    CK(yajl_gen_array_open(g));
    for (size_t j = 0; j < f->njob; j++)
        TRY(gen_job(g, f, j));
    CK(yajl_gen_array_close(g));
    TRY(argus_json_key(g, "links"));   /* degraded first, then by z */
    CK(yajl_gen_array_open(g));
    for (size_t r = 0; r < f->nlink; r++) {
        const struct fl_link *l = &f->link[rank[r]];
        CK(yajl_gen_map_open(g));
        TRY(argus_json_key(g, "link"));
        TRY(argus_json_str(g, l->name));
        TRY(argus_json_key(g, "tier"));
        TRY(argus_json_str(g, l->tier ? "uplink" : "nic"));
        TRY(fl_gen_u(g, "flowlets", l->n));
        TRY(argus_json_key(g, "bw_p90_Bps"));
        TRY(argus_json_num(g, l->p90, 0));
        TRY(argus_json_key(g, "z"));
        TRY(argus_json_num(g, l->z, 2));
        TRY(argus_json_key(g, "drop"));
        TRY(argus_json_num(g, l->drop, 4));
        TRY(fl_gen_u(g, "windows", l->win_used));
        TRY(fl_gen_u(g, "windows_flagged", l->win_flagged));
        TRY(argus_json_key(g, "degraded"));
        CK(yajl_gen_bool(g, l->degraded));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    if (f->ports && f->ports->analysed)
        TRY(fl_gen_ports(g, f->ports, prank));
    if (f->xcheck && f->xcheck->ran)
        TRY(fl_gen_xcheck(g, f->xcheck));
    CK(yajl_gen_map_close(g));
    return 0;
}

static void md(struct fl_sbuf *b, const struct argus_flows *f, const struct argus_flows_inputs *in,
               const size_t *rank, const size_t *prank)
{
    fl_sb_printf(b, "# argus-flows report\n\n## Inputs\n\n");
    fl_sb_printf(b, "- files: %" PRIu64 " (%" PRIu64 " skipped), UDP datagrams: %" PRIu64 "\n",
                 in->files, in->files_skipped, in->udp_datagrams);
    fl_sb_printf(b, "- records kept: %zu, filtered out: %" PRIu64 ", dropped (store full): %" PRIu64
                 ", duplicates (another observation point): %" PRIu64 ", bad CSV lines: %" PRIu64
                 "\n", f->nstore, f->filtered, f->dropped, f->duplicates, in->csv_lines_bad);
    if (f->o.window_ns)
        fl_sb_printf(b, "- window: the last %.3f s of flow time (to %" PRIu64 " ns); %" PRIu64
                     " older records expired, not analysed\n", (double)f->o.window_ns / 1e9,
                     f->t_newest, f->expired);
    if (in->decode)
        fl_sb_printf(b, "- export packets: %" PRIu64 " (%" PRIu64 " refused), sequence gaps: %"
                     PRIu64 " (%" PRIu64 " records, %" PRIu64 " packets lost), unknown-template "
                     "sets: %" PRIu64 ", bad sets: %" PRIu64 "\n", in->decode->packets,
                     in->decode->packets_bad, in->decode->seq_gaps, in->decode->lost_records,
                     in->decode->lost_packets, in->decode->sets_unknown, in->decode->sets_bad);
    fl_sb_printf(b, "\n## Jobs\n\n| job | endpoints | DP | PP | TP | steps | median step (ms) |"
                 " boundary agreement | slow steps |\n| --- | --- | --- | --- | --- | --- | --- |"
                 " --- | --- |\n");
    for (size_t j = 0; j < f->njob; j++) {
        const struct fl_job *jb = &f->job[j];
        fl_sb_printf(b, "| %zu | %zu | %d | %d | %d | %zu | %.3f | %.4f | %zu |\n", j, jb->nep,
                     jb->dp, jb->pp, jb->tp, jb->nsteps, jb->step_med_ns / 1e6,
                     jb->boundary_agreement, jb->nslow);
    }
    for (size_t j = 0; j < f->njob; j++)
        if (f->job[j].boundary_disagree)
            fl_sb_printf(b, "\nJob %zu: the step boundaries of the change-point detection and of "
                         "the baseline (largest jump of the sorted gaps) disagree on %zu of %zu "
                         "gaps; the change points are used.\n", j, f->job[j].boundary_disagree,
                         f->job[j].boundary_gaps);
    for (size_t j = 0; j < f->njob; j++) {
        const struct fl_job *jb = &f->job[j];
        if (!jb->nslow)
            continue;
        fl_sb_printf(b, "\n### Job %zu: slow steps\n\n| step | duration (ms) | z | "
                     "latest DP group |"
                     "\n| --- | --- | --- | --- |\n", j);
        for (size_t i = 0; i < jb->nslow; i++)
            fl_sb_printf(b, "| %zu | %.3f | %.1f | %d |\n", jb->slow[i].step,
                         (double)jb->slow[i].dur_ns / 1e6, jb->slow[i].z, jb->slow[i].dp_group);
    }
    if (f->ports && f->ports->analysed)
        fl_md_ports(b, f->ports, prank);
    if (f->xcheck && f->xcheck->ran)
        fl_md_xcheck(b, f, f->xcheck);
    fl_sb_printf(b, "\n## Links (from the flows)\n\n");
    if (!f->nlink) {
        fl_sb_printf(b, "No topology given: no link view.\n");
        return;
    }
    fl_sb_printf(b, "| link | tier | flowlets | p90 (GB/s) | z | drop | windows flagged | "
                 "degraded |"
                 "\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t r = 0; r < f->nlink && r < 20; r++) {
        const struct fl_link *l = &f->link[rank[r]];
        fl_sb_printf(b, "| %s | %s | %zu | %.3f | %.1f | %.1f %% | %u / %u | %s |\n", l->name,
                     l->tier ? "uplink" : "nic", l->n, l->p90 / 1e9, l->z, 100 * l->drop,
                     l->win_flagged, l->win_used, l->degraded ? "yes" : "no");
    }
}

int argus_flows_write(const struct argus_flows *f, const struct argus_outdir *od,
                      const struct argus_flows_inputs *in, char *errbuf, size_t errlen)
{
    struct fl_sbuf b = {0};
    size_t *rank = links_ranked(f);
    size_t *prank = f->ports ? fl_ports_ranked(f->ports) : NULL;
    yajl_gen g = yajl_gen_alloc(NULL);
    const unsigned char *buf;
    size_t len;
    int rc = -ENOMEM;

    if (!rank || !g || (f->ports && !prank))
        goto out;
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_config(g, yajl_gen_indent_string, "  ");
    if ((rc = gen_doc(g, f, in, rank, prank)) != 0 ||
        yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
        argus_seterr(errbuf, errlen, "%s/flows.json: JSON generator failed", od->path);
        rc = rc ? rc : -EIO;
        goto out;
    }
    if ((rc = argus_file_write_at(od->fd, od->path, "flows.json", buf, len, errbuf, errlen)))
        goto out;
    fl_sb_printf(&b, "job,endpoint,host,gpu,dp_group,pipeline,stage,step,dp_start_ns,end_ns,"
                 "duration_ns\n");
    for (size_t e = 0; e < f->nep; e++) {
        const struct fl_ep *ep = &f->ep[e];
        char ip[64];
        ipstr(f, (uint32_t)e, ip, sizeof ip);
        for (size_t s = 0; s < ep->nsteps; s++)
            if (ep->step_end[s] == 0)   /* missing: its records were lost */
                continue;
            else
                fl_sb_printf(&b, "%d,%s,%s,%d,%d,%d,%d,%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                      ep->job, ip, ep->topo ? ep->topo->host : "", ep->topo ? ep->topo->gpu : -1,
                      ep->dp_group, ep->pipeline, ep->stage, s, ep->dp_start[s],
                      ep->step_end[s],
                             s && ep->step_end[s - 1] ? ep->step_end[s] - ep->step_end[s - 1] : 0);
    }
    if (b.oom) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = argus_file_write_at(od->fd, od->path, "timeline.csv", b.p, b.n, errbuf, errlen)))
        goto out;
    b.n = 0;
    md(&b, f, in, rank, prank);
    if (b.oom) {
        rc = -ENOMEM;
        goto out;
    }
    rc = argus_file_write_at(od->fd, od->path, "flows.md", b.p, b.n, errbuf, errlen);
out:
    if (rc == -ENOMEM)
        argus_seterr(errbuf, errlen, "%s: out of memory writing the report", od->path);
    if (g)
        yajl_gen_free(g);
    free(rank);
    free(prank);
    free(b.p);
    return rc;
}

void argus_flows_summary(const struct argus_flows *f, char *out, size_t outlen)
{
    size_t deg = 0, slow = 0;
    for (size_t i = 0; i < f->nlink; i++)
        deg += f->link[i].degraded;
    for (size_t j = 0; j < f->njob; j++)
        slow += f->job[j].nslow;
    int n = snprintf(out, outlen, "%zu records, %zu endpoints, %zu jobs", f->nstore, f->nep,
                     f->njob);
    for (size_t j = 0; j < f->njob && j < 4 && n >= 0 && (size_t)n < outlen; j++)
        n += snprintf(out + n, outlen - (size_t)n, "; job %zu: DP %d x PP %d x TP %d, %zu steps",
                      j, f->job[j].dp, f->job[j].pp, f->job[j].tp, f->job[j].nsteps);
    if (n >= 0 && (size_t)n < outlen)
        n += snprintf(out + n, outlen - (size_t)n, "; %zu slow steps, %zu degraded links", slow,
                      deg);
    if (f->ports && f->ports->analysed && n >= 0 && (size_t)n < outlen) {
        size_t dp = 0;
        for (size_t i = 0; i < f->ports->n; i++)
            dp += f->ports->p[i].degraded;
        snprintf(out + n, outlen - (size_t)n, ", %zu of %zu switch ports degraded", dp,
                 f->ports->n);
    }
}
