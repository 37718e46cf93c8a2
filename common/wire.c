/* wire.c — encoding and decoding of wire records (wire.h): step summaries, kernel names,
 * rank info. Every field is written byte by byte in little-endian order (never a struct
 * memcpy), so the format does not depend on the host's layout or padding. Decoders trust
 * nothing: every read is bounds-checked and every failure names an offset. No allocation.
 *
 * Summary payload:
 *   u64 step, u32 rank, u32 flags, u64 start_ns, u64 end_ns, i64 clock_offset_ns,
 *   8 x u16 coords (tp_size pp_size dp_size ep_size tp pp dp ep),
 *   ARGUS_PH_COUNT x u64 phase_wall_ns, ARGUS_PH_COUNT x u64 phase_compute_ns,
 *   u64 compute collective p2p memcpy busy host_gap kernel_count dropped,
 *   [version >= 2: u64 overhead_ns clock_gpu_ns clock_real_ns clock_mono_ns], u32 n_kmodes,
 *   n_kmodes x { u64 name_hash, u8 mode, u8 kclass, u8 phase, u8 0, u32 count,
 *                u64 sum_ns min_ns max_ns,
 *                sketch: i32 base, u16 nbuckets, u16 flags, u32 zeros, nbuckets x u32 }
 * Name payload:     u64 hash, u16 len, len bytes (no NUL, len <= ARGUS_NAME_MAX)
 * Rank-info payload: u32 rank, u32 world_size, i32 device, u32 pid, 8 x u16 coords,
 *                    u64 started_ns, u8 len, len bytes of host (len < ARGUS_HOST_MAX)
 */
#include "common/wire.h"
#include "common/errbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SUM_FIXED_V1 (8 + 4 + 4 + 8 + 8 + 8 + 8 * 2 + 2 * ARGUS_PH_COUNT * 8 + 8 * 8 + 4)
#define SUM_FIXED (SUM_FIXED_V1 + 4 * 8)
#define KMODE_FIXED (8 + 4 + 4 + 3 * 8 + 4 + 2 + 2 + 4)
#define KMODE_MAX (KMODE_FIXED + ARGUS_QSKETCH_BUCKETS * 4)
#define RANKINFO_MAX (4 * 4 + 8 * 2 + 8 + 1 + ARGUS_HOST_MAX)
#define NAME_PAYLOAD_MAX (8 + 2 + ARGUS_NAME_MAX)
#define PAYLOAD_MAX ((size_t)SUM_FIXED + (size_t)ARGUS_MAX_KMODES * KMODE_MAX)

/* ---- writer ------------------------------------------------------------------------ */

struct wbuf {
    uint8_t *p;
    size_t pos, cap;
};

static void put8(struct wbuf *w, uint8_t v) { w->p[w->pos++] = v; }
static void put16(struct wbuf *w, uint16_t v)
{
    put8(w, (uint8_t)v);
    put8(w, (uint8_t)(v >> 8));
}
static void put32(struct wbuf *w, uint32_t v)
{
    put16(w, (uint16_t)v);
    put16(w, (uint16_t)(v >> 16));
}
static void put64(struct wbuf *w, uint64_t v)
{
    put32(w, (uint32_t)v);
    put32(w, (uint32_t)(v >> 32));
}

static void store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint16_t load16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static uint64_t load64(const uint8_t *p)
{
    return (uint64_t)load32(p) | ((uint64_t)load32(p + 4) << 32);
}

/* Header now, length and checksum when the payload is done (rec_finish). */
static void rec_start(struct wbuf *w, uint16_t type)
{
    put32(w, ARGUS_WIRE_MAGIC);
    put16(w, ARGUS_WIRE_VERSION);
    put16(w, type);
    put32(w, 0);
}

static long rec_finish(struct wbuf *w)
{
    store32(w->p + 8, (uint32_t)(w->pos - ARGUS_WIRE_HDR));
    uint32_t crc = argus_crc32c(w->p, w->pos);
    put32(w, crc);
    return (long)w->pos;
}

