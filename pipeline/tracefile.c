/* tracefile.c — one collected L4 plan becomes one Chrome-trace/Perfetto file under
 * the output directory (pipeline.h: argus_pipeline_write_trace): the targets' events merged
 * by report/trace_merge.h, the process labels, and otherData naming the anomaly, its steps,
 * the ranks and the clock refinement (docs/REPORT_SCHEMA.md, "traces/<kind>-steps-A-B.json").
 * The whole document goes through one yajl_gen (UTF-8 validated, strings escaped by YAJL;
 * docs/STYLE.md, "File formats and JSON") that streams into <name>.partial, created
 * relative to the output directory's traces/ fd (common/outdir.h: O_EXCL|O_NOFOLLOW) and
 * renamed when complete: the file is never held in memory. argus_trace_merge emits the events into
 * that same generator, inside the "traceEvents" array it has open. No MPI:
 * reduce/tracereq.c collects the replies. Must not print JSON by hand, must not leave a
 * partial file behind, never logs more than once per problem.
 */
#include "pipeline/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "common/outdir.h"
#include "report/trace_merge.h"


#define CK(x)                                                                                \
    do {                                                                                     \
        if ((x) != yajl_gen_status_ok)                                                       \
            return -EIO;                                                                     \
    } while (0)

static yajl_gen_status gstr(yajl_gen g, const char *s)
{
    return yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static yajl_gen_status gfixed(yajl_gen g, double v) /* 3 decimals: us to the ns */
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.3f", v);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return yajl_gen_invalid_number;
    return yajl_gen_number(g, buf, (size_t)n);
}

/* ---- the document ------------------------------------------------------------------ */

/* "key": [ranks]: which 0 the sources, 1 the peers, 2 those that did not answer. */
static int gen_ranks(yajl_gen g, const char *key, const struct argus_trace_plan *p,
                     const struct argus_pipeline_trace_reply *reply, int which)
{
    CK(gstr(g, key));
    CK(yajl_gen_array_open(g));
    for (uint32_t k = 0; k < p->ntargets; k++) {
        int src = k < p->nsources;
        int pick = which == 0 ? src : which == 1 ? !src : !reply[k].got;
        if (pick)
            CK(yajl_gen_integer(g, p->targets[k]));
    }
    CK(yajl_gen_array_close(g));
    return 0;
}

/* {"name": what, "ph": "M", "pid": pid, "tid": 0, "args": {key: value}}; value is the
 * string sval, or the integer ival when sval is NULL. */
