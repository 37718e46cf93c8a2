/* spoolcap.c — rank 0's spool under ARGUS_SPOOL_MAX (spoolcap.h): head rotation into
 * segments, thinning past the recent horizon, oldest-first decimation and removal, each
 * rewrite marked. */
#include "pipeline/spoolcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/aggregate.h"
#include "common/grow.h"
#include "common/wire.h"
#include "common/wire_rows.h"

struct seg {
    uint64_t seq, bytes, lo, hi; /* lo > hi: steps unknown yet (never rewritten) */
    int level;                   /* -1: full detail */
};

struct argus_spoolcap {
    uint64_t max, seg_bytes;
    int segfd; /* the segment directory, -1 until the first rotation */
    struct seg *segs;
    size_t n, cap;
    uint64_t next_seq, removed, drop_lo, drop_hi;
    int dropped;
    struct argus_spoolcap_stats st;
    /* one rewrite */
    struct argus_step_summary *s;
    struct argus_agg_row rows[ARGUS_ROWS_PER_RECORD];
    size_t nrows;
    uint8_t *rec;
    size_t reccap;
    struct argus_spool_writer *out;
    const struct argus_spoolcap_keep *keep;
    size_t nkeep;
    int level, err;
    uint64_t lo, hi, full;
    int any;
};

