/* wire_summary.c — the step-summary record of wire.h (contract 3), encoded as version 5
 * and decoded as version 1, 2, 3, 4 or 5. Every field is written byte by byte (never a struct
 * memcpy), so the format does not depend on the host's layout; the decoder trusts
 * nothing and names the offset of the first bad field. No allocation.
 *
 * Version 5 is version 4 with clk bit 4: the NCCL profiler plugin's block (struct
 * argus_nccl_sum; layout in wire_nccl.h) follows the last kernel mode; without the bit
 * (and in every older version) nccl decodes as all zeros.
 * Version 4 payload (uv: LEB128 varint; zz: zigzag varint of a u64 difference taken
 * modulo 2^64, so every value round-trips exactly; wall = end_ns - start_ns):
 *   uv step, uv rank, uv flags, uv start_ns, uv wall, sv clock_offset_ns,
 *   8 x uv coords (tp_size pp_size dp_size ep_size tp pp dp ep, each <= 65535),
 *   ARGUS_PH_COUNT x uv phase_wall_ns, ARGUS_PH_COUNT x uv phase_compute_ns,
 *   uv compute collective p2p memcpy busy, zz host_gap_ns - (wall - busy_ns),
 *   uv kernel_count dropped overhead_ns,
 *   u8 clk: bit 0 clocks (0: clock_real_ns = clock_gpu_ns = 0; 1: zz clock_real_ns -
 *           end_ns, zz clock_gpu_ns - clock_real_ns follow), bit 1 last ends (every
 *           collective-class kernel mode ends with its last_end_ns, below; 0: they all
 *           decode with last_end_ns = 0, as do records written before the field existed),
 *           bit 2 idle (idle_long_ns or idle_long_end_ns is not 0: uv idle_long_ns and the
 *           end's code follow the clocks; 0: both decode as 0), bit 3 the end's code is
 *           zz(wall - idle_long_end_ns), the interval's distance to the step end (else
 *           zz(idle_long_end_ns - idle_long_ns), its start; the shorter is written, the
 *           start on a tie; only with bit 2), other bits 0;
 *           uv clock_mono_ns, uv n_kmodes,
 *   n_kmodes x {
 *     u8 key: bits 0-4 kclass * ARGUS_PH_COUNT + phase, bits 5-6 mode (3: u8 mode
 *             follows), bit 7 same name_hash as the previous kernel mode (no hash follows;
 *             not allowed on the first),
 *     [u8 mode], [u64 name_hash],
 *     u8 sk: bits 0-5 sketch nbuckets, bit 6 count follows (else count = zeros + sum of
 *            the bucket counts), bit 7 sketch flags and zeros follow (else both 0),
 *     [uv flags, uv zeros], uv min_ns, uv max_ns - min_ns,
 *     zz sketch base - base_pred(min_ns), nbuckets x uv bucket count,
 *     [uv count], uv sum_ns - count * min_ns,
 *     [uv last end: collective class and clk bit 1 only; 0 when last_end_ns is 0, else
 *      z = zz(last_end_ns - end_ns) moved up by one below z0 = zz(0 - end_ns), the code
 *      last_end_ns = 0 would have had: z + 1 when z < z0, else z (exact for every value)] }
 * Version 3 (the previous build's) is version 4 without the idle interval: clk bits 2 and
 * 3 are 0 there, and idle_long_ns, idle_long_end_ns decode as 0.
 * Version 2: uv step, rank, flags, start_ns, end_ns, sv clock_offset_ns, 8 x u16 coords,
 *   uv phases, uv compute collective p2p memcpy busy host_gap kernel_count dropped
 *   overhead_ns clock_gpu_ns clock_real_ns clock_mono_ns, uv n_kmodes, per kmode u64 hash,
 *   u8 mode/kclass/phase, uv count sum_ns min_ns max_ns, sv base, u8 nbuckets, uv flags,
 *   uv zeros, nbuckets x uv.
 * Version 1 (older spools) had the v2 fields at fixed widths: u64 step, u32 rank,
 * u32 flags, u64 start/end, i64 offset, coords, u64 phases and totals (no overhead or
 * clock triple), u32 n_kmodes, and per kmode u64 hash, u8 mode/kclass/phase/0, u32 count,
 * u64 sum/min/max, i32 base, u16 nbuckets, u16 flags, u32 zeros, nbuckets x u32.
 */
