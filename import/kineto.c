/* kineto.c — the Kineto / PyTorch-profiler (Chrome-trace JSON) importer's driver
 * (import/import.h: argus_kineto_import): the file read with zlib's gzread in 64 KB buffers
 * (plain files pass through), through the clip filter (import/kineto_clip.c) into YAJL's
 * streaming parser, whose callbacks (import/kineto_json.c, import/kineto_event.c) fill
 * compact tables (import/import_int.h), so no DOM and no copy of the JSON text is ever
 * held. Then the trace is judged (a traceEvents array, a rank below world_size and
 * --max-ranks, some GPU event or step) and its tables fed through the summariser, from
 * memory or from the spilled runs (import/kineto_feed.c, import/kineto_stream.c).
 * Memory is bounded by opts.max_mem: past it the tables go to a temporary file and are
 * summarised from there (import/kineto_spill.c).
 * Must not crash on any input; a bad file is one line in errbuf naming the file and the
 * byte offset, never a print.
 */
#include "import/kineto_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "import/pystacks.h"

#define CHUNK 65536

static int parse_file(const char *path, struct parser *p, char *errbuf, size_t errlen)
{
    unsigned char *buf = NULL;
    yajl_handle h = NULL;
    gzFile gz = NULL;
    uint64_t off = 0;
    int rc = 0, n;
    struct kt_clip *clip = calloc(1, sizeof *clip);

    gz = gzopen(path, "rb");
    buf = malloc(CHUNK);
    h = yajl_alloc(&kt_json_callbacks, NULL, p);
    if (!gz || !buf || !h || !clip) {
        rc = gz ? -ENOMEM : -errno;
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, gz ? "out of memory"
                                                                 : strerror(errno));
        goto out;
    }
    gzbuffer(gz, CHUNK);
    yajl_config(h, yajl_allow_partial_values, 0);
    while ((n = gzread(gz, buf, CHUNK)) > 0) {
        size_t kept = kt_clip(clip, buf, (size_t)n);
        yajl_status st = kept ? yajl_parse(h, buf, kept) : yajl_status_ok;
        if (st != yajl_status_ok) {
            uint64_t at = kt_clip_offset(clip, off, yajl_get_bytes_consumed(h));
            if (p->err[0]) {
                snprintf(errbuf, errlen, "%s: %s at byte %llu", path, p->err,
                         (unsigned long long)at);
            } else {
                unsigned char *m = yajl_get_error(h, 0, NULL, 0);
                char *nl = m ? strchr((char *)m, '\n') : NULL;
                if (nl)
                    *nl = '\0';
                snprintf(errbuf, errlen, "%s: not valid JSON at byte %llu: %s", path,
                         (unsigned long long)at, m ? (const char *)m : "parse error");
                if (m)
                    yajl_free_error(h, m);
            }
            rc = -EPROTO;
            goto out;
        }
        off += (uint64_t)n;
    }
    int ze = Z_OK;
    const char *zm = gzerror(gz, &ze);
    if (n < 0 || (ze != Z_OK && ze != Z_STREAM_END)) {
        size_t pl = strlen(path);
        if (zm && strncmp(zm, path, pl) == 0 && zm[pl] == ':')
            zm += pl + 2; /* gzerror repeats the path */
        snprintf(errbuf, errlen, "%s: damaged gzip data after %llu decompressed bytes: %s",
                 path, (unsigned long long)off, zm ? zm : "read error");
        rc = -EIO;
        goto out;
    }
    if (yajl_complete_parse(h) != yajl_status_ok || p->depth != 0 || off == 0) {
        snprintf(errbuf, errlen, "%s: truncated JSON: the document ends early at byte %llu",
                 path, (unsigned long long)off);
        rc = -EPROTO;
        goto out;
    }
out:
    p->t->info->bytes = off;
    if (clip) {
        p->t->info->clipped = clip->clipped;
        p->t->info->bom = clip->bom_seen;
    }
    free(clip);
    if (h)
        yajl_free(h);
    if (gz)
        gzclose(gz);
    free(buf);
    return rc;
}

