/* spool.c — glue between argus-analyze and Argus's own saved data: format detection
 * by content for every importer, and spool files (summaries.argus, common/spool.h) read
 * straight into the job store with the store's own record decoder (no second decoder).
 * A spool is its segment directory's files (summaries.d/, older parts that rank 0 moved
 * there and downsampled under ARGUS_SPOOL_MAX, pipeline/spoolcap.h) in name order, then
 * the file itself. What a read skipped (damage, a cut end, missing segments) and what the
 * writer downsampled (its marks) are described in one line each.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "import/import.h"
#include "common/grow.h"
#include "common/spool.h"
#include "common/wire.h"
#include "common/wire_rows.h"

const char *argus_import_format_name(int fmt)
{
    switch (fmt) {
    case ARGUS_FMT_KINETO: return "kineto";
    case ARGUS_FMT_SPOOL: return "spool";
    case ARGUS_FMT_STEPS_CSV: return "steps.csv";
    default: return "unknown";
    }
}

int argus_import_detect(const char *path, char *errbuf, size_t errlen)
{
    unsigned char buf[256];
    gzFile gz = gzopen(path, "rb");
    int n;
    size_t i = 0;

    if (!gz) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -errno;
    }
    n = gzread(gz, buf, sizeof buf);
    gzclose(gz);
    if (n < 0) {
        snprintf(errbuf, errlen, "%s: cannot read (damaged gzip?)", path);
        return -EIO;
    }
    if (argus_spool_sniff(buf, (size_t)n))
        return ARGUS_FMT_SPOOL;
    if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
        i = 3; /* UTF-8 byte order mark */
    while (i < (size_t)n && isspace(buf[i]))
        i++;
    if (i < (size_t)n && (buf[i] == '{' || buf[i] == '['))
        return ARGUS_FMT_KINETO;
    if ((size_t)n - i >= 10 && memcmp(buf + i, "step,rank,", 10) == 0)
        return ARGUS_FMT_STEPS_CSV;
    snprintf(errbuf, errlen, "%s: unknown format: neither a Kineto/Chrome trace (JSON), an "
             "Argus spool nor a steps.csv%s", path, n == 0 ? " (empty file)" : "");
    return ARGUS_FMT_UNKNOWN;
}

/* ---- one spool and its segments ------------------------------------------------------ */

struct walk {
    const char *path;                     /* the spool named */
    argus_spool_record_fn fn;
    void *ctx;
    struct argus_spool_loss sum;          /* over every file read */
    uint64_t files_damaged, first_offset;
    char first[1200];                     /* the first damage or cut, one line */
    uint64_t last_step, step_before, first_after; /* summary steps: the latest, and those
                                           * around the first damage */
    int seen_step, dmg_open, after_set;
    uint64_t seg_marked;                  /* a SEGMENT mark: segments 1..this precede */
    uint64_t segs_read, segs_dropped;
    /* downsampling marks: the step span each kind covers, in total */
    uint64_t thin_lo, thin_hi, thin_full, dec_lo, dec_hi, drop_lo, drop_hi;
    uint32_t dec_level;
    int any_thin, any_dec, any_drop;
};

/* One message line, cut to fit. */
static void line(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

static void span(uint64_t *lo, uint64_t *hi, int *any, uint64_t a, uint64_t b)
{
    if (!*any || a < *lo)
        *lo = a;
    if (!*any || b > *hi)
        *hi = b;
    *any = 1;
}

static int walk_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct walk *w = ctx;

    if (type == ARGUS_REC_SUMMARY && len >= ARGUS_WIRE_HDR + 1) {
        /* the step, cheaply: every summary version starts its payload with it (u64 in
         * version 1, a varint later); only used to say where damage was */
        const uint8_t *p = rec + ARGUS_WIRE_HDR;
        uint64_t step = 0;
        if (rec[4] == 1 && len >= ARGUS_WIRE_HDR + 8) {
            for (int i = 7; i >= 0; i--)
                step = step << 8 | p[i];
        } else {
            for (unsigned sh = 0; sh < 64 && p < rec + len; sh += 7, p++) {
                step |= (uint64_t)(*p & 0x7f) << sh;
                if (!(*p & 0x80))
                    break;
            }
        }
        if (w->dmg_open && !w->after_set) {
            w->first_after = step;
            w->after_set = 1;
        }
        if (!w->seen_step || step > w->last_step)
            w->last_step = step;
        w->seen_step = 1;
    }
    return w->fn ? w->fn(w->ctx, type, rec, len) : 0;
}