#include "common/wire.h"
#include "common/errbuf.h"
#include "common/wire_io.h"
#include "common/wire_nccl.h"

#include <errno.h>
#include <string.h>

#define SUM_V1 (8 + 4 + 4 + 8 + 8 + 8 + 8 * 2 + 2 * ARGUS_PH_COUNT * 8 + 8 * 8 + 4)
#define KMODE_V1 (8 + 4 + 4 + 3 * 8 + 4 + 2 + 2 + 4)
#define SUM_V2 (10 + 5 + 5 + 10 + 10 + 10 + 8 * 2 + 2 * ARGUS_PH_COUNT * 10 + 12 * 10 + 5)
#define KMODE_V2 (8 + 3 + 5 + 3 * 10 + 5 + 1 + 3 + 5 + ARGUS_QSKETCH_BUCKETS * 5)
#define SUM_V3 (10 + 5 + 5 + 10 + 10 + 10 + 8 * 3 + 2 * ARGUS_PH_COUNT * 10 + 9 * 10 + 1 + \
                3 * 10 + 5)
#define SUM_V4 (SUM_V3 + 2 * 10)
#define SUM_V5 (SUM_V4 + ARGUS_WIRE_NCCL_MAX)
#define KMODE_V3 (1 + 1 + 8 + 1 + 3 + 5 + 10 + 10 + 5 + ARGUS_QSKETCH_BUCKETS * 5 + 5 + 10 + \
                  10)

#define KEY_MODE_SHIFT 5
#define KEY_MODE_ESC 3u    /* mode >= 3: a u8 mode follows the key */
#define KEY_SAME_HASH 0x80u
#define SK_NBUCKETS 0x3fu
#define SK_COUNT 0x40u     /* count travels (it is not zeros + the bucket counts) */
#define SK_EXTRA 0x80u     /* sketch flags and zeros travel */
#define CLK_CLOCKS 0x1u    /* the header's clk byte: clock_real_ns, clock_gpu_ns follow */
#define CLK_LAST_END 0x2u  /* collective kernel modes carry last_end_ns */
#define CLK_IDLE 0x4u      /* v4: idle_long_ns and its end follow the clocks */
#define CLK_IDLE_FROM_END 0x8u /* v4: the idle end's code counts back from the step end */
#define CLK_NCCL 0x10u     /* v5: the NCCL block follows the kernel modes */

_Static_assert(ARGUS_KC_COUNT * ARGUS_PH_COUNT <= 32, "v3 key byte: class x phase in 5 bits");
_Static_assert(ARGUS_QSKETCH_BUCKETS <= 63, "v3 sketch byte: nbuckets in 6 bits");

size_t argus_wire_summary_payload_max(void)
{
    size_t v1 = SUM_V1 + (size_t)ARGUS_MAX_KMODES * (KMODE_V1 + ARGUS_QSKETCH_BUCKETS * 4);
    size_t v2 = SUM_V2 + (size_t)ARGUS_MAX_KMODES * KMODE_V2;
    size_t v4 = SUM_V5 + (size_t)ARGUS_MAX_KMODES * KMODE_V3; /* v3, v4 are no larger */
    size_t m = v1 > v2 ? v1 : v2;
    return m > v4 ? m : v4;
}

size_t argus_summary_encoded_max(uint32_t n_kmodes)
{
    return ARGUS_WIRE_HDR + SUM_V5 + (size_t)n_kmodes * KMODE_V3 + ARGUS_WIRE_TRAILER;
}

/* The v3 predictor of a sketch's base bucket from min_ns: about ceil(log_gamma(v)) for
 * ARGUS_QSKETCH_ALPHA 0.02 (17742 / 1024 ~ 1 / log2(gamma)), from log2(v) interpolated
 * linearly between powers of two in 16.16 fixed point. Integer arithmetic only, so every
 * host computes the same value: it is part of the format (base travels as its difference
 * from this, usually one byte; any base is still representable). */
static int64_t base_pred(uint64_t v)
{
    if (v == 0)
        return 0;
    int l = 63 - __builtin_clzll(v);
    uint64_t frac = l >= 16 ? (v >> (l - 16)) & 0xffff : (v << (16 - l)) & 0xffff;
    uint64_t l2 = ((uint64_t)l << 16) | frac;
    return (int64_t)((l2 * 17742u) >> 26) + 1;
}