int argus_spoolcap_create(uint64_t max, struct argus_spoolcap **out)
{
    struct argus_spoolcap *c = calloc(1, sizeof *c);

    *out = NULL;
    if (!c)
        return -ENOMEM;
    c->max = max;
    c->seg_bytes = max / 16 > 4096 ? max / 16 : 4096;
    c->segfd = -1;
    c->next_seq = 1;
    c->reccap = argus_rows_encoded_max(ARGUS_ROWS_PER_RECORD);
    c->rec = malloc(c->reccap);
    c->s = malloc(sizeof *c->s);
    if (!c->rec || !c->s) {
        argus_spoolcap_free(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

void argus_spoolcap_free(struct argus_spoolcap *c)
{
    if (!c)
        return;
    if (c->segfd >= 0)
        close(c->segfd);
    free(c->segs);
    free(c->rec);
    free(c->s);
    free(c);
}

static void seg_name(char *buf, size_t len, uint64_t seq)
{
    snprintf(buf, len, "%08llu.argus", (unsigned long long)seq);
}

static uint64_t file_size(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---- one rewrite ---------------------------------------------------------------------- */

static int keep_whole(const struct argus_spoolcap *c, uint64_t step)
{
    for (size_t i = 0; i < c->nkeep; i++)
        if (step >= c->keep[i].first && step <= c->keep[i].last)
            return 1;
    return 0;
}

static int row_cmp(const void *pa, const void *pb)
{
    const struct argus_agg_row *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return memcmp(a, b, sizeof *a);
}

static void emit_rows(struct argus_spoolcap *c)
{
    if (c->nrows == 0 || c->err)
        return;
    qsort(c->rows, c->nrows, sizeof c->rows[0], row_cmp);
    long n = argus_rows_encode(c->rows, c->nrows, c->rec, c->reccap);
    c->nrows = 0;
    if (n < 0 || argus_spool_append(c->out, c->rec, (size_t)n) != 0)
        c->err = n < 0 ? (int)n : -EIO;
}

static void push_row(struct argus_spoolcap *c, const struct argus_agg_row *r)
{
    if (c->level > 0 && r->step % (1ull << c->level) != 0)
        return;
    c->rows[c->nrows++] = *r;
    if (c->nrows == ARGUS_ROWS_PER_RECORD)
        emit_rows(c);
}

static void seen_step(struct argus_spoolcap *c, uint64_t step)
{
    if (!c->any || step < c->lo)
        c->lo = step;
    if (!c->any || step > c->hi)
        c->hi = step;
    c->any = 1;
}

static uint32_t us(uint64_t ns)
{
    uint64_t u = ns / 1000;
    return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

/* The row aggregate.c makes of a summary (argus_agg_add_summary). */
static void row_of(const struct argus_step_summary *s, struct argus_agg_row *r)
{
    memset(r, 0, sizeof *r);
    r->step = s->step;
    r->rank = s->rank;
    r->flags = s->flags & ~(uint32_t)(ARGUS_SF_EXEMPLAR | ARGUS_SF_THIN);
    r->start_ns = (uint64_t)((int64_t)s->start_ns + s->clock_offset_ns);
    r->us[0] = us(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0);
    r->us[1] = us(s->phase_wall_ns[ARGUS_PH_FORWARD]);
    r->us[2] = us(s->phase_wall_ns[ARGUS_PH_BACKWARD]);
    r->us[3] = us(s->phase_wall_ns[ARGUS_PH_OPTIMIZER]);
    r->us[4] = us(s->phase_wall_ns[ARGUS_PH_COMM]);
    r->us[5] = us(s->host_gap_ns);
    r->us[6] = us(s->compute_ns);
    r->us[7] = us(s->collective_ns + s->p2p_ns);
}

static int rw_record(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct argus_spoolcap *c = ctx;
    char err[256];

    if (c->err)
        return 1;
    if (type == ARGUS_REC_SUMMARY) {
        if (argus_summary_decode(rec, len, c->s, err, sizeof err) != 0)
            return 0; /* damaged: the reader counted it */
        seen_step(c, c->s->step);
        if (c->level == 0 && !(c->s->flags & ARGUS_SF_THIN) && keep_whole(c, c->s->step)) {
            c->full++;
            if (argus_spool_append(c->out, rec, len) != 0)
                c->err = -EIO;
            return c->err != 0;
        }
        struct argus_agg_row r;
        row_of(c->s, &r);
        push_row(c, &r);
    } else if (type == ARGUS_REC_ROWS) {
        struct argus_rows_reader rd;
        struct argus_agg_row r;
        if (argus_rows_open(rec, len, &rd, err, sizeof err) != 0)
            return 0;
        while (argus_rows_next(&rd, &r, err, sizeof err) > 0) {
            seen_step(c, r.step);
            push_row(c, &r);
        }
    } else if (argus_spool_append(c->out, rec, len) != 0) { /* names, rank info */
        c->err = -EIO;
    }
    return c->err != 0;
}

static void rw_mark(void *ctx, const struct argus_spool_mark *m)
{
    struct argus_spoolcap *c = ctx;
    if (m->kind == ARGUS_SPOOL_MARK_SEGMENT && !c->err && argus_spool_mark(c->out, m) != 0)
        c->err = -EIO; /* DOWNSAMPLED and DROPPED are written afresh */
}

/* Rewrite segment i at level (0: thin rows but near anomalies; k: multiples of 2^k). */
static int rewrite(struct argus_spoolcap *c, size_t i, int level, char *errbuf, size_t errlen)
{
    struct seg *g = &c->segs[i];
    char name[32], tmp[40];
    const struct argus_spool_callbacks cb = {rw_record, NULL, rw_mark, c};
    int rc;

    seg_name(name, sizeof name, g->seq);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    unlinkat(c->segfd, tmp, 0);
    if ((rc = argus_spool_open_write_at(c->segfd, tmp, tmp, &c->out, errbuf, errlen)) != 0)
        return rc;
    c->level = level;
    c->err = 0;
    c->nrows = 0;
    c->full = 0;
    c->any = 0;
    rc = argus_spool_read_at(c->segfd, name, name, &cb, NULL, errbuf, errlen);
    emit_rows(c);
    if (rc < 0 || c->err) {
        argus_spool_close(c->out);
        c->out = NULL;
        unlinkat(c->segfd, tmp, 0);
        if (!errbuf[0])
            snprintf(errbuf, errlen, "segment %s: rewrite failed", name);
        return rc < 0 ? rc : -EIO;
    }
    if (c->any) {
        g->lo = c->lo;
        g->hi = c->hi;
        const struct argus_spool_mark m = {ARGUS_SPOOL_MARK_DOWNSAMPLED, (uint32_t)level,
                                           c->lo, c->hi, c->full};
        rc = argus_spool_mark(c->out, &m);
    }
    if (rc == 0 && c->dropped && i == 0) {
        const struct argus_spool_mark m = {ARGUS_SPOOL_MARK_DROPPED, 0, c->drop_lo, c->drop_hi,
                                           c->removed};
        rc = argus_spool_mark(c->out, &m);
    }
    int crc = argus_spool_close(c->out);
    c->out = NULL;
    if (rc == 0 && crc == 0 && renameat(c->segfd, tmp, c->segfd, name) != 0)
        rc = -errno;
    if (rc || crc) {
        unlinkat(c->segfd, tmp, 0);
        snprintf(errbuf, errlen, "segment %s: cannot write its downsampled copy", name);
        return rc ? rc : crc;
    }
    g->level = level;
    g->bytes = file_size(c->segfd, name);
    c->st.rewrites++;
    return 0;
}

/* ---- the policy ------------------------------------------------------------------------ */

static int rotate(struct argus_spoolcap *c, struct argus_spool_writer **w, char *errbuf,
                  size_t errlen)
{
    int dirfd = argus_spool_dirfd(*w);
    char dname[256], name[32], head[256], path[4096];
    int rc;

    snprintf(head, sizeof head, "%s", argus_spool_name(*w));
    snprintf(path, sizeof path, "%s", argus_spool_path(*w));
    if (argus_spool_segdir(head, dname, sizeof dname) != 0)
        return -ENAMETOOLONG;
    if (c->segfd < 0) {
        if (mkdirat(dirfd, dname, 0750) != 0 && errno != EEXIST) {
            rc = -errno;
            snprintf(errbuf, errlen, "cannot create %s: %s", dname, strerror(-rc));
            return rc;
        }
        c->segfd = openat(dirfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->segfd < 0) {
            rc = -errno;
            snprintf(errbuf, errlen, "cannot open %s: %s", dname, strerror(-rc));
            return rc;
        }
    }
    if (argus_grow(&c->segs, &c->cap, c->n + 1, sizeof *c->segs, 16) != 0)
        return -ENOMEM;
    /* keep our own dirfd across the close */
    int dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dfd < 0)
        return -errno;
    rc = argus_spool_close(*w);
    *w = NULL;
    seg_name(name, sizeof name, c->next_seq);
    if (rc == 0 && renameat(dfd, head, c->segfd, name) != 0)
        rc = -errno;
    if (rc) {
        snprintf(errbuf, errlen, "cannot move %s into %s: %s", head, dname, strerror(-rc));
        close(dfd);
        return rc;
    }
    c->segs[c->n++] = (struct seg){c->next_seq, file_size(c->segfd, name), 1, 0, -1};
    c->next_seq++;
    c->st.rotations++;
    rc = argus_spool_open_write_at(dfd, head, path, w, errbuf, errlen);
    close(dfd);
    if (rc == 0) {
        const struct argus_spool_mark m = {ARGUS_SPOOL_MARK_SEGMENT, 0, c->next_seq - 1, 0, 0};
        rc = argus_spool_mark(*w, &m);
    }
    return rc;
}

static uint64_t total(const struct argus_spoolcap *c, const struct argus_spool_writer *w)
{
    uint64_t t = argus_spool_file_bytes(w);
    for (size_t i = 0; i < c->n; i++)
        t += c->segs[i].bytes;
    return t;
}

/* Remove the oldest segment (every one is at the last level): its steps are named in a
 * DROPPED mark in the next. */
static int drop_oldest(struct argus_spoolcap *c, char *errbuf, size_t errlen)
{
    char name[32];
    struct seg g = c->segs[0];

    seg_name(name, sizeof name, g.seq);
    if (unlinkat(c->segfd, name, 0) != 0)
        return -errno;
    memmove(c->segs, c->segs + 1, (c->n - 1) * sizeof *c->segs);
    c->n--;
    c->removed++;
    c->st.dropped_segments++;
    if (g.lo <= g.hi) {
        if (!c->dropped || g.lo < c->drop_lo)
            c->drop_lo = g.lo;
        if (!c->dropped || g.hi > c->drop_hi)
            c->drop_hi = g.hi;
        c->dropped = 1;
    }
    return c->n ? rewrite(c, 0, c->segs[0].level, errbuf, errlen) : 0;
}

int argus_spoolcap_after_flush(struct argus_spoolcap *c, struct argus_spool_writer **w,
                               const struct argus_spoolcap_keep *keep, size_t nkeep,
                               char *errbuf, size_t errlen)
{
    int rc;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!*w || argus_spool_file_bytes(*w) < c->seg_bytes)
        return 0;
    if ((rc = rotate(c, w, errbuf, errlen)) != 0)
        return rc;
    c->keep = keep;
    c->nkeep = nkeep;
    /* past the horizon (max/2 with the head): thin */
    uint64_t acc = argus_spool_file_bytes(*w);
    for (size_t i = c->n; i-- > 0;) {
        acc += c->segs[i].bytes;
        if (acc > c->max / 2 && c->segs[i].level < 0 &&
            (rc = rewrite(c, i, 0, errbuf, errlen)) != 0)
            return rc;
    }
    /* over the cap, leaving room for the head to grow to its next rotation (and one
     * window past it): the oldest one level down, else removed */
    while (total(c, *w) + 2 * c->seg_bytes > c->max && c->n > 0) {
        size_t i = 0;
        while (i < c->n && c->segs[i].level >= ARGUS_SPOOLCAP_LEVELS)
            i++;
        if (i < c->n)
            rc = rewrite(c, i, c->segs[i].level + 1, errbuf, errlen);
        else
            rc = drop_oldest(c, errbuf, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

void argus_spoolcap_stats(const struct argus_spoolcap *c, const struct argus_spool_writer *w,
                          struct argus_spoolcap_stats *st)
{
    *st = c->st;
    st->total_bytes = total(c, w);
}
