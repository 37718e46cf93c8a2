/* aggregate.c — the window aggregate (aggregate.h): build from step summaries, merge,
 * canonical encoding. Merges never depend on order; see the header for why. */
#include "common/aggregate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

void argus_agg_init(struct argus_aggregate *a)
{
    memset(a, 0, sizeof *a);
}

void argus_agg_free(struct argus_aggregate *a)
{
    free(a->rows);
    free(a->km);
    memset(a, 0, sizeof *a);
}

void argus_agg_reset(struct argus_aggregate *a)
{
    a->nrows = 0;
    a->nkm = 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *n = realloc(*p, c * elem);
    if (!n)
        return -ENOMEM;
    *p = n;
    *cap = c;
    return 0;
}

static int row_cmp(const struct argus_agg_row *x, const struct argus_agg_row *y)
{
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return memcmp(x, y, sizeof *x);
}

static int km_cmp(const struct argus_agg_kmode *x, uint64_t h, uint8_t mode, uint16_t group)
{
    if (x->name_hash != h)
        return x->name_hash < h ? -1 : 1;
    if (x->mode != mode)
        return x->mode < mode ? -1 : 1;
    if (x->group != group)
        return x->group < group ? -1 : 1;
    return 0;
}

/* Total orders for the extremes: top = value desc; bot = value asc; ties by rank, step. */
static int ext_before(const struct argus_agg_ext *x, const struct argus_agg_ext *y, int top)
{
    if (x->value != y->value)
        return top ? x->value > y->value : x->value < y->value;
    if (x->rank != y->rank)
        return x->rank < y->rank;
    return x->step < y->step;
}

/* Merge two sorted extreme lists into out (k best of the union). */
static uint8_t ext_merge(const struct argus_agg_ext *a, uint8_t na, const struct argus_agg_ext *b,
                         uint8_t nb, struct argus_agg_ext *out, int top)
{
    struct argus_agg_ext tmp[2 * ARGUS_AGG_TOPK];
    uint8_t i = 0, j = 0, n = 0;

    while (n < ARGUS_AGG_TOPK && (i < na || j < nb)) {
        if (j >= nb || (i < na && ext_before(&a[i], &b[j], top)))
            tmp[n++] = a[i++];
        else
            tmp[n++] = b[j++];
    }
    memcpy(out, tmp, n * sizeof *out);
    return n;
}

static void km_combine(struct argus_agg_kmode *d, const struct argus_agg_kmode *s)
{
    d->count += s->count;
    d->sum_ns += s->sum_ns;
    if (s->min_ns < d->min_ns)
        d->min_ns = s->min_ns;
    if (s->max_ns > d->max_ns)
        d->max_ns = s->max_ns;
    if (s->kclass < d->kclass) /* deterministic if a hash ever collides across classes */
        d->kclass = s->kclass;
    argus_qsketch_merge(&d->sketch, &s->sketch);
    d->ntop = ext_merge(d->top, d->ntop, s->top, s->ntop, d->top, 1);
    d->nbot = ext_merge(d->bot, d->nbot, s->bot, s->nbot, d->bot, 0);
}