static uint64_t sketch_total(const struct argus_qsketch *q)
{
    uint64_t n = q->zeros;
    for (uint16_t b = 0; b < q->nbuckets; b++)
        n += q->counts[b];
    return n;
}

static uint64_t zz_of(uint64_t v)
{
    return (v << 1) ^ (0 - (v >> 63));
}

static uint64_t zz_back(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* The last-end code (header comment): 0 for 0, every other value one-to-one. */
static uint64_t last_end_code(uint64_t last_end, uint64_t end)
{
    if (last_end == 0)
        return 0;
    const uint64_t z = zz_of(last_end - end), z0 = zz_of(0 - end);
    return z < z0 ? z + 1 : z; /* z != z0: only last_end = 0 has z0 */
}

static uint64_t last_end_value(uint64_t code, uint64_t end)
{
    if (code == 0)
        return 0;
    const uint64_t z0 = zz_of(0 - end);
    return end + zz_back(code <= z0 ? code - 1 : code);
}

/* Does any collective kernel mode of s know its last end (clk bit 1)? */
static int has_last_ends(const struct argus_step_summary *s)
{
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        if (s->kmodes[i].kclass == ARGUS_KC_COLLECTIVE && s->kmodes[i].last_end_ns)
            return 1;
    return 0;
}

static void put_kmode_v3(struct wbuf *w, const struct argus_kmode_stats *k,
                         const struct argus_kmode_stats *prev, uint64_t end, int last_ends)
{
    const struct argus_qsketch *q = &k->sketch;
    const unsigned mode = k->mode < KEY_MODE_ESC ? k->mode : KEY_MODE_ESC;
    const int same = prev && prev->name_hash == k->name_hash;
    const int has_count = sketch_total(q) != k->count, extra = q->flags || q->zeros;

    put8(w, (uint8_t)((k->kclass * ARGUS_PH_COUNT + k->phase) | mode << KEY_MODE_SHIFT |
                      (same ? KEY_SAME_HASH : 0)));
    if (mode == KEY_MODE_ESC)
        put8(w, k->mode);
    if (!same)
        put64(w, k->name_hash);
    put8(w, (uint8_t)(q->nbuckets | (has_count ? SK_COUNT : 0) | (extra ? SK_EXTRA : 0)));
    if (extra) {
        put_uv(w, q->flags);
        put_uv(w, q->zeros);
    }
    put_uv(w, k->min_ns);
    put_uv(w, k->max_ns - k->min_ns);
    put_zz(w, (uint64_t)(int64_t)q->base - (uint64_t)base_pred(k->min_ns));
    for (uint16_t b = 0; b < q->nbuckets; b++)
        put_uv(w, q->counts[b]);
    if (has_count)
        put_uv(w, k->count);
    put_uv(w, k->sum_ns - (uint64_t)k->count * k->min_ns);
    if (last_ends && k->kclass == ARGUS_KC_COLLECTIVE)
        put_uv(w, last_end_code(k->last_end_ns, end));
}

/* The whole v5 payload; with w->p == NULL this only sizes it. */
static void put_summary_v5(struct wbuf *w, const struct argus_step_summary *s)
{
    const uint64_t wall = s->end_ns - s->start_ns;
    const uint16_t c[] = {s->coords.tp_size, s->coords.pp_size, s->coords.dp_size,
                          s->coords.ep_size, s->coords.tp, s->coords.pp, s->coords.dp,
                          s->coords.ep};
    const uint64_t t[] = {s->compute_ns, s->collective_ns, s->p2p_ns, s->memcpy_ns,
                          s->busy_ns};

    put_uv(w, s->step);
    put_uv(w, s->rank);
    put_uv(w, s->flags);
    put_uv(w, s->start_ns);
    put_uv(w, wall);
    put_sv(w, s->clock_offset_ns);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        put_uv(w, c[i]);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        put_uv(w, s->phase_wall_ns[p]);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        put_uv(w, s->phase_compute_ns[p]);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        put_uv(w, t[i]);
    put_zz(w, s->host_gap_ns - (wall - s->busy_ns));
    put_uv(w, s->kernel_count);
    put_uv(w, s->dropped);
    put_uv(w, s->overhead_ns);
    const int clk = s->clock_real_ns || s->clock_gpu_ns, last_ends = has_last_ends(s);
    const int idle = s->idle_long_ns || s->idle_long_end_ns;
    const uint64_t from_start = zz_of(s->idle_long_end_ns - s->idle_long_ns);
    const uint64_t from_end = zz_of(wall - s->idle_long_end_ns);
    const int back = idle && from_end < from_start, nccl = argus_wire_nccl_present(&s->nccl);
    put8(w, (uint8_t)((clk ? CLK_CLOCKS : 0) | (last_ends ? CLK_LAST_END : 0) |
                      (idle ? CLK_IDLE : 0) | (back ? CLK_IDLE_FROM_END : 0) |
                      (nccl ? CLK_NCCL : 0)));
    if (clk) {
        put_zz(w, s->clock_real_ns - s->end_ns);
        put_zz(w, s->clock_gpu_ns - s->clock_real_ns);
    }
    if (idle) {
        put_uv(w, s->idle_long_ns);
        put_uv(w, back ? from_end : from_start);
    }
    put_uv(w, s->clock_mono_ns);
    put_uv(w, s->n_kmodes);
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        put_kmode_v3(w, &s->kmodes[i], i ? &s->kmodes[i - 1] : NULL, s->end_ns, last_ends);
    if (nccl)
        argus_wire_nccl_put(w, &s->nccl, s->start_ns);
}

long argus_summary_encode(const struct argus_step_summary *s, uint8_t *buf, size_t cap)
{
    if (!s || !buf || s->n_kmodes > ARGUS_MAX_KMODES || argus_wire_nccl_check(&s->nccl))
        return -EINVAL;
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        if (k->sketch.nbuckets > ARGUS_QSKETCH_BUCKETS || k->kclass >= ARGUS_KC_COUNT ||
            k->phase >= ARGUS_PH_COUNT)
            return -EINVAL;
    }
    struct wbuf w = {NULL, 0, 0};
    put_summary_v5(&w, s);
    if (ARGUS_WIRE_HDR + w.pos + ARGUS_WIRE_TRAILER > cap)
        return -ENOSPC;
    w = (struct wbuf){buf, 0, cap};
    argus_wire_rec_start(&w, ARGUS_REC_SUMMARY);
    put_summary_v5(&w, s);
    return argus_wire_rec_finish(&w);
}