/* The trace's CPU ProfilerStep ranges to the host stack collector (pystacks.h). */
static void py_steps(struct argus_pystacks *ps, const struct kt_trace *t)
{
    const struct kt_range *r = t->steps.v;
    struct argus_pystacks_step *st = t->steps.n ? malloc(t->steps.n * sizeof *st) : NULL;
    size_t n = 0;
    if (!st)
        return;
    for (size_t i = 0; i < t->steps.n; i++)
        if (!r[i].gpu)
            st[n++] = (struct argus_pystacks_step){r[i].step, r[i].start, r[i].end};
    argus_pystacks_steps(ps, st, n);
    free(st);
}

int argus_kineto_import(const char *path, const struct argus_kineto_opts *o,
                        const struct argus_import_sink *sink, struct argus_kineto_info *info,
                        char *errbuf, size_t errlen)
{
    struct kt_trace t;
    struct parser *p;
    int rc;

    memset(info, 0, sizeof *info);
    info->rank = -1;
    info->device = -1;
    memset(&t, 0, sizeof t);
    t.kernels.elem = sizeof(struct kt_kernel);
    t.launches.elem = sizeof(struct kt_launch);
    t.steps.elem = sizeof(struct kt_range);
    t.ranges.elem = sizeof(struct kt_range);
    t.max_mem = o && o->max_mem ? o->max_mem : (size_t)48 << 20;
    t.max_mem = t.max_mem < KT_MIN_MEM ? KT_MIN_MEM : t.max_mem;
    t.spill_fd = -1;
    t.info = info;
    p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    p->t = &t;
    p->ps = o ? o->pystacks : NULL;
    if (p->ps)
        argus_pystacks_discard(p->ps); /* a new trace: nothing of an earlier one pending */
    rc = parse_file(path, p, errbuf, errlen);
    if (rc)
        goto out;
    if (!p->ev_depth) {
        snprintf(errbuf, errlen, "%s: not a Chrome/Kineto trace: no traceEvents array",
                 path);
        rc = -EPROTO;
        goto out;
    }
    if (t.over_mem) {
        if (t.spill_err[0])
            snprintf(errbuf, errlen, "%s: %s; not analysed", path, t.spill_err);
        else
            snprintf(errbuf, errlen, "%s: trace too large: its steps and kernel names alone "
                     "pass %zu KiB of memory; not analysed", path, t.max_mem >> 10);
        rc = -EFBIG;
        goto out;
    }
    if (info->rank < 0) {
        info->rank = kt_rank_from_name(path);
        info->rank_from_name = 1;
    }
    if (info->rank < 0) {
        snprintf(errbuf, errlen, "%s: no rank: no distributedInfo.rank and no rank number "
                 "in the file name (name it rank-N.json)", path);
        rc = -EINVAL;
        goto out;
    }
    const uint32_t max_ranks = o && o->max_ranks ? o->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    if (info->world_size > 0 && info->rank >= info->world_size) {
        snprintf(errbuf, errlen, "%s: rank %d%s is not below distributedInfo.world_size %d",
                 path, info->rank, info->rank_from_name ? " (from the file name)" : "",
                 info->world_size);
        rc = -ERANGE;
        goto out;
    }
    if ((uint32_t)info->rank >= max_ranks) {
        snprintf(errbuf, errlen, "%s: rank %d%s is at or past the bound of %lu ranks "
                 "(--max-ranks)", path, info->rank,
                 info->rank_from_name ? " (from the file name)" : "", (unsigned long)max_ranks);
        rc = -ERANGE;
        goto out;
    }
    if (info->kernels == 0 && t.steps.n == 0) {
        snprintf(errbuf, errlen, "%s: empty rank: no GPU events and no ProfilerStep#N "
                 "among %llu events (%llu malformed)", path, (unsigned long long)info->events,
                 (unsigned long long)info->malformed);
        rc = -ENODATA;
        goto out;
    }
    info->spilled = t.n_runs ? t.n_runs + 1 : 0;
    if (t.n_runs)
        rc = kt_feed_stream(&t, path, o, sink, errbuf, errlen);
    else
        rc = kt_feed(&t, path, o, sink, errbuf, errlen);
    info->spill_bytes = t.spill_bytes;
    if (rc == 0 && p->ps)
        py_steps(p->ps, &t);
out:
    kt_trace_free(&t);
    free(p);
    return rc;
}

