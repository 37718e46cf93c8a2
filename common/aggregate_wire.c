/* aggregate_wire.c — the window aggregate's canonical encoding (aggregate.h: encode,
 * decode, sizes): a header, the rows in canonical order in their compact form (aggrow.h),
 * the kernel modes, a CRC32C. */
#include "common/aggregate.h"
#include "common/aggregate_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/aggrow.h"
#include "common/grow.h"
#include "common/wire.h"

#define PUT(p, v) do { memcpy((p), &(v), sizeof(v)); (p) += sizeof(v); } while (0)
#define GET(p, end, v) do { if ((size_t)((end) - (p)) < sizeof(v)) goto bad; \
                            memcpy(&(v), (p), sizeof(v)); (p) += sizeof(v); } while (0)

#define KM_MIN (44 + 12 + 2) /* the fewest bytes a kmode takes: no buckets, no extremes */

static size_t km_size(const struct argus_agg_kmode *k)
{
    return KM_MIN + 4u * k->sketch.nbuckets + 16u * (k->ntop + k->nbot);
}

/* Header, kmodes and checksum: everything but the rows. */
static size_t rest_size(const struct argus_aggregate *a)
{
    size_t n = 16 + 4;
    for (size_t i = 0; i < a->nkm; i++)
        n += km_size(&a->km[i]);
    return n;
}

size_t argus_agg_encoded_size(const struct argus_aggregate *a)
{
    return rest_size(a) + a->nrows * ARGUS_AGG_ROW_BYTES;
}

struct rows_out {
    struct argus_aggrow_coder c;
    uint8_t *p, *end; /* NULL p: count only (into len) */
    size_t len;
    int full;
};

static void emit_encode(void *ctx, const struct argus_agg_row *r, size_t n)
{
    struct rows_out *o = ctx;
    if (!o->p) {
        o->len += argus_aggrow_size(&o->c, r, n);
        return;
    }
    if (o->full)
        return;
    if ((size_t)(o->end - o->p) / ARGUS_AGGROW_MAX >= n) {
        o->p = argus_aggrow_put(&o->c, r, n, o->p);
        return;
    }
    for (size_t i = 0; i < n; i++) { /* near the end of buf: row by row, checked */
        uint8_t t[ARGUS_AGGROW_MAX];
        size_t k = (size_t)(argus_aggrow_put(&o->c, &r[i], 1, t) - t);
        if (k > (size_t)(o->end - o->p)) {
            o->full = 1;
            return;
        }
        memcpy(o->p, t, k);
        o->p += k;
    }
}

size_t argus_agg_rows_encoded_size(const struct argus_aggregate *a)
{
    struct rows_out o = {.p = NULL};
    argus_aggrow_init(&o.c);
    argus_agg_rows_kmerge(a, emit_encode, &o);
    return o.len;
}

long argus_agg_encode(const struct argus_aggregate *a, uint8_t *buf, size_t cap)
{
    const size_t rest = rest_size(a);
    if (cap < rest || a->nrows > UINT32_MAX || a->nkm > UINT32_MAX)
        return -ENOSPC;
    uint8_t *p = buf;
    uint32_t magic = ARGUS_AGG_MAGIC, nr = (uint32_t)a->nrows, nk = (uint32_t)a->nkm;
    uint16_t ver = ARGUS_AGG_VERSION, flags = 0;
    PUT(p, magic); PUT(p, ver); PUT(p, flags); PUT(p, nr); PUT(p, nk);
    struct rows_out o = {.p = p, .end = buf + (cap - (rest - 16))};
    argus_aggrow_init(&o.c);
    argus_agg_rows_kmerge(a, emit_encode, &o);
    if (o.full)
        return -ENOSPC;
    p = o.p;
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
    if (magic != ARGUS_AGG_MAGIC || ver != ARGUS_AGG_VERSION || flags != 0)
        goto bad; /* flags: none defined */
    /* before allocating: the counts must fit in what is left (a damaged count with a
     * right checksum must not ask for gigabytes) */
    if ((size_t)(end - p) / ARGUS_AGGROW_MIN < nr ||
        ((size_t)(end - p) - (size_t)nr * ARGUS_AGGROW_MIN) / KM_MIN < nk)
        goto bad;
    if (argus_agg_grow_rows(&a->rows, &a->caprows, nr, 0) || argus_agg_grow_runs(a, 1) ||
        argus_grow(&a->km, &a->capkm, nk, sizeof *a->km, 16)) {
        snprintf(errbuf, errlen, "aggregate: out of memory");
        return -ENOMEM;
    }
    struct argus_aggrow_coder c;
    argus_aggrow_init(&c);
    if (argus_aggrow_get(&c, &p, end, a->rows, nr) != 0) {
        snprintf(errbuf, errlen, "aggregate: row truncated, malformed or out of order at "
                 "offset %zu", (size_t)(p - buf));
        argus_agg_reset(a);
        return -EINVAL;
    }
    a->nrows = nr;
    a->nruns = nr ? 1 : 0;
    a->run[0] = nr;
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
    return 0;
bad:
    snprintf(errbuf, errlen, "aggregate: malformed at offset %zu", (size_t)(p - buf));
    argus_agg_reset(a);
    return -EINVAL;
}