/* Decoding: one reader per field width, by the record's version. A value too large for
 * its field is an error naming its offset (range_at). */
struct sdec {
    struct rbuf r;
    int varint;      /* v2 and later: varints where v1 had fixed widths */
    size_t range_at; /* offset of the first out-of-range value, 0 when none */
    int last_ends;   /* v3 and later: collective kernel modes carry last_end_ns (clk bit 1) */
    int nccl;        /* v5: the NCCL block follows the kernel modes (clk bit 4) */
};

static void out_of_range(struct sdec *d, size_t at)
{
    if (!d->r.bad && !d->range_at)
        d->range_at = at;
}

static uint64_t rd_u(struct sdec *d, int v1_bytes, uint64_t max)
{
    size_t at = d->r.pos;
    uint64_t v;

    if (d->varint)
        v = get_uv(&d->r);
    else
        v = v1_bytes == 8 ? get64(&d->r) : v1_bytes == 4 ? get32(&d->r) : get16(&d->r);
    if (v > max && !d->r.bad) {
        out_of_range(d, at);
        return 0;
    }
    return v;
}

static int64_t rd_s(struct sdec *d, int v1_bytes)
{
    if (d->varint)
        return get_sv(&d->r);
    return v1_bytes == 8 ? (int64_t)get64(&d->r) : (int64_t)(int32_t)get32(&d->r);
}

/* Shared checks of one decoded kernel mode (kat: its offset, nbat: its nbuckets'). */
static int check_kmode(const struct argus_kmode_stats *k, uint32_t i, size_t kat, size_t nbat,
                       char *errbuf, size_t errlen)
{
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
    return 0;
}

static void header_v12(struct sdec *d, struct argus_step_summary *out)
{
    out->start_ns = rd_u(d, 8, UINT64_MAX);
    out->end_ns = rd_u(d, 8, UINT64_MAX);
    out->clock_offset_ns = rd_s(d, 8);
    get_coords(&d->r, &out->coords);
    uint64_t *hv[] = {&out->compute_ns, &out->collective_ns, &out->p2p_ns, &out->memcpy_ns,
                      &out->busy_ns, &out->host_gap_ns, &out->kernel_count, &out->dropped,
                      &out->overhead_ns, &out->clock_gpu_ns, &out->clock_real_ns,
                      &out->clock_mono_ns};
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_wall_ns[p] = rd_u(d, 8, UINT64_MAX);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_compute_ns[p] = rd_u(d, 8, UINT64_MAX);
    for (size_t i = 0; i < (d->varint ? 12u : 8u); i++) /* v1: no overhead, no clocks */
        *hv[i] = rd_u(d, 8, UINT64_MAX);
}

