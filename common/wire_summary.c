/* wire_summary.c — the step-summary record of wire.h (contract 3), encoded as version 2
 * and decoded as version 1 or 2. Every field is written byte by byte (never a struct
 * memcpy), so the format does not depend on the host's layout; the decoder trusts
 * nothing and names the offset of the first bad field. No allocation.
 *
 * Version 2 payload (uv: LEB128 varint, sv: zigzag varint):
 *   uv step, uv rank, uv flags, uv start_ns, uv end_ns, sv clock_offset_ns,
 *   8 x u16 coords (tp_size pp_size dp_size ep_size tp pp dp ep),
 *   ARGUS_PH_COUNT x uv phase_wall_ns, ARGUS_PH_COUNT x uv phase_compute_ns,
 *   uv compute collective p2p memcpy busy host_gap kernel_count dropped overhead_ns
 *      clock_gpu_ns clock_real_ns clock_mono_ns, uv n_kmodes,
 *   n_kmodes x { u64 name_hash, u8 mode, u8 kclass, u8 phase, uv count,
 *                uv sum_ns min_ns max_ns,
 *                sketch: sv base, u8 nbuckets, uv flags, uv zeros, nbuckets x uv }
 * Version 1 (older spools) had the same fields at fixed widths: u64 step, u32 rank,
 * u32 flags, u64 start/end, i64 offset, coords, u64 phases and totals (no overhead or
 * clock triple), u32 n_kmodes, and per kmode u64 hash, u8 mode/kclass/phase/0, u32 count,
 * u64 sum/min/max, i32 base, u16 nbuckets, u16 flags, u32 zeros, nbuckets x u32.
 */
#include "common/wire.h"
#include "common/errbuf.h"
#include "common/wire_io.h"

#include <errno.h>
#include <string.h>

#define SUM_V1 (8 + 4 + 4 + 8 + 8 + 8 + 8 * 2 + 2 * ARGUS_PH_COUNT * 8 + 8 * 8 + 4)
#define KMODE_V1 (8 + 4 + 4 + 3 * 8 + 4 + 2 + 2 + 4)
#define SUM_MAX (10 + 5 + 5 + 10 + 10 + 10 + 8 * 2 + 2 * ARGUS_PH_COUNT * 10 + 12 * 10 + 5)
#define KMODE_MAX (8 + 3 + 5 + 3 * 10 + 5 + 1 + 3 + 5 + ARGUS_QSKETCH_BUCKETS * 5)

size_t argus_wire_summary_payload_max(void)
{
    size_t v1 = SUM_V1 + (size_t)ARGUS_MAX_KMODES * (KMODE_V1 + ARGUS_QSKETCH_BUCKETS * 4);
    size_t v2 = SUM_MAX + (size_t)ARGUS_MAX_KMODES * KMODE_MAX;
    return v1 > v2 ? v1 : v2;
}

size_t argus_summary_encoded_max(uint32_t n_kmodes)
{
    return ARGUS_WIRE_HDR + SUM_MAX + (size_t)n_kmodes * KMODE_MAX + ARGUS_WIRE_TRAILER;
}

/* The header's varint fields, in wire order (phases, then totals). */
static size_t header_uvs(const struct argus_step_summary *s, uint64_t *v)
{
    size_t n = 0;
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        v[n++] = s->phase_wall_ns[p];
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        v[n++] = s->phase_compute_ns[p];
    const uint64_t t[] = {s->compute_ns, s->collective_ns, s->p2p_ns, s->memcpy_ns,
                          s->busy_ns, s->host_gap_ns, s->kernel_count, s->dropped,
                          s->overhead_ns, s->clock_gpu_ns, s->clock_real_ns, s->clock_mono_ns};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        v[n++] = t[i];
    return n;
}

static size_t kmode_size(const struct argus_kmode_stats *k)
{
    size_t n = 8 + 3 + uv_len(k->count) + uv_len(k->sum_ns) + uv_len(k->min_ns) +
               uv_len(k->max_ns) + sv_len(k->sketch.base) + 1 + uv_len(k->sketch.flags) +
               uv_len(k->sketch.zeros);
    for (uint16_t b = 0; b < k->sketch.nbuckets; b++)
        n += uv_len(k->sketch.counts[b]);
    return n;
}

