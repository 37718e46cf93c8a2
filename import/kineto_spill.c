/* kineto_spill.c — bounded memory for Kineto traces of any size, part 1: the spill file.
 * When the compact tables (import/import_int.h) reach their limit, kt_spill sorts the kernels,
 * launches and ranges by time and appends them as one run of fixed-size records to an
 * unlinked temporary file, then frees them; steps and interned names stay in memory (they
 * grow with steps and distinct names, not with events). kt_merge_* read the runs back as
 * one stream in time order (a heap over one read buffer per run). import/kineto_stream.c
 * summarises that stream step by step. Must not print, must not leave a file behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "import/import_int.h"

#define WBUF 1638 /* records per write or read buffer (64 KB) */

/* ---- writing a run --------------------------------------------------------------- */

static int cmp_kstart(const void *a, const void *b)
{
    const struct kt_kernel *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_lts(const void *a, const void *b)
{
    const struct kt_launch *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_rstart(const void *a, const void *b)
{
    const struct kt_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int open_spill(struct kt_trace *t)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];

    snprintf(path, sizeof path, "%s/argus-spill-XXXXXX", dir && *dir ? dir : "/tmp");
    t->spill_fd = mkstemp(path);
    if (t->spill_fd < 0) {
        int e = errno;
        snprintf(t->spill_err, sizeof t->spill_err, "cannot create a spill file in %.64s: %s",
                 dir && *dir ? dir : "/tmp", strerror(e));
        return -e;
    }
    unlink(path);
    return 0;
}

static int flush_buf(struct kt_trace *t, const struct kt_srec *b, size_t n)
{
    const char *p = (const char *)b;
    size_t len = n * sizeof *b;

    while (len) {
        ssize_t w = pwrite(t->spill_fd, p, len, (off_t)t->spill_bytes);
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            snprintf(t->spill_err, sizeof t->spill_err, "cannot write the spill file: %s",
                     strerror(e));
            return -e;
        }
        p += w;
        len -= (size_t)w;
        t->spill_bytes += (uint64_t)w;
    }
    return 0;
}

static void free_vec(struct kt_trace *t, struct kt_vec *v)
{
    t->mem -= v->cap * v->elem;
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

int kt_spill(struct kt_trace *t)
{
    struct kt_kernel *k = t->kernels.v;
    struct kt_launch *l = t->launches.v;
    struct kt_range *r = t->ranges.v;
    size_t nk = t->kernels.n, nl = t->launches.n, nr = t->ranges.n, ik = 0, il = 0, ir = 0;
    struct kt_srec *buf;
    size_t nb = 0;
    int rc = 0;

    if (t->spill_fd < 0 && (rc = open_spill(t)) != 0)
        return rc;
    if (argus_grow(&t->runs, &t->cap_runs, t->n_runs + 1, sizeof *t->runs, 16) != 0)
        goto nomem;
    if (!(buf = malloc(WBUF * sizeof *buf)))
        goto nomem;
    if (nk > 1)
        qsort(k, nk, sizeof *k, cmp_kstart);
    if (nl > 1)
        qsort(l, nl, sizeof *l, cmp_lts);
    if (nr > 1)
        qsort(r, nr, sizeof *r, cmp_rstart);
    t->runs[t->n_runs] = (struct kt_run){t->spill_bytes, nk + nl + nr};
    while (ik < nk || il < nl || ir < nr) {
        uint64_t tk = ik < nk ? k[ik].start : UINT64_MAX, tl = il < nl ? l[il].ts : UINT64_MAX;
        uint64_t tr = ir < nr ? r[ir].start : UINT64_MAX;
        struct kt_srec *s = &buf[nb++];
        memset(s, 0, sizeof *s);
        if (ir < nr && tr <= tl && tr <= tk) {
            *s = (struct kt_srec){.t = tr, .end = r[ir].end, .type = KT_R_RANGE,
                               .phase = r[ir].phase, .flag = r[ir].gpu};
            ir++;
        } else if (il < nl && tl <= tk) {
            *s = (struct kt_srec){.t = tl, .corr = l[il].corr, .type = KT_R_LAUNCH};
            il++;
        } else {
            const struct kt_kernel *x = &k[ik++];
            *s = (struct kt_srec){.t = x->start, .end = x->end, .name = x->name,
                               .corr = x->corr, .stream = x->stream, .device = x->device,
                               .type = KT_R_KERNEL, .kclass = x->kclass, .flag = x->has_corr};
        }
        if (nb == WBUF) {
            if ((rc = flush_buf(t, buf, nb)) != 0)
                break;
            nb = 0;
        }
    }
    if (rc == 0 && nb)
        rc = flush_buf(t, buf, nb);
    free(buf);
    if (rc)
        return rc;
    t->n_runs++;
    free_vec(t, &t->kernels);
    free_vec(t, &t->launches);
    free_vec(t, &t->ranges);
    return 0;
nomem:
    snprintf(t->spill_err, sizeof t->spill_err, "out of memory while spilling");
    return -ENOMEM;
}

/* ---- reading the runs back in time order ------------------------------------------- */

struct cursor {
    uint64_t off, left; /* next byte to read, records not yet read */
    size_t i, n, cap;
    struct kt_srec buf[];  /* cap records */
};

static int cur_fill(int fd, struct cursor *c)
{
    size_t want = c->left < c->cap ? (size_t)c->left : c->cap, got = 0;
    char *p = (char *)c->buf;

    while (got < want * sizeof(struct kt_srec)) {
        ssize_t r = pread(fd, p + got, want * sizeof(struct kt_srec) - got, (off_t)(c->off + got));
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        got += (size_t)r;
    }
    c->off += got;
    c->left -= want;
    c->i = 0;
    c->n = want;
    return 0;
}

static int rec_less(const struct kt_srec *a, const struct kt_srec *b)
{
    return a->t != b->t ? a->t < b->t : a->type < b->type;
}

struct kt_merge {
    int fd, started;
    struct cursor **c;
    size_t nc;
    size_t *heap, n; /* cursor indices, min-heap on their current record */
};

static int heap_less(const struct kt_merge *m, size_t a, size_t b)
{
    const struct cursor *x = m->c[m->heap[a]], *y = m->c[m->heap[b]];
    return rec_less(&x->buf[x->i], &y->buf[y->i]);
}

static void heap_down(struct kt_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->n && heap_less(m, l, s))
            s = l;
        if (r < m->n && heap_less(m, r, s))
            s = r;
        if (s == i)
            return;
        size_t tmp = m->heap[i];
        m->heap[i] = m->heap[s];
        m->heap[s] = tmp;
        i = s;
    }
}