static void walk_damage(void *ctx, uint64_t off, const char *what)
{
    struct walk *w = ctx;
    (void)off;
    (void)what;
    if (!w->dmg_open && w->files_damaged == 0 && w->seen_step) {
        w->dmg_open = 1;
        w->step_before = w->last_step;
    }
}

static void walk_mark(void *ctx, const struct argus_spool_mark *m)
{
    struct walk *w = ctx;

    if (m->kind == ARGUS_SPOOL_MARK_SEGMENT) {
        w->seg_marked = m->a;
    } else if (m->kind == ARGUS_SPOOL_MARK_DOWNSAMPLED && m->a <= m->b) {
        if (m->level == 0) {
            span(&w->thin_lo, &w->thin_hi, &w->any_thin, m->a, m->b);
            w->thin_full += m->c;
        } else {
            span(&w->dec_lo, &w->dec_hi, &w->any_dec, m->a, m->b);
            w->dec_level = m->level > w->dec_level ? m->level : w->dec_level;
        }
    } else if (m->kind == ARGUS_SPOOL_MARK_DROPPED && m->a <= m->b) {
        span(&w->drop_lo, &w->drop_hi, &w->any_drop, m->a, m->b);
        w->segs_dropped = m->c > w->segs_dropped ? m->c : w->segs_dropped;
    }
}