long argus_summary_encode(const struct argus_step_summary *s, uint8_t *buf, size_t cap)
{
    uint64_t hv[2 * ARGUS_PH_COUNT + 12];

    if (!s || !buf || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    size_t nh = header_uvs(s, hv);
    size_t need = ARGUS_WIRE_HDR + uv_len(s->step) + uv_len(s->rank) + uv_len(s->flags) +
                  uv_len(s->start_ns) + uv_len(s->end_ns) + sv_len(s->clock_offset_ns) + 16 +
                  uv_len(s->n_kmodes) + ARGUS_WIRE_TRAILER;
    for (size_t i = 0; i < nh; i++)
        need += uv_len(hv[i]);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        if (s->kmodes[i].sketch.nbuckets > ARGUS_QSKETCH_BUCKETS)
            return -EINVAL;
        need += kmode_size(&s->kmodes[i]);
    }
    if (need > cap)
        return -ENOSPC;

    struct wbuf w = {buf, 0, cap};
    argus_wire_rec_start(&w, ARGUS_REC_SUMMARY);
    put_uv(&w, s->step);
    put_uv(&w, s->rank);
    put_uv(&w, s->flags);
    put_uv(&w, s->start_ns);
    put_uv(&w, s->end_ns);
    put_sv(&w, s->clock_offset_ns);
    put_coords(&w, &s->coords);
    for (size_t i = 0; i < nh; i++)
        put_uv(&w, hv[i]);
    put_uv(&w, s->n_kmodes);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        put64(&w, k->name_hash);
        put8(&w, k->mode);
        put8(&w, k->kclass);
        put8(&w, k->phase);
        put_uv(&w, k->count);
        put_uv(&w, k->sum_ns);
        put_uv(&w, k->min_ns);
        put_uv(&w, k->max_ns);
        put_sv(&w, k->sketch.base);
        put8(&w, (uint8_t)k->sketch.nbuckets);
        put_uv(&w, k->sketch.flags);
        put_uv(&w, k->sketch.zeros);
        for (uint16_t b = 0; b < k->sketch.nbuckets; b++)
            put_uv(&w, k->sketch.counts[b]);
    }
    return argus_wire_rec_finish(&w);
}

/* Decoding: one reader per field width, by the record's version. A value too large for
 * its field is an error naming its offset (range_at). */
struct sdec {
    struct rbuf r;
    int v2;
    size_t range_at; /* offset of the first out-of-range value, 0 when none */
};

static uint64_t rd_u(struct sdec *d, int v1_bytes, uint64_t max)
{
    size_t at = d->r.pos;
    uint64_t v;

    if (d->v2)
        v = get_uv(&d->r);
    else
        v = v1_bytes == 8 ? get64(&d->r) : v1_bytes == 4 ? get32(&d->r) : get16(&d->r);
    if (v > max && !d->r.bad && !d->range_at) {
        d->range_at = at;
        return 0;
    }
    return v;
}

static int64_t rd_s(struct sdec *d, int v1_bytes)
{
    if (d->v2)
        return get_sv(&d->r);
    return v1_bytes == 8 ? (int64_t)get64(&d->r) : (int64_t)(int32_t)get32(&d->r);
}