static int gen_meta(yajl_gen g, const char *what, uint32_t pid, const char *key,
                    const char *sval, long long ival)
{
    CK(yajl_gen_map_open(g));
    CK(gstr(g, "name"));
    CK(gstr(g, what));
    CK(gstr(g, "ph"));
    CK(gstr(g, "M"));
    CK(gstr(g, "pid"));
    CK(yajl_gen_integer(g, pid));
    CK(gstr(g, "tid"));
    CK(yajl_gen_integer(g, 0));
    CK(gstr(g, "args"));
    CK(yajl_gen_map_open(g));
    CK(gstr(g, key));
    CK(sval ? gstr(g, sval) : yajl_gen_integer(g, ival));
    CK(yajl_gen_map_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* The elements after the merged events: per target, sources first, its sort index and
 * label (docs/REPORT_SCHEMA.md: sources on top, labelled; peers below). */
static int gen_labels(yajl_gen g, const struct argus_trace_plan *p, const uint32_t *kof,
                      uint32_t np)
{
    for (uint32_t m = 0; m < np; m++) {
        uint32_t k = kof[m];
        if (gen_meta(g, "process_sort_index", p->targets[k], "sort_index", NULL, k) ||
            gen_meta(g, "process_labels", p->targets[k], "labels",
                     k < p->nsources ? "source" : "healthy peer", 0))
            return -EIO;
    }
    return 0;
}

static int gen_other(yajl_gen g, const struct argus_trace_plan *p,
                     const struct argus_pipeline_trace_reply *reply,
                     const struct argus_trace_part *parts, uint32_t np, const char *kind,
                     uint64_t first, uint64_t last)
{
    CK(gstr(g, "otherData"));
    CK(yajl_gen_map_open(g));
    CK(gstr(g, "argus_anomaly"));
    CK(gstr(g, kind));
    CK(gstr(g, "steps"));
    CK(yajl_gen_array_open(g));
    CK(yajl_gen_integer(g, (long long)first));
    CK(yajl_gen_integer(g, (long long)last));
    CK(yajl_gen_array_close(g));
    CK(gstr(g, "clock"));
    CK(gstr(g, "us since the job started, on rank 0's clock: each rank's ping-pong offset "
               "(GPU time by its clock triple), then refined on the ends of collectives it "
               "shares with the reference rank"));
    if (gen_ranks(g, "sources", p, reply, 0) || gen_ranks(g, "peers", p, reply, 1) ||
        gen_ranks(g, "missing", p, reply, 2))
        return -EIO;
    CK(gstr(g, "clock_reference_rank"));
    CK(yajl_gen_integer(g, np ? parts[0].rank : 0));
    CK(gstr(g, "clock_refinement"));
    CK(yajl_gen_array_open(g));
    for (uint32_t m = 1; m < np; m++) {
        CK(yajl_gen_map_open(g));
        CK(gstr(g, "rank"));
        CK(yajl_gen_integer(g, parts[m].rank));
        CK(gstr(g, "shift_us"));
        CK(gfixed(g, (double)parts[m].refine_ns / 1000.0));
        CK(gstr(g, "collectives"));
        CK(yajl_gen_integer(g, parts[m].matched));
        CK(gstr(g, "mad_us"));
        CK(gfixed(g, parts[m].mad_ns / 1000.0));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

static void print_cb(void *ctx, const char *s, size_t len)
{
    fwrite(s, 1, len, (FILE *)ctx);
}

/* Stream the whole document into out. 0, or as argus_trace_merge (report/trace_merge.h):
 * -EINVAL (a reply is not a JSON array), -ENOMEM, -EIO (g refused a token). */
static int gen_document(FILE *out, const struct argus_trace_plan *p,
                        const struct argus_pipeline_trace_reply *reply,
                        struct argus_trace_part *parts, const uint32_t *kof, uint32_t np,
                        const char *kind, uint64_t first, uint64_t last)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = -EIO, wrote;

    if (!g)
        return -ENOMEM;
    if (!yajl_gen_config(g, yajl_gen_print_callback, print_cb, out) ||
        !yajl_gen_config(g, yajl_gen_validate_utf8, 1))
        goto out;
    if (yajl_gen_map_open(g) != yajl_gen_status_ok ||
        gstr(g, "displayTimeUnit") != yajl_gen_status_ok ||
        gstr(g, "ns") != yajl_gen_status_ok ||
        gstr(g, "traceEvents") != yajl_gen_status_ok ||
        yajl_gen_array_open(g) != yajl_gen_status_ok)
        goto out;
    rc = argus_trace_merge(g, parts, np, &wrote);
    if (rc == 0)
        rc = gen_labels(g, p, kof, np);
    if (rc == 0 && yajl_gen_array_close(g) != yajl_gen_status_ok)
        rc = -EIO;
    if (rc == 0)
        rc = gen_other(g, p, reply, parts, np, kind, first, last);
    if (rc == 0 && yajl_gen_map_close(g) != yajl_gen_status_ok)
        rc = -EIO;
    if (rc == 0)
        fputc('\n', out);
out:
    yajl_gen_free(g);
    return rc;
}

/* ---- the file ---------------------------------------------------------------------- */

/* The traces/ directory to write under: tp->out's (borrowed, *own 0), else dir/traces
 * opened for this call without following a symlink at traces (*own 1). An fd or -1 with
 * err set. */
static int traces_dir(const struct argus_traceplan *tp, const char *dir, int *own, char *err,
                      size_t errlen)
{
    *own = 0;
    if (tp->out && tp->out->traces_fd >= 0)
        return tp->out->traces_fd;
    if (tp->out) {
        argus_seterr(err, errlen, "%s/traces: not open", dir);
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int tfd = dfd >= 0 ? openat(dfd, "traces", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                       : -1;
    if (tfd < 0)
        argus_seterr(err, errlen, "%s/traces: cannot open: %s", dir, strerror(errno));
    if (dfd >= 0)
        close(dfd);
    *own = tfd >= 0;
    return tfd;
}

static int failed(struct argus_trace_plan *p, const char *why)
{
    p->state = ARGUS_TRACE_FAILED;
    snprintf(p->why, sizeof p->why, "%s", why);
    return 0;
}

int argus_pipeline_write_trace(struct argus_traceplan *tp, size_t i, const char *dir,
                               const struct argus_pipeline_trace_reply *reply)
{
    struct argus_trace_plan *p = &tp->v[i];
    uint64_t first = UINT64_MAX, last = 0, events = 0;
    uint32_t answered = 0;
    char rel[128], shown[4400], why[sizeof p->why];

    for (uint32_t k = 0; k < p->ntargets; k++) {
        if (!reply[k].got)
            continue;
        answered++;
        events += reply[k].events;
        if (reply[k].events) {
            if (reply[k].first_step < first)
                first = reply[k].first_step;
            if (reply[k].last_step > last)
                last = reply[k].last_step;
        }
    }
    const char *kind = argus_pipeline_kind_name(p->kind);
    if (events == 0) {
        if (answered)
            snprintf(why, sizeof why, "the rings no longer held steps %llu-%llu "
                     "(ARGUS_RING_EVENTS too small for the window)",
                     (unsigned long long)p->from, (unsigned long long)p->to);
        else
            snprintf(why, sizeof why, "no target rank answered");
        return failed(p, why);
    }
    snprintf(rel, sizeof rel, "traces/%s-steps-%llu-%llu.json", kind,
             (unsigned long long)first, (unsigned long long)last);
    for (size_t j = 0; j < tp->n; j++)
        if (j != i && strcmp(tp->v[j].path, rel) == 0) {
            snprintf(rel, sizeof rel, "traces/%s-%zu-steps-%llu-%llu.json", kind, i + 1,
                     (unsigned long long)first, (unsigned long long)last);
            break;
        }
    const char *base = rel + strlen("traces/"); /* the name under traces/ */
    snprintf(shown, sizeof shown, "%s/traces",
             tp->out && tp->out->path[0] ? tp->out->path : dir);
    struct argus_trace_part parts[ARGUS_TRACE_TARGETS];
    uint32_t kof[ARGUS_TRACE_TARGETS], np = 0;
    for (uint32_t k = 0; k < p->ntargets; k++)
        if (reply[k].got) { /* sources first: the first answering source is the reference */
            parts[np] = (struct argus_trace_part){.rank = p->targets[k], .json = reply[k].json,
                                                  .len = reply[k].len};
            kof[np++] = k;
        }
    char err[512] = "";
    int own, tfd = traces_dir(tp, dir, &own, err, sizeof err);
    if (tfd < 0)
        goto cannot;
    int fd = argus_file_partial_open(tfd, shown, base, err, sizeof err);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            argus_seterr(err, sizeof err, "%s/%s.partial: %s", shown, base, strerror(errno));
            argus_file_partial_commit(tfd, shown, base, fd, 0, NULL, 0);
        }
        goto cannot_close;
    }
    int rc = gen_document(f, p, reply, parts, kof, np, kind, first, last);
    /* flushed, synced and closed here (the commit is told the fd is closed) */
    int bad = rc == 0 && (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0);
    int e = errno;
    if (fclose(f) != 0 && rc == 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        argus_seterr(err, sizeof err, "%s/%s.partial: write: %s", shown, base,
                     strerror(e ? e : EIO));
        rc = -EIO;
    } else if (rc != 0 && rc != -EINVAL && rc != -ENOMEM) {
        argus_seterr(err, sizeof err, "%s/%s.partial: the trace could not be generated", shown,
                     base);
    }
    if (argus_file_partial_commit(tfd, shown, base, -1, rc == 0, err, sizeof err) != 0 &&
        rc == 0)
        rc = -EIO;
    if (own)
        close(tfd);
    if (rc == -EINVAL || rc == -ENOMEM)
        return failed(p, rc == -EINVAL ? "a reply is not a JSON array of events"
                                       : "the replies could not be merged (out of memory)");
    if (rc != 0)
        goto cannot;
    snprintf(p->path, sizeof p->path, "%s", rel);
    p->state = ARGUS_TRACE_WRITTEN;
    return 1;
cannot_close:
    if (own)
        close(tfd);
cannot:
    argus_log_once(ARGUS_LOG_WARN, "trace-write", "%s; L4 traces are not kept", err);
    snprintf(why, sizeof why, "cannot write %s", rel);
    return failed(p, why);
}
