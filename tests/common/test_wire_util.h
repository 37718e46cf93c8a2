/* test_wire_util.h — helpers shared by the wire tests (test_wire.c,
 * tests/common/test_wire_summary.c): the byte-level writers of the test's own (LE fixed widths,
 * LEB128, zigzag), sealing a hand-made record (length + CRC), splicing bytes into one, the offset
 * in an error message, and independent writers of the version-1, version-2 and version-3
 * summary layouts (what older builds wrote; the library now writes only version 5).
 * Test-only code: every function is static and may go unused.
 */
#ifndef ARGUS_TESTS_COMMON_TEST_WIRE_UTIL_H
#define ARGUS_TESTS_COMMON_TEST_WIRE_UTIL_H

#include "tests/common/testgen.h"

#include <stdlib.h>

#include "common/wire.h"

/* Parse the number after "at offset " in msg; -1 when absent. */
static TG_UNUSED long long msg_offset(const char *msg)
{
    const char *p = strstr(msg, "at offset ");
    return p ? strtoll(p + 10, NULL, 10) : -1;
}

/* Length of v as a LEB128 varint (the test's own count, not the encoder's). */
static TG_UNUSED size_t uvl(uint64_t v)
{
    size_t n = 1;
    for (; v >= 128; v >>= 7)
        n++;
    return n;
}

static TG_UNUSED uint64_t zz(int64_t v)
{
    return v < 0 ? 2 * (uint64_t)(-(v + 1)) + 1 : 2 * (uint64_t)v;
}

static TG_UNUSED void le(uint8_t **p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *(*p)++ = (uint8_t)(v >> 8 * i);
}

static TG_UNUSED void uv(uint8_t **p, uint64_t v)
{
    for (; v >= 128; v >>= 7)
        *(*p)++ = (uint8_t)(v | 128);
    *(*p)++ = (uint8_t)v;
}

/* Seal a record of total length n: payload length and CRC. */
static TG_UNUSED void seal(uint8_t *rec, size_t n)
{
    uint8_t *p = rec + 8;
    le(&p, n - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER, 4);
    p = rec + n - 4;
    le(&p, argus_crc32c(rec, n - ARGUS_WIRE_TRAILER), 4);
}