int argus_summary_decode(const uint8_t *rec, size_t len, struct argus_step_summary *out,
                         char *errbuf, size_t errlen)
{
    struct sdec d = {0};
    int rc = argus_wire_rec_open(rec, len, ARGUS_REC_SUMMARY, "summary", &d.r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!out)
        return -EINVAL;
    d.v2 = d.r.version >= 2;
    memset(out, 0, offsetof(struct argus_step_summary, kmodes));
    out->step = rd_u(&d, 8, UINT64_MAX);
    out->rank = (uint32_t)rd_u(&d, 4, UINT32_MAX);
    out->flags = (uint32_t)rd_u(&d, 4, UINT32_MAX);
    out->start_ns = rd_u(&d, 8, UINT64_MAX);
    out->end_ns = rd_u(&d, 8, UINT64_MAX);
    out->clock_offset_ns = rd_s(&d, 8);
    get_coords(&d.r, &out->coords);
    uint64_t *hv[] = {&out->compute_ns, &out->collective_ns, &out->p2p_ns, &out->memcpy_ns,
                      &out->busy_ns, &out->host_gap_ns, &out->kernel_count, &out->dropped,
                      &out->overhead_ns, &out->clock_gpu_ns, &out->clock_real_ns,
                      &out->clock_mono_ns};
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_wall_ns[p] = rd_u(&d, 8, UINT64_MAX);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_compute_ns[p] = rd_u(&d, 8, UINT64_MAX);
    for (size_t i = 0; i < (d.v2 ? 12u : 8u); i++) /* v1: no overhead, no clock triple */
        *hv[i] = rd_u(&d, 8, UINT64_MAX);
    size_t at = d.r.pos;
    uint64_t n = rd_u(&d, 4, UINT32_MAX);
    if (!d.r.bad && n > ARGUS_MAX_KMODES) {
        argus_seterr(errbuf, errlen, "summary: %llu kernel modes at offset %zu, at most %d",
                     (unsigned long long)n, at, ARGUS_MAX_KMODES);
        return -EBADMSG;
    }
    for (uint32_t i = 0; i < n && !d.r.bad; i++) {
        struct argus_kmode_stats *k = &out->kmodes[i];
        size_t kat = d.r.pos;
        memset(k, 0, sizeof *k);
        k->name_hash = get64(&d.r);
        k->mode = get8(&d.r);
        k->kclass = get8(&d.r);
        k->phase = get8(&d.r);
        if (!d.v2)
            (void)get8(&d.r);
        k->count = (uint32_t)rd_u(&d, 4, UINT32_MAX);
        k->sum_ns = rd_u(&d, 8, UINT64_MAX);
        k->min_ns = rd_u(&d, 8, UINT64_MAX);
        k->max_ns = rd_u(&d, 8, UINT64_MAX);
        size_t bat = d.r.pos;
        int64_t base = rd_s(&d, 4);
        if (!d.r.bad && (base < INT32_MIN || base > INT32_MAX) && !d.range_at)
            d.range_at = bat;
        k->sketch.base = (int32_t)base;
        size_t nbat = d.r.pos;
        k->sketch.nbuckets = d.v2 ? get8(&d.r) : get16(&d.r);
        k->sketch.flags = (uint16_t)rd_u(&d, 2, UINT16_MAX);
        k->sketch.zeros = (uint32_t)rd_u(&d, 4, UINT32_MAX);
        if (d.r.bad)
            break;
        if (k->kclass >= ARGUS_KC_COUNT || k->phase >= ARGUS_PH_COUNT) {
            argus_seterr(errbuf, errlen, "summary: kernel mode %u at offset %zu has class %u, "
                         "phase %u", i, kat, k->kclass, k->phase);
            return -EBADMSG;
        }
        if (k->sketch.nbuckets > ARGUS_QSKETCH_BUCKETS) {
            argus_seterr(errbuf, errlen, "summary: sketch of %u buckets at offset %zu, at most %d",
                         k->sketch.nbuckets, nbat, ARGUS_QSKETCH_BUCKETS);
            return -EBADMSG;
        }
        for (uint16_t b = 0; b < k->sketch.nbuckets; b++)
            k->sketch.counts[b] = (uint32_t)rd_u(&d, 4, UINT32_MAX);
    }
    if (d.range_at && !d.r.bad) {
        argus_seterr(errbuf, errlen, "summary: value out of range at offset %zu", d.range_at);
        return -EBADMSG;
    }
    rc = argus_wire_rec_close(&d.r, "summary", errbuf, errlen);
    if (rc < 0)
        return rc;
    out->n_kmodes = (uint32_t)n;
    return 0;
}