/* The header of versions 3 to 5 (v4 adds the idle interval: clk bits 2 and 3; v5 the
 * NCCL block: clk bit 4). */
static void header_v34(struct sdec *d, struct argus_step_summary *out)
{
    struct rbuf *r = &d->r;
    uint16_t *c[] = {&out->coords.tp_size, &out->coords.pp_size, &out->coords.dp_size,
                     &out->coords.ep_size, &out->coords.tp, &out->coords.pp, &out->coords.dp,
                     &out->coords.ep};
    uint64_t *t[] = {&out->compute_ns, &out->collective_ns, &out->p2p_ns, &out->memcpy_ns,
                     &out->busy_ns};

    out->start_ns = get_uv(r);
    const uint64_t wall = get_uv(r);
    out->end_ns = out->start_ns + wall;
    out->clock_offset_ns = get_sv(r);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        *c[i] = (uint16_t)rd_u(d, 2, UINT16_MAX);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_wall_ns[p] = get_uv(r);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_compute_ns[p] = get_uv(r);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        *t[i] = get_uv(r);
    out->host_gap_ns = wall - out->busy_ns + get_zz(r);
    out->kernel_count = get_uv(r);
    out->dropped = get_uv(r);
    out->overhead_ns = get_uv(r);
    size_t at = r->pos;
    uint8_t clk = get8(r);
    const unsigned known = CLK_CLOCKS | CLK_LAST_END |
                           (r->version >= 4 ? CLK_IDLE | CLK_IDLE_FROM_END : 0) |
                           (r->version >= 5 ? CLK_NCCL : 0);
    if ((clk & ~known) || ((clk & CLK_IDLE_FROM_END) && !(clk & CLK_IDLE)))
        out_of_range(d, at);
    d->last_ends = (clk & CLK_LAST_END) != 0;
    d->nccl = (clk & known & CLK_NCCL) != 0;
    if (clk & CLK_CLOCKS) {
        out->clock_real_ns = out->end_ns + get_zz(r);
        out->clock_gpu_ns = out->clock_real_ns + get_zz(r);
    }
    if (clk & known & CLK_IDLE) {
        out->idle_long_ns = get_uv(r);
        const uint64_t code = get_uv(r);
        out->idle_long_end_ns = clk & CLK_IDLE_FROM_END ? wall - zz_back(code)
                                                        : out->idle_long_ns + zz_back(code);
    }
    out->clock_mono_ns = get_uv(r);
}

static int kmode_v12(struct sdec *d, struct argus_kmode_stats *k, uint32_t i, char *errbuf,
                     size_t errlen)
{
    size_t kat = d->r.pos;

    k->name_hash = get64(&d->r);
    k->mode = get8(&d->r);
    k->kclass = get8(&d->r);
    k->phase = get8(&d->r);
    if (!d->varint)
        (void)get8(&d->r);
    k->count = (uint32_t)rd_u(d, 4, UINT32_MAX);
    k->sum_ns = rd_u(d, 8, UINT64_MAX);
    k->min_ns = rd_u(d, 8, UINT64_MAX);
    k->max_ns = rd_u(d, 8, UINT64_MAX);
    size_t bat = d->r.pos;
    int64_t base = rd_s(d, 4);
    if (base < INT32_MIN || base > INT32_MAX)
        out_of_range(d, bat);
    k->sketch.base = (int32_t)base;
    size_t nbat = d->r.pos;
    k->sketch.nbuckets = d->varint ? get8(&d->r) : get16(&d->r);
    k->sketch.flags = (uint16_t)rd_u(d, 2, UINT16_MAX);
    k->sketch.zeros = (uint32_t)rd_u(d, 4, UINT32_MAX);
    if (d->r.bad)
        return 0;
    int rc = check_kmode(k, i, kat, nbat, errbuf, errlen);
    if (rc < 0)
        return rc;
    for (uint16_t b = 0; b < k->sketch.nbuckets; b++)
        k->sketch.counts[b] = (uint32_t)rd_u(d, 4, UINT32_MAX);
    return 0;
}