/* Re-seal a patched record with a correct checksum so the decoder's checks are reached. */
static TG_UNUSED void reseal(uint8_t *rec, size_t len)
{
    uint32_t c = argus_crc32c(rec, len - 4);
    for (int i = 0; i < 4; i++)
        rec[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

/* Replace del bytes at offset at of a record of length n with ins[ilen]; reseal. */
static TG_UNUSED size_t splice(uint8_t *rec, size_t n, size_t at, size_t del,
                               const uint8_t *ins, size_t ilen)
{
    memmove(rec + at + ilen, rec + at + del, n - at - del);
    memcpy(rec + at, ins, ilen);
    n = n - del + ilen;
    seal(rec, n);
    return n;
}

/* The version-1 summary record an older build wrote (fixed widths, no overhead and no
 * clock triple), written here from the old layout independently of the encoder. */
static TG_UNUSED size_t encode_v1(const struct argus_step_summary *s, uint8_t *rec)
{
    uint8_t *p = rec;
    le(&p, ARGUS_WIRE_MAGIC, 4);
    le(&p, 1, 2);
    le(&p, ARGUS_REC_SUMMARY, 2);
    le(&p, 0, 4);
    le(&p, s->step, 8);
    le(&p, s->rank, 4);
    le(&p, s->flags, 4);
    le(&p, s->start_ns, 8);
    le(&p, s->end_ns, 8);
    le(&p, (uint64_t)s->clock_offset_ns, 8);
    const uint16_t c[] = {s->coords.tp_size, s->coords.pp_size, s->coords.dp_size,
                          s->coords.ep_size, s->coords.tp, s->coords.pp, s->coords.dp,
                          s->coords.ep};
    for (int i = 0; i < 8; i++)
        le(&p, c[i], 2);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        le(&p, s->phase_wall_ns[i], 8);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        le(&p, s->phase_compute_ns[i], 8);
    const uint64_t t[] = {s->compute_ns, s->collective_ns, s->p2p_ns, s->memcpy_ns,
                          s->busy_ns, s->host_gap_ns, s->kernel_count, s->dropped};
    for (int i = 0; i < 8; i++)
        le(&p, t[i], 8);
    le(&p, s->n_kmodes, 4);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        le(&p, k->name_hash, 8);
        le(&p, k->mode, 1);
        le(&p, k->kclass, 1);
        le(&p, k->phase, 1);
        le(&p, 0, 1);
        le(&p, k->count, 4);
        le(&p, k->sum_ns, 8);
        le(&p, k->min_ns, 8);
        le(&p, k->max_ns, 8);
        le(&p, (uint32_t)k->sketch.base, 4);
        le(&p, k->sketch.nbuckets, 2);
        le(&p, k->sketch.flags, 2);
        le(&p, k->sketch.zeros, 4);
        for (int b = 0; b < k->sketch.nbuckets; b++)
            le(&p, k->sketch.counts[b], 4);
    }
    size_t n = (size_t)(p - rec) + ARGUS_WIRE_TRAILER;
    seal(rec, n);
    return n;
}

/* The version-2 summary record (varints, overhead and clock triple) the previous build
 * wrote, from its layout, independently of the library. */
static TG_UNUSED size_t encode_v2(const struct argus_step_summary *s, uint8_t *rec)
{
    uint8_t *p = rec;
    le(&p, ARGUS_WIRE_MAGIC, 4);
    le(&p, 2, 2);
    le(&p, ARGUS_REC_SUMMARY, 2);
    le(&p, 0, 4);
    uv(&p, s->step);
    uv(&p, s->rank);
    uv(&p, s->flags);
    uv(&p, s->start_ns);
    uv(&p, s->end_ns);
    uv(&p, zz(s->clock_offset_ns));
    const uint16_t c[] = {s->coords.tp_size, s->coords.pp_size, s->coords.dp_size,
                          s->coords.ep_size, s->coords.tp, s->coords.pp, s->coords.dp,
                          s->coords.ep};
    for (int i = 0; i < 8; i++)
        le(&p, c[i], 2);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        uv(&p, s->phase_wall_ns[i]);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        uv(&p, s->phase_compute_ns[i]);
    const uint64_t t[] = {s->compute_ns, s->collective_ns, s->p2p_ns, s->memcpy_ns,
                          s->busy_ns, s->host_gap_ns, s->kernel_count, s->dropped,
                          s->overhead_ns, s->clock_gpu_ns, s->clock_real_ns, s->clock_mono_ns};
    for (int i = 0; i < 12; i++)
        uv(&p, t[i]);
    uv(&p, s->n_kmodes);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        le(&p, k->name_hash, 8);
        le(&p, k->mode, 1);
        le(&p, k->kclass, 1);
        le(&p, k->phase, 1);
        uv(&p, k->count);
        uv(&p, k->sum_ns);
        uv(&p, k->min_ns);
        uv(&p, k->max_ns);
        uv(&p, zz(k->sketch.base));
        le(&p, k->sketch.nbuckets, 1);
        uv(&p, k->sketch.flags);
        uv(&p, k->sketch.zeros);
        for (int b = 0; b < k->sketch.nbuckets; b++)
            uv(&p, k->sketch.counts[b]);
    }
    size_t n = (size_t)(p - rec) + ARGUS_WIRE_TRAILER;
    seal(rec, n);
    return n;
}

/* The version-3 base predictor as wire_summary.c documents it, written from the spec. */
static TG_UNUSED int64_t v3_pred(uint64_t v)
{
    if (v == 0)
        return 0;
    int l = 0;
    while (l < 63 && (v >> (l + 1)))
        l++;
    uint64_t top = l >= 16 ? v >> (l - 16) : v << (16 - l); /* 17 bits: 1.ffff */
    return (int64_t)(((((uint64_t)l << 16) | (top & 0xffff)) * 17742u) >> 26) + 1;
}

/* The version-3 summary record the previous build wrote (wire_summary.c's layout without
 * the idle interval: clk bits 0 and 1 only), from that layout, independently of the
 * library; idle_long_ns and idle_long_end_ns do not travel. */