/* One file of the spool. Negative: it could not be read at all (errbuf). */
static int walk_file(struct walk *w, int dirfd, const char *name, const char *shown,
                     char *errbuf, size_t errlen)
{
    const struct argus_spool_callbacks cb = {walk_rec, walk_damage, walk_mark, w};
    struct argus_spool_loss loss;
    char err[600];

    int rc = argus_spool_read_at(dirfd, name, shown, &cb, &loss, err, sizeof err);
    if (rc < 0) {
        snprintf(errbuf, errlen, "%s", err);
        return rc;
    }
    if (loss.regions || loss.truncated || loss.records_lost) {
        if (w->files_damaged++ == 0) {
            line(w->first, sizeof w->first, "%s", err);
            w->first_offset = loss.first_offset;
        }
        w->sum.regions += loss.regions;
        w->sum.file_bytes += loss.file_bytes;
        w->sum.stream_bytes += loss.stream_bytes;
        w->sum.records_lost += loss.records_lost;
        w->sum.truncated |= loss.truncated;
    }
    w->sum.records += loss.records;
    return rc; /* 0, or a callback's stop value */
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The segments (<dir>/<segdir>/NNNNNNNN.argus, name order), then the file. */
static int walk_spool(struct walk *w, char *errbuf, size_t errlen)
{
    const char *slash = strrchr(w->path, '/');
    const char *base = slash ? slash + 1 : w->path;
    char seg[512], dpath[4096];
    int rc = 0;

    if (argus_spool_segdir(base, seg, sizeof seg) == 0 &&
        (size_t)snprintf(dpath, sizeof dpath, "%.*s%s", slash ? (int)(slash - w->path + 1) : 0,
                         w->path, seg) < sizeof dpath) {
        int dfd = open(dpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        if (dfd >= 0 && !d)
            close(dfd);
        while (d && (e = readdir(d)) != NULL) {
            size_t l = strlen(e->d_name);
            if (e->d_name[0] == '.' || l < 7 || strcmp(e->d_name + l - 6, ".argus") != 0)
                continue;
            if (argus_grow(&names, &cap, n + 1, sizeof *names, 16) != 0 ||
                !(names[n] = strdup(e->d_name))) {
                rc = -ENOMEM;
                break;
            }
            n++;
        }
        if (names)
            qsort(names, n, sizeof *names, cmp_name);
        for (size_t i = 0; i < n && rc == 0; i++) {
            char shown[4600];
            snprintf(shown, sizeof shown, "%s/%s", dpath, names[i]);
            int frc = walk_file(w, dirfd(d), names[i], shown, errbuf, errlen);
            if (frc > 0)
                rc = frc;
            else if (frc == 0)
                w->segs_read++;
            else if (w->files_damaged++ == 0) /* unreadable segment: lost, not fatal */
                line(w->first, sizeof w->first, "%s", errbuf);
        }
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (d)
            closedir(d);
        if (rc)
            return rc;
    }
    rc = walk_file(w, AT_FDCWD, w->path, w->path, errbuf, errlen);
    if (rc == 0 && w->seg_marked > w->segs_read + w->segs_dropped && w->files_damaged++ == 0)
        line(w->first, sizeof w->first, "%s: %llu of the %llu older segments it continues "
                 "are missing from %s", w->path,
                 (unsigned long long)(w->seg_marked - w->segs_read - w->segs_dropped),
                 (unsigned long long)w->seg_marked, dpath);
    return rc;
}

/* The lines for lost[] and notes[] (import.h). */
static void describe(const struct walk *w, struct argus_spool_info *info)
{
    int n = 0;
    info->lost[0] = info->thinned[0] = '\0';
    if (w->files_damaged) {
        n = snprintf(info->lost, sizeof info->lost, "%s", w->first);
        if (w->sum.records_lost && n >= 0 && (size_t)n < sizeof info->lost)
            n += snprintf(info->lost + n, sizeof info->lost - (size_t)n, "; %llu records lost",
                          (unsigned long long)w->sum.records_lost);
        if (w->sum.regions && n >= 0 && (size_t)n < sizeof info->lost)
            n += snprintf(info->lost + n, sizeof info->lost - (size_t)n, "; %llu damaged "
                          "stretch%s skipped (%llu bytes of the file, %llu decompressed), "
                          "reading resumed after %s", (unsigned long long)w->sum.regions,
                          w->sum.regions == 1 ? "" : "es",
                          (unsigned long long)w->sum.file_bytes,
                          (unsigned long long)w->sum.stream_bytes,
                          w->sum.regions == 1 ? "it" : "each");
        if (w->dmg_open && w->after_set && n >= 0 && (size_t)n < sizeof info->lost)
            n += snprintf(info->lost + n, sizeof info->lost - (size_t)n, "; between step %llu "
                          "and step %llu", (unsigned long long)w->step_before,
                          (unsigned long long)w->first_after);
    }
    if (w->any_drop && n >= 0 && (size_t)n < sizeof info->lost)
        snprintf(info->lost + n, sizeof info->lost - (size_t)n, "%s%s: steps %llu..%llu were "
                 "dropped by the writer to stay under ARGUS_SPOOL_MAX", n ? "; " : "", w->path,
                 (unsigned long long)w->drop_lo, (unsigned long long)w->drop_hi);
    n = 0;
    if (w->any_thin)
        n = snprintf(info->thinned, sizeof info->thinned, "%s: steps %llu..%llu downsampled "
                     "by the writer (ARGUS_SPOOL_MAX): thin rows (step and phase times, no "
                     "kernel detail) except %llu steps near anomalies", w->path,
                     (unsigned long long)w->thin_lo, (unsigned long long)w->thin_hi,
                     (unsigned long long)w->thin_full);
    if (w->any_dec && n >= 0 && (size_t)n < sizeof info->thinned)
        snprintf(info->thinned + n, sizeof info->thinned - (size_t)n, "%s%s: steps %llu..%llu "
                 "thinned further: only steps that are multiples of %llu kept (as rows)",
                 n ? "; " : "", w->path, (unsigned long long)w->dec_lo,
                 (unsigned long long)w->dec_hi, 1ull << (w->dec_level < 63 ? w->dec_level : 63));
}

struct scan {
    uint32_t n_ranks;
    struct argus_step_summary *s;
    char err[256];
};

static int scan_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct scan *sc = ctx;

    if (type == ARGUS_REC_SUMMARY) {
        if (argus_summary_decode(rec, len, sc->s, sc->err, sizeof sc->err) == 0 &&
            sc->s->rank + 1 > sc->n_ranks)
            sc->n_ranks = sc->s->rank + 1;
    } else if (type == ARGUS_REC_ROWS) { /* a condensed job's thin cells */
        struct argus_rows_reader rd;
        struct argus_agg_row row;
        if (argus_rows_open(rec, len, &rd, sc->err, sizeof sc->err) == 0)
            while (argus_rows_next(&rd, &row, sc->err, sizeof sc->err) > 0)
                if (row.rank + 1 > sc->n_ranks)
                    sc->n_ranks = row.rank + 1;
    } else if (type == ARGUS_REC_JOBINFO) {
        struct argus_rank_info ri;
        if (argus_rankinfo_decode(rec, len, &ri, sc->err, sizeof sc->err) == 0) {
            if (ri.rank + 1 > sc->n_ranks)
                sc->n_ranks = ri.rank + 1;
            if (ri.world_size > sc->n_ranks && ri.world_size <= (1u << 24))
                sc->n_ranks = ri.world_size;
        }
    }
    return 0;
}

int argus_spool_scan_info(const char *path, struct argus_spool_info *info, char *errbuf,
                          size_t errlen)
{
    struct scan sc;
    struct walk *w;
    int rc;

    memset(&sc, 0, sizeof sc);
    memset(info, 0, sizeof *info);
    sc.s = malloc(sizeof *sc.s);
    w = calloc(1, sizeof *w);
    if (!sc.s || !w) {
        free(sc.s);
        free(w);
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    w->path = path;
    w->fn = scan_rec;
    w->ctx = &sc;
    rc = walk_spool(w, errbuf, errlen);
    info->n_ranks = sc.n_ranks;
    if (rc == 0) {
        describe(w, info);
        if (info->lost[0]) {
            snprintf(errbuf, errlen, "%s", info->lost);
            rc = 1;
        }
    }
    free(sc.s);
    free(w);
    return rc;
}

int argus_spool_scan(const char *path, uint32_t *n_ranks, char *errbuf, size_t errlen)
{
    struct argus_spool_info *info = malloc(sizeof *info);
    int rc;

    if (!info) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    rc = argus_spool_scan_info(path, info, errbuf, errlen);
    *n_ranks = info->n_ranks;
    free(info);
    return rc;
}

struct ingest {
    struct argus_jobstore *js;
    char err[512];
    uint64_t bad;
};

static int ingest_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct ingest *in = ctx;

    if (argus_jobstore_ingest(in->js, type, rec, len, in->err, sizeof in->err) != 0)
        in->bad++;
    return 0;
}

int argus_spool_import(const char *path, struct argus_jobstore *js, char *errbuf,
                       size_t errlen)
{
    struct ingest in;
    int rc;

    struct walk *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    memset(&in, 0, sizeof in);
    in.js = js;
    w->path = path;
    w->fn = ingest_rec;
    w->ctx = &in;
    rc = walk_spool(w, errbuf, errlen);
    if (rc == 0 && w->files_damaged) { /* said by argus_spool_scan_info already */
        snprintf(errbuf, errlen, "%s", w->first);
        rc = 1;
    }
    free(w);
    if (rc == 0 && in.bad) {
        snprintf(errbuf, errlen, "%s: %llu records rejected by the job store; first: %s",
                 path, (unsigned long long)in.bad, in.err);
        rc = -EPROTO;
    }
    return rc;
}