static void put_coords(struct wbuf *w, const struct argus_coords *c)
{
    put16(w, c->tp_size);
    put16(w, c->pp_size);
    put16(w, c->dp_size);
    put16(w, c->ep_size);
    put16(w, c->tp);
    put16(w, c->pp);
    put16(w, c->dp);
    put16(w, c->ep);
}

static size_t kmode_size(const struct argus_kmode_stats *k)
{
    return KMODE_FIXED + (size_t)k->sketch.nbuckets * 4;
}

size_t argus_summary_encoded_max(uint32_t n_kmodes)
{
    return ARGUS_WIRE_HDR + SUM_FIXED + (size_t)n_kmodes * KMODE_MAX + ARGUS_WIRE_TRAILER;
}

long argus_summary_encode(const struct argus_step_summary *s, uint8_t *buf, size_t cap)
{
    if (!s || !buf || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    size_t need = ARGUS_WIRE_HDR + SUM_FIXED + ARGUS_WIRE_TRAILER;
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        if (s->kmodes[i].sketch.nbuckets > ARGUS_QSKETCH_BUCKETS)
            return -EINVAL;
        need += kmode_size(&s->kmodes[i]);
    }
    if (need > cap)
        return -ENOSPC;

    struct wbuf w = {buf, 0, cap};
    rec_start(&w, ARGUS_REC_SUMMARY);
    put64(&w, s->step);
    put32(&w, s->rank);
    put32(&w, s->flags);
    put64(&w, s->start_ns);
    put64(&w, s->end_ns);
    put64(&w, (uint64_t)s->clock_offset_ns);
    put_coords(&w, &s->coords);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        put64(&w, s->phase_wall_ns[p]);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        put64(&w, s->phase_compute_ns[p]);
    put64(&w, s->compute_ns);
    put64(&w, s->collective_ns);
    put64(&w, s->p2p_ns);
    put64(&w, s->memcpy_ns);
    put64(&w, s->busy_ns);
    put64(&w, s->host_gap_ns);
    put64(&w, s->kernel_count);
    put64(&w, s->dropped);
    put64(&w, s->overhead_ns);
    put64(&w, s->clock_gpu_ns);
    put64(&w, s->clock_real_ns);
    put64(&w, s->clock_mono_ns);
    put32(&w, s->n_kmodes);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        put64(&w, k->name_hash);
        put8(&w, k->mode);
        put8(&w, k->kclass);
        put8(&w, k->phase);
        put8(&w, 0);
        put32(&w, k->count);
        put64(&w, k->sum_ns);
        put64(&w, k->min_ns);
        put64(&w, k->max_ns);
        put32(&w, (uint32_t)k->sketch.base);
        put16(&w, k->sketch.nbuckets);
        put16(&w, k->sketch.flags);
        put32(&w, k->sketch.zeros);
        for (uint16_t b = 0; b < k->sketch.nbuckets; b++)
            put32(&w, k->sketch.counts[b]);
    }
    return rec_finish(&w);
}

long argus_name_encode(uint64_t hash, const char *name, uint8_t *buf, size_t cap)
{
    if (!name || !buf)
        return -EINVAL;
    size_t n = strnlen(name, ARGUS_NAME_MAX);
    if (ARGUS_WIRE_HDR + 8 + 2 + n + ARGUS_WIRE_TRAILER > cap)
        return -ENOSPC;
    struct wbuf w = {buf, 0, cap};
    rec_start(&w, ARGUS_REC_NAME);
    put64(&w, hash);
    put16(&w, (uint16_t)n);
    memcpy(w.p + w.pos, name, n);
    w.pos += n;
    return rec_finish(&w);
}