static TG_UNUSED size_t encode_v3(const struct argus_step_summary *s, uint8_t *rec)
{
    uint8_t *p = rec;
    const uint64_t wall = s->end_ns - s->start_ns;
    le(&p, ARGUS_WIRE_MAGIC, 4);
    le(&p, 3, 2);
    le(&p, ARGUS_REC_SUMMARY, 2);
    le(&p, 0, 4);
    uv(&p, s->step);
    uv(&p, s->rank);
    uv(&p, s->flags);
    uv(&p, s->start_ns);
    uv(&p, wall);
    uv(&p, zz(s->clock_offset_ns));
    const uint16_t c[] = {s->coords.tp_size, s->coords.pp_size, s->coords.dp_size,
                          s->coords.ep_size, s->coords.tp, s->coords.pp, s->coords.dp,
                          s->coords.ep};
    for (int i = 0; i < 8; i++)
        uv(&p, c[i]);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        uv(&p, s->phase_wall_ns[i]);
    for (int i = 0; i < ARGUS_PH_COUNT; i++)
        uv(&p, s->phase_compute_ns[i]);
    const uint64_t t[] = {s->compute_ns, s->collective_ns, s->p2p_ns, s->memcpy_ns,
                          s->busy_ns};
    for (int i = 0; i < 5; i++)
        uv(&p, t[i]);
    uv(&p, zz((int64_t)(s->host_gap_ns - (wall - s->busy_ns))));
    uv(&p, s->kernel_count);
    uv(&p, s->dropped);
    uv(&p, s->overhead_ns);
    int clocks = s->clock_real_ns || s->clock_gpu_ns, ends = 0;
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        ends |= s->kmodes[i].kclass == ARGUS_KC_COLLECTIVE && s->kmodes[i].last_end_ns;
    le(&p, (uint64_t)(clocks | ends << 1), 1);
    if (clocks) {
        uv(&p, zz((int64_t)(s->clock_real_ns - s->end_ns)));
        uv(&p, zz((int64_t)(s->clock_gpu_ns - s->clock_real_ns)));
    }
    uv(&p, s->clock_mono_ns);
    uv(&p, s->n_kmodes);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        const struct argus_qsketch *q = &k->sketch;
        const int same = i > 0 && s->kmodes[i - 1].name_hash == k->name_hash;
        uint64_t total = q->zeros;
        for (int b = 0; b < q->nbuckets; b++)
            total += q->counts[b];
        const int counted = total != k->count, extra = q->flags || q->zeros;
        le(&p, (uint64_t)((k->kclass * ARGUS_PH_COUNT + k->phase) |
                          (k->mode < 3 ? k->mode : 3) << 5 | (same ? 0x80 : 0)), 1);
        if (k->mode >= 3)
            le(&p, k->mode, 1);
        if (!same)
            le(&p, k->name_hash, 8);
        le(&p, (uint64_t)(q->nbuckets | (counted ? 0x40 : 0) | (extra ? 0x80 : 0)), 1);
        if (extra) {
            uv(&p, q->flags);
            uv(&p, q->zeros);
        }
        uv(&p, k->min_ns);
        uv(&p, k->max_ns - k->min_ns);
        uv(&p, zz((int64_t)q->base - v3_pred(k->min_ns)));
        for (int b = 0; b < q->nbuckets; b++)
            uv(&p, q->counts[b]);
        if (counted)
            uv(&p, k->count);
        uv(&p, k->sum_ns - (uint64_t)k->count * k->min_ns);
        if (ends && k->kclass == ARGUS_KC_COLLECTIVE) {
            uint64_t z = zz((int64_t)(k->last_end_ns - s->end_ns));
            uint64_t z0 = zz((int64_t)(0 - s->end_ns));
            uv(&p, k->last_end_ns == 0 ? 0 : z < z0 ? z + 1 : z);
        }
    }
    size_t n = (size_t)(p - rec) + ARGUS_WIRE_TRAILER;
    seal(rec, n);
    return n;
}

#endif /* ARGUS_TESTS_COMMON_TEST_WIRE_UTIL_H */