static int kmode_v3(struct sdec *d, struct argus_step_summary *out, uint32_t i, char *errbuf,
                    size_t errlen)
{
    struct rbuf *r = &d->r;
    struct argus_kmode_stats *k = &out->kmodes[i];
    struct argus_qsketch *q = &k->sketch;
    size_t kat = r->pos;

    uint8_t key = get8(r);
    k->kclass = (uint8_t)((key & 0x1fu) / ARGUS_PH_COUNT);
    k->phase = (uint8_t)((key & 0x1fu) % ARGUS_PH_COUNT);
    unsigned mode = (key >> KEY_MODE_SHIFT) & 3u;
    k->mode = mode == KEY_MODE_ESC ? get8(r) : (uint8_t)mode;
    if (!(key & KEY_SAME_HASH))
        k->name_hash = get64(r);
    else if (i > 0)
        k->name_hash = out->kmodes[i - 1].name_hash;
    else if (!r->bad) {
        argus_seterr(errbuf, errlen, "summary: kernel mode 0 at offset %zu repeats the name "
                     "hash of no previous mode", kat);
        return -EBADMSG;
    }
    size_t nbat = r->pos;
    uint8_t sk = get8(r);
    q->nbuckets = sk & SK_NBUCKETS;
    if (sk & SK_EXTRA) {
        q->flags = (uint16_t)rd_u(d, 2, UINT16_MAX);
        q->zeros = (uint32_t)rd_u(d, 4, UINT32_MAX);
    }
    if (r->bad)
        return 0;
    int rc = check_kmode(k, i, kat, nbat, errbuf, errlen);
    if (rc < 0)
        return rc;
    k->min_ns = get_uv(r);
    k->max_ns = k->min_ns + get_uv(r);
    size_t bat = r->pos;
    int64_t db = get_sv(r);
    if (db < (int64_t)INT32_MIN - 4096 || db > INT32_MAX) {
        out_of_range(d, bat);
        db = 0;
    }
    int64_t base = db + base_pred(k->min_ns);
    if (base < INT32_MIN || base > INT32_MAX)
        out_of_range(d, bat);
    q->base = (int32_t)(base < INT32_MIN || base > INT32_MAX ? 0 : base);
    uint64_t total = q->zeros;
    for (uint16_t b = 0; b < q->nbuckets; b++) {
        q->counts[b] = (uint32_t)rd_u(d, 4, UINT32_MAX);
        total += q->counts[b];
    }
    size_t cat = r->pos;
    if (sk & SK_COUNT)
        k->count = (uint32_t)rd_u(d, 4, UINT32_MAX);
    else if (total > UINT32_MAX)
        out_of_range(d, cat);
    else
        k->count = (uint32_t)total;
    k->sum_ns = get_uv(r) + (uint64_t)k->count * k->min_ns;
    if (d->last_ends && k->kclass == ARGUS_KC_COLLECTIVE)
        k->last_end_ns = last_end_value(get_uv(r), out->end_ns);
    return 0;
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
    const int v3 = d.r.version >= 3; /* v3 and later: the compact layout */
    d.varint = d.r.version >= 2;
    memset(out, 0, offsetof(struct argus_step_summary, kmodes));
    out->step = rd_u(&d, 8, UINT64_MAX);
    out->rank = (uint32_t)rd_u(&d, 4, UINT32_MAX);
    out->flags = (uint32_t)rd_u(&d, 4, UINT32_MAX);
    if (v3)
        header_v34(&d, out);
    else
        header_v12(&d, out);
    size_t at = d.r.pos;
    uint64_t n = rd_u(&d, 4, UINT32_MAX);
    if (!d.r.bad && n > ARGUS_MAX_KMODES) {
        argus_seterr(errbuf, errlen, "summary: %llu kernel modes at offset %zu, at most %d",
                     (unsigned long long)n, at, ARGUS_MAX_KMODES);
        return -EBADMSG;
    }
    for (uint32_t i = 0; i < n && !d.r.bad; i++) {
        memset(&out->kmodes[i], 0, sizeof out->kmodes[i]);
        rc = v3 ? kmode_v3(&d, out, i, errbuf, errlen)
                : kmode_v12(&d, &out->kmodes[i], i, errbuf, errlen);
        if (rc < 0)
            return rc;
    }
    if (d.nccl && !d.r.bad)
        argus_wire_nccl_get(&d.r, &out->nccl, out->start_ns, &d.range_at);
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