long argus_rankinfo_encode(const struct argus_rank_info *ri, uint8_t *buf, size_t cap)
{
    if (!ri || !buf)
        return -EINVAL;
    size_t n = strnlen(ri->host, ARGUS_HOST_MAX - 1);
    if (ARGUS_WIRE_HDR + 4 * 4 + 8 * 2 + 8 + 1 + n + ARGUS_WIRE_TRAILER > cap)
        return -ENOSPC;
    struct wbuf w = {buf, 0, cap};
    rec_start(&w, ARGUS_REC_JOBINFO);
    put32(&w, ri->rank);
    put32(&w, ri->world_size);
    put32(&w, (uint32_t)ri->device);
    put32(&w, ri->pid);
    put_coords(&w, &ri->coords);
    put64(&w, ri->started_ns);
    put8(&w, (uint8_t)n);
    memcpy(w.p + w.pos, ri->host, n);
    w.pos += n;
    return rec_finish(&w);
}

/* ---- reader ------------------------------------------------------------------------ */

static size_t payload_max(int type)
{
    switch (type) {
    case ARGUS_REC_SUMMARY: return PAYLOAD_MAX;
    case ARGUS_REC_NAME: return NAME_PAYLOAD_MAX;
    case ARGUS_REC_JOBINFO: return RANKINFO_MAX;
    default: return 0;
    }
}

long argus_record_peek(const uint8_t *buf, size_t len, uint64_t base_offset, int *type,
                       char *errbuf, size_t errlen)
{
    unsigned long long off = (unsigned long long)base_offset;

    if (!buf || len < ARGUS_WIRE_HDR) {
        argus_seterr(errbuf, errlen, "truncated record at offset %llu: %zu of %d header bytes",
               off, buf ? len : 0, ARGUS_WIRE_HDR);
        return -EBADMSG;
    }
    uint32_t magic = load32(buf);
    if (magic != ARGUS_WIRE_MAGIC) {
        argus_seterr(errbuf, errlen, "bad magic at offset %llu: 0x%08x", off, magic);
        return -EBADMSG;
    }
    uint16_t version = load16(buf + 4);
    if (version < ARGUS_WIRE_VERSION_MIN || version > ARGUS_WIRE_VERSION) {
        argus_seterr(errbuf, errlen,
               "unsupported version %u at offset %llu (this build reads %d to %d)", version,
               off + 4, ARGUS_WIRE_VERSION_MIN, ARGUS_WIRE_VERSION);
        return -EPROTO;
    }
    uint16_t t = load16(buf + 6);
    size_t pmax = payload_max(t);
    if (pmax == 0) {
        argus_seterr(errbuf, errlen, "unknown record type %u at offset %llu", t, off + 6);
        return -EPROTO;
    }
    uint32_t plen = load32(buf + 8);
    if (plen > pmax) {
        argus_seterr(errbuf, errlen,
               "bad record length at offset %llu: payload of %u bytes, at most %zu", off + 8,
               plen, pmax);
        return -EBADMSG;
    }
    size_t total = ARGUS_WIRE_HDR + (size_t)plen + ARGUS_WIRE_TRAILER;
    if (len < total) {
        argus_seterr(errbuf, errlen, "truncated record at offset %llu: %zu of %zu bytes", off, len,
               total);
        return -EBADMSG;
    }
    uint32_t want = load32(buf + total - ARGUS_WIRE_TRAILER);
    uint32_t got = argus_crc32c(buf, total - ARGUS_WIRE_TRAILER);
    if (want != got) {
        argus_seterr(errbuf, errlen, "checksum mismatch at offset %llu: record says 0x%08x, "
               "content gives 0x%08x", off, want, got);
        return -EBADMSG;
    }
    if (type)
        *type = t;
    return (long)total;
}

/* A bounds-checked cursor over one record's payload. */
struct rbuf {
    const uint8_t *p;
    unsigned version; /* the record's format version */
    size_t pos, end; /* pos and end are offsets in the record */
    int bad;         /* set on the first read past end */
    size_t bad_at;
};