int kt_merge_open(const struct kt_trace *t, size_t buf_bytes, struct kt_merge **out)
{
    struct kt_merge *m = calloc(1, sizeof *m);
    size_t rb = buf_bytes / ((t->n_runs + 1) * sizeof(struct kt_srec));
    int rc;

    *out = NULL;
    rb = rb > WBUF ? WBUF : rb < 16 ? 16 : rb; /* records per read buffer */
    if (!m || !(m->c = calloc(t->n_runs + 1, sizeof *m->c)) ||
        !(m->heap = calloc(t->n_runs + 1, sizeof *m->heap))) {
        kt_merge_free(m);
        return -ENOMEM;
    }
    m->fd = t->spill_fd;
    for (size_t i = 0; i < t->n_runs; i++) {
        if (t->runs[i].n == 0)
            continue;
        struct cursor *c = malloc(sizeof *c + rb * sizeof(struct kt_srec));
        if (!c) {
            kt_merge_free(m);
            return -ENOMEM;
        }
        m->c[m->nc++] = c;
        c->cap = rb;
        c->off = t->runs[i].off;
        c->left = t->runs[i].n;
        if ((rc = cur_fill(m->fd, c)) != 0) {
            kt_merge_free(m);
            return rc;
        }
        m->heap[m->n] = m->n;
        m->n++;
    }
    for (size_t i = m->n; i-- > 0;)
        heap_down(m, i);
    *out = m;
    return 0;
}

const struct kt_srec *kt_merge_next(struct kt_merge *m, int *rc)
{
    *rc = 0;
    if (m->started && m->n) {
        struct cursor *c = m->c[m->heap[0]];
        if (++c->i == c->n) {
            if (c->left == 0)
                m->heap[0] = m->heap[--m->n];
            else if ((*rc = cur_fill(m->fd, c)) != 0)
                return NULL;
        }
        heap_down(m, 0);
    }
    m->started = 1;
    if (!m->n)
        return NULL;
    const struct cursor *c = m->c[m->heap[0]];
    return &c->buf[c->i];
}

void kt_merge_free(struct kt_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nc; i++)
        free(m->c[i]);
    free(m->c);
    free(m->heap);
    free(m);
}