static size_t km_find(const struct argus_aggregate *a, uint64_t h, uint8_t mode,
                      uint16_t group, int *found)
{
    size_t lo = 0, hi = a->nkm;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = km_cmp(&a->km[mid], h, mode, group);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

static int km_add(struct argus_aggregate *a, const struct argus_agg_kmode *k)
{
    int found;
    size_t at = km_find(a, k->name_hash, k->mode, k->group, &found);
    if (found) {
        km_combine(&a->km[at], k);
        return 0;
    }
    if (grow((void **)&a->km, &a->capkm, a->nkm + 1, sizeof *a->km))
        return -ENOMEM;
    memmove(&a->km[at + 1], &a->km[at], (a->nkm - at) * sizeof *a->km);
    a->km[at] = *k;
    a->nkm++;
    return 0;
}

static int row_add(struct argus_aggregate *a, const struct argus_agg_row *r)
{
    if (grow((void **)&a->rows, &a->caprows, a->nrows + 1, sizeof *a->rows))
        return -ENOMEM;
    size_t at = a->nrows;
    while (at > 0 && row_cmp(&a->rows[at - 1], r) > 0)
        at--;
    memmove(&a->rows[at + 1], &a->rows[at], (a->nrows - at) * sizeof *a->rows);
    a->rows[at] = *r;
    a->nrows++;
    return 0;
}

static uint32_t us(uint64_t ns)
{
    uint64_t u = ns / 1000;
    return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

int argus_agg_add_summary(struct argus_aggregate *a, const struct argus_step_summary *s)
{
    struct argus_agg_row r;

    memset(&r, 0, sizeof r);
    r.step = s->step;
    r.rank = s->rank;
    r.flags = s->flags;
    r.start_ns = s->start_ns;
    r.us[0] = us(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0);
    r.us[1] = us(s->phase_wall_ns[ARGUS_PH_FORWARD]);
    r.us[2] = us(s->phase_wall_ns[ARGUS_PH_BACKWARD]);
    r.us[3] = us(s->phase_wall_ns[ARGUS_PH_OPTIMIZER]);
    r.us[4] = us(s->phase_wall_ns[ARGUS_PH_COMM]);
    r.us[5] = us(s->host_gap_ns);
    r.us[6] = us(s->compute_ns);
    r.us[7] = us(s->collective_ns);
    if (row_add(a, &r))
        return -ENOMEM;
    for (uint32_t i = 0; i < s->n_kmodes && i < ARGUS_MAX_KMODES; i++) {
        const struct argus_kmode_stats *m = &s->kmodes[i];
        struct argus_agg_kmode k;
        memset(&k, 0, sizeof k);
        k.name_hash = m->name_hash;
        k.mode = m->mode;
        k.kclass = m->kclass;
        k.group = s->coords.pp;
        k.count = m->count;
        k.sum_ns = m->sum_ns;
        k.min_ns = m->min_ns;
        k.max_ns = m->max_ns;
        k.sketch = m->sketch;
        struct argus_agg_ext e = {m->count ? m->sum_ns / m->count : 0, s->rank,
                                  (uint32_t)s->step};
        k.top[0] = e;
        k.bot[0] = e;
        k.ntop = k.nbot = 1;
        if (km_add(a, &k))
            return -ENOMEM;
    }
    return 0;
}

int argus_agg_merge(struct argus_aggregate *dst, const struct argus_aggregate *src)
{
    /* rows: sorted union (merge from the back, in place) */
    if (grow((void **)&dst->rows, &dst->caprows, dst->nrows + src->nrows, sizeof *dst->rows))
        return -ENOMEM;
    size_t i = dst->nrows, j = src->nrows, k = dst->nrows + src->nrows;
    while (j > 0) {
        if (i > 0 && row_cmp(&dst->rows[i - 1], &src->rows[j - 1]) > 0)
            dst->rows[--k] = dst->rows[--i];
        else
            dst->rows[--k] = src->rows[--j];
    }
    dst->nrows += src->nrows;
    /* kmodes: sorted union, combining equal keys */
    if (grow((void **)&dst->km, &dst->capkm, dst->nkm + src->nkm, sizeof *dst->km))
        return -ENOMEM;
    i = dst->nkm;
    j = src->nkm;
    k = dst->nkm + src->nkm;
    while (j > 0) {
        const struct argus_agg_kmode *s = &src->km[j - 1];
        int c = i > 0 ? km_cmp(&dst->km[i - 1], s->name_hash, s->mode, s->group) : -1;
        if (c > 0) {
            dst->km[--k] = dst->km[--i];
        } else if (c == 0) {
            struct argus_agg_kmode t = dst->km[--i];
            km_combine(&t, s);
            dst->km[--k] = t;
            j--;
        } else {
            dst->km[--k] = *s;
            j--;
        }
    }
    while (i > 0)
        dst->km[--k] = dst->km[--i];
    /* k entries were left unused at the front when keys combined: close the gap */
    size_t used = dst->nkm + src->nkm - k;
    memmove(&dst->km[0], &dst->km[k], used * sizeof *dst->km);
    dst->nkm = used;
    return 0;
}

/* ---- encoding ------------------------------------------------------------------------ */

#define PUT(p, v) do { memcpy((p), &(v), sizeof(v)); (p) += sizeof(v); } while (0)
#define GET(p, end, v) do { if ((size_t)((end) - (p)) < sizeof(v)) goto bad; \
                            memcpy(&(v), (p), sizeof(v)); (p) += sizeof(v); } while (0)

static size_t km_size(const struct argus_agg_kmode *k)
{
    return 44 + 12 + 4u * k->sketch.nbuckets + 2 + 16u * (k->ntop + k->nbot);
}

size_t argus_agg_encoded_size(const struct argus_aggregate *a)
{
    size_t n = 16 + a->nrows * ARGUS_AGG_ROW_BYTES + 4;
    for (size_t i = 0; i < a->nkm; i++)
        n += km_size(&a->km[i]);
    return n;
}

long argus_agg_encode(const struct argus_aggregate *a, uint8_t *buf, size_t cap)
{
    size_t need = argus_agg_encoded_size(a);
    if (cap < need || a->nrows > UINT32_MAX || a->nkm > UINT32_MAX)
        return -ENOSPC;
    uint8_t *p = buf;
    uint32_t magic = ARGUS_AGG_MAGIC, nr = (uint32_t)a->nrows, nk = (uint32_t)a->nkm;
    uint16_t ver = ARGUS_AGG_VERSION, flags = 0;
    PUT(p, magic); PUT(p, ver); PUT(p, flags); PUT(p, nr); PUT(p, nk);
    for (size_t i = 0; i < a->nrows; i++) {
        const struct argus_agg_row *r = &a->rows[i];
        PUT(p, r->step); PUT(p, r->rank); PUT(p, r->flags); PUT(p, r->start_ns);
        memcpy(p, r->us, sizeof r->us);
        p += sizeof r->us;
    }
    for (size_t i = 0; i < a->nkm; i++) {
        const struct argus_agg_kmode *k = &a->km[i];
        PUT(p, k->name_hash); PUT(p, k->mode); PUT(p, k->kclass); PUT(p, k->group);
        PUT(p, k->count); PUT(p, k->sum_ns); PUT(p, k->min_ns); PUT(p, k->max_ns);
        PUT(p, k->sketch.base); PUT(p, k->sketch.nbuckets); PUT(p, k->sketch.flags);
        PUT(p, k->sketch.zeros);
        memcpy(p, k->sketch.counts, 4u * k->sketch.nbuckets);
        p += 4u * k->sketch.nbuckets;
        PUT(p, k->ntop); PUT(p, k->nbot);
        for (int t = 0; t < k->ntop; t++) {
            PUT(p, k->top[t].value); PUT(p, k->top[t].rank); PUT(p, k->top[t].step);
        }
        for (int t = 0; t < k->nbot; t++) {
            PUT(p, k->bot[t].value); PUT(p, k->bot[t].rank); PUT(p, k->bot[t].step);
        }
    }
    uint32_t crc = argus_crc32c(buf, (size_t)(p - buf));
    PUT(p, crc);
    return (long)(p - buf);
}

int argus_agg_decode(struct argus_aggregate *a, const uint8_t *buf, size_t len, char *errbuf,
                     size_t errlen)
{
    const uint8_t *p = buf, *end = buf + len;
    uint32_t magic, nr, nk, crc;
    uint16_t ver, flags;

    argus_agg_reset(a);
    if (len < 20)
        goto bad;
    memcpy(&crc, buf + len - 4, 4);
    if (crc != argus_crc32c(buf, len - 4)) {
        snprintf(errbuf, errlen, "aggregate: checksum mismatch");
        return -EINVAL;
    }
    end = buf + len - 4;
    GET(p, end, magic); GET(p, end, ver); GET(p, end, flags); GET(p, end, nr); GET(p, end, nk);
    if (magic != ARGUS_AGG_MAGIC || ver != ARGUS_AGG_VERSION)
        goto bad;
    if ((size_t)(end - p) < (size_t)nr * ARGUS_AGG_ROW_BYTES)
        goto bad;
    if (grow((void **)&a->rows, &a->caprows, nr, sizeof *a->rows) ||
        grow((void **)&a->km, &a->capkm, nk, sizeof *a->km)) {
        snprintf(errbuf, errlen, "aggregate: out of memory");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < nr; i++) {
        struct argus_agg_row *r = &a->rows[i];
        GET(p, end, r->step); GET(p, end, r->rank); GET(p, end, r->flags);
        GET(p, end, r->start_ns); GET(p, end, r->us);
    }
    a->nrows = nr;
    for (uint32_t i = 0; i < nk; i++) {
        struct argus_agg_kmode *k = &a->km[i];
        memset(k, 0, sizeof *k);
        GET(p, end, k->name_hash); GET(p, end, k->mode); GET(p, end, k->kclass);
        GET(p, end, k->group); GET(p, end, k->count); GET(p, end, k->sum_ns);
        GET(p, end, k->min_ns); GET(p, end, k->max_ns);
        GET(p, end, k->sketch.base); GET(p, end, k->sketch.nbuckets);
        GET(p, end, k->sketch.flags); GET(p, end, k->sketch.zeros);
        if (k->sketch.nbuckets > ARGUS_QSKETCH_BUCKETS ||
            (size_t)(end - p) < 4u * k->sketch.nbuckets)
            goto bad;
        memcpy(k->sketch.counts, p, 4u * k->sketch.nbuckets);
        p += 4u * k->sketch.nbuckets;
        GET(p, end, k->ntop); GET(p, end, k->nbot);
        if (k->ntop > ARGUS_AGG_TOPK || k->nbot > ARGUS_AGG_TOPK)
            goto bad;
        for (int t = 0; t < k->ntop; t++) {
            GET(p, end, k->top[t].value); GET(p, end, k->top[t].rank);
            GET(p, end, k->top[t].step);
        }
        for (int t = 0; t < k->nbot; t++) {
            GET(p, end, k->bot[t].value); GET(p, end, k->bot[t].rank);
            GET(p, end, k->bot[t].step);
        }
        a->nkm = i + 1;
    }
    if (p != end)
        goto bad;
    (void)flags;
    return 0;
bad:
    snprintf(errbuf, errlen, "aggregate: malformed at offset %zu", (size_t)(p - buf));
    argus_agg_reset(a);
    return -EINVAL;
}