static int need(struct rbuf *r, size_t n)
{
    if (r->bad)
        return 0;
    if (r->end - r->pos < n) {
        r->bad = 1;
        r->bad_at = r->pos;
        return 0;
    }
    return 1;
}
static uint8_t get8(struct rbuf *r)
{
    return need(r, 1) ? r->p[r->pos++] : 0;
}
static uint16_t get16(struct rbuf *r)
{
    uint16_t v = need(r, 2) ? load16(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 2;
    return v;
}
static uint32_t get32(struct rbuf *r)
{
    uint32_t v = need(r, 4) ? load32(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 4;
    return v;
}
static uint64_t get64(struct rbuf *r)
{
    uint64_t v = need(r, 8) ? load64(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 8;
    return v;
}

static void get_coords(struct rbuf *r, struct argus_coords *c)
{
    c->tp_size = get16(r);
    c->pp_size = get16(r);
    c->dp_size = get16(r);
    c->ep_size = get16(r);
    c->tp = get16(r);
    c->pp = get16(r);
    c->dp = get16(r);
    c->ep = get16(r);
}

/* Check the header of rec (type and length agree with len) and set up a payload cursor. */
static int rec_open(const uint8_t *rec, size_t len, int type, const char *what,
                    struct rbuf *r, char *errbuf, size_t errlen)
{
    if (!rec || len < ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER) {
        argus_seterr(errbuf, errlen, "%s: truncated record at offset 0: %zu bytes", what,
               rec ? len : 0);
        return -EBADMSG;
    }
    unsigned version = load16(rec + 4);
    if (load32(rec) != ARGUS_WIRE_MAGIC || version < ARGUS_WIRE_VERSION_MIN ||
        version > ARGUS_WIRE_VERSION) {
        argus_seterr(errbuf, errlen, "%s: bad magic or version at offset 0", what);
        return -EBADMSG;
    }
    if (load16(rec + 6) != type) {
        argus_seterr(errbuf, errlen, "%s: record type %u at offset 6, expected %d", what,
               load16(rec + 6), type);
        return -EINVAL;
    }
    uint32_t plen = load32(rec + 8);
    if ((size_t)plen != len - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER) {
        argus_seterr(errbuf, errlen, "%s: payload length %u at offset 8 disagrees with record "
               "size %zu", what, plen, len);
        return -EBADMSG;
    }
    r->p = rec;
    r->version = version;
    r->pos = ARGUS_WIRE_HDR;
    r->end = ARGUS_WIRE_HDR + plen;
    r->bad = 0;
    r->bad_at = 0;
    return 0;
}

/* After decoding: the payload must have been exactly consumed. */
static int rec_close(const struct rbuf *r, const char *what, char *errbuf, size_t errlen)
{
    if (r->bad) {
        argus_seterr(errbuf, errlen, "%s: payload ends early at offset %zu", what, r->bad_at);
        return -EBADMSG;
    }
    if (r->pos != r->end) {
        argus_seterr(errbuf, errlen, "%s: %zu trailing payload bytes at offset %zu", what,
               r->end - r->pos, r->pos);
        return -EBADMSG;
    }
    return 0;
}

int argus_summary_decode(const uint8_t *rec, size_t len, struct argus_step_summary *out,
                         char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = rec_open(rec, len, ARGUS_REC_SUMMARY, "summary", &r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!out)
        return -EINVAL;
    memset(out, 0, offsetof(struct argus_step_summary, kmodes));
    out->step = get64(&r);
    out->rank = get32(&r);
    out->flags = get32(&r);
    out->start_ns = get64(&r);
    out->end_ns = get64(&r);
    out->clock_offset_ns = (int64_t)get64(&r);
    get_coords(&r, &out->coords);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_wall_ns[p] = get64(&r);
    for (int p = 0; p < ARGUS_PH_COUNT; p++)
        out->phase_compute_ns[p] = get64(&r);
    out->compute_ns = get64(&r);
    out->collective_ns = get64(&r);
    out->p2p_ns = get64(&r);
    out->memcpy_ns = get64(&r);
    out->busy_ns = get64(&r);
    out->host_gap_ns = get64(&r);
    out->kernel_count = get64(&r);
    out->dropped = get64(&r);
    if (r.version >= 2) {
        out->overhead_ns = get64(&r);
        out->clock_gpu_ns = get64(&r);
        out->clock_real_ns = get64(&r);
        out->clock_mono_ns = get64(&r);
    }
    size_t at = r.pos;
    uint32_t n = get32(&r);
    if (!r.bad && n > ARGUS_MAX_KMODES) {
        argus_seterr(errbuf, errlen, "summary: %u kernel modes at offset %zu, at most %d", n, at,
               ARGUS_MAX_KMODES);
        return -EBADMSG;
    }
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        struct argus_kmode_stats *k = &out->kmodes[i];
        size_t kat = r.pos;
        memset(k, 0, sizeof *k);
        k->name_hash = get64(&r);
        k->mode = get8(&r);
        k->kclass = get8(&r);
        k->phase = get8(&r);
        (void)get8(&r);
        k->count = get32(&r);
        k->sum_ns = get64(&r);
        k->min_ns = get64(&r);
        k->max_ns = get64(&r);
        k->sketch.base = (int32_t)get32(&r);
        size_t nbat = r.pos;
        k->sketch.nbuckets = get16(&r);
        k->sketch.flags = get16(&r);
        k->sketch.zeros = get32(&r);
        if (r.bad)
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
            k->sketch.counts[b] = get32(&r);
    }
    rc = rec_close(&r, "summary", errbuf, errlen);
    if (rc < 0)
        return rc;
    out->n_kmodes = n;
    return 0;
}

int argus_name_decode(const uint8_t *rec, size_t len, uint64_t *hash, char *name,
                      char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = rec_open(rec, len, ARGUS_REC_NAME, "name", &r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!hash || !name)
        return -EINVAL;
    *hash = get64(&r);
    size_t at = r.pos;
    uint16_t n = get16(&r);
    if (!r.bad && n > ARGUS_NAME_MAX) {
        argus_seterr(errbuf, errlen, "name: length %u at offset %zu, at most %d", n, at,
               ARGUS_NAME_MAX);
        return -EBADMSG;
    }
    if (!r.bad && need(&r, n)) {
        if (memchr(r.p + r.pos, '\0', n)) {
            argus_seterr(errbuf, errlen, "name: NUL byte inside the name at offset %zu", r.pos);
            return -EBADMSG;
        }
        memcpy(name, r.p + r.pos, n);
        name[n] = '\0';
        r.pos += n;
    }
    return rec_close(&r, "name", errbuf, errlen);
}

int argus_rankinfo_decode(const uint8_t *rec, size_t len, struct argus_rank_info *out,
                          char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = rec_open(rec, len, ARGUS_REC_JOBINFO, "rank info", &r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    out->rank = get32(&r);
    out->world_size = get32(&r);
    out->device = (int32_t)get32(&r);
    out->pid = get32(&r);
    get_coords(&r, &out->coords);
    out->started_ns = get64(&r);
    size_t at = r.pos;
    uint8_t n = get8(&r);
    if (!r.bad && n >= ARGUS_HOST_MAX) {
        argus_seterr(errbuf, errlen, "rank info: host name of %u bytes at offset %zu, at most %d",
               n, at, ARGUS_HOST_MAX - 1);
        return -EBADMSG;
    }
    if (!r.bad && need(&r, n)) {
        if (memchr(r.p + r.pos, '\0', n)) {
            argus_seterr(errbuf, errlen, "rank info: NUL byte inside the host name at offset %zu",
                   r.pos);
            return -EBADMSG;
        }
        memcpy(out->host, r.p + r.pos, n);
        out->host[n] = '\0';
        r.pos += n;
    }
    return rec_close(&r, "rank info", errbuf, errlen);
}
