/* wire_io.h — internal to common/wire*.c: the byte-level writer and bounds-checked reader
 * of wire records (little-endian fixed widths, LEB128 varints, zigzag signed varints),
 * and the record framing shared by the summary codec (wire_summary.c) and the name and
 * rank-info codecs (wire.c). Readers never read past `end`: the first short read sets
 * `bad` and remembers where it happened, later reads return 0.
 */
#ifndef ARGUS_COMMON_WIRE_IO_H
#define ARGUS_COMMON_WIRE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

/* A writer. With p == NULL it only counts (pos grows, nothing is stored): an encoder runs
 * once that way to size its record, then writes it for real. */
struct wbuf {
    uint8_t *p;
    size_t pos, cap; /* the encoders check the size before writing */
};

/* A bounds-checked cursor over one record's payload. */
struct rbuf {
    const uint8_t *p;
    unsigned version; /* the record's format version */
    size_t pos, end;  /* pos and end are offsets in the record */
    int bad;          /* set on the first read past end or a malformed varint */
    int bad_varint;   /* ... and it was a varint longer than 64 bits */
    size_t bad_at;
};

#define WIRE_UV_MAX 10 /* longest LEB128 encoding of a u64 */

static inline void put8(struct wbuf *w, uint8_t v)
{
    if (w->p)
        w->p[w->pos] = v;
    w->pos++;
}
static inline void put16(struct wbuf *w, uint16_t v)
{
    put8(w, (uint8_t)v);
    put8(w, (uint8_t)(v >> 8));
}
static inline void put32(struct wbuf *w, uint32_t v)
{
    put16(w, (uint16_t)v);
    put16(w, (uint16_t)(v >> 16));
}
static inline void put64(struct wbuf *w, uint64_t v)
{
    put32(w, (uint32_t)v);
    put32(w, (uint32_t)(v >> 32));
}
static inline void put_uv(struct wbuf *w, uint64_t v)
{
    while (v >= 0x80) {
        put8(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put8(w, (uint8_t)v);
}
static inline void put_sv(struct wbuf *w, int64_t v)
{
    put_uv(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
/* Zigzag of a 64-bit two's-complement bit pattern: the difference a - b of two u64 fields
 * travels as put_zz(a - b) and comes back exactly as b + get_zz() (all modulo 2^64). */
static inline void put_zz(struct wbuf *w, uint64_t v)
{
    put_uv(w, (v << 1) ^ (0 - (v >> 63)));
}
static inline size_t uv_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
static inline size_t sv_len(int64_t v)
{
    return uv_len(((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline uint16_t load16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline uint64_t load64(const uint8_t *p)
{
    return (uint64_t)load32(p) | ((uint64_t)load32(p + 4) << 32);
}

static inline int need(struct rbuf *r, size_t n)
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
static inline uint8_t get8(struct rbuf *r)
{
    return need(r, 1) ? r->p[r->pos++] : 0;
}
static inline uint16_t get16(struct rbuf *r)
{
    uint16_t v = need(r, 2) ? load16(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 2;
    return v;
}
static inline uint32_t get32(struct rbuf *r)
{
    uint32_t v = need(r, 4) ? load32(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 4;
    return v;
}
static inline uint64_t get64(struct rbuf *r)
{
    uint64_t v = need(r, 8) ? load64(r->p + r->pos) : 0;
    if (!r->bad)
        r->pos += 8;
    return v;
}
/* LEB128; more than 10 bytes or bits past 64 make the record bad (at its first byte). */
static inline uint64_t get_uv(struct rbuf *r)
{
    uint64_t v = 0;
    size_t at = r->pos;

    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (!need(r, 1))
            return 0;
        uint8_t b = r->p[r->pos++];
        if (shift == 63 && b > 1)
            break;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    if (!r->bad) {
        r->bad = r->bad_varint = 1;
        r->bad_at = at;
    }
    return 0;
}
static inline int64_t get_sv(struct rbuf *r)
{
    uint64_t u = get_uv(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline uint64_t get_zz(struct rbuf *r)
{
    uint64_t u = get_uv(r);
    return (u >> 1) ^ (0 - (u & 1));
}

static inline void put_coords(struct wbuf *w, const struct argus_coords *c)
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
static inline void get_coords(struct rbuf *r, struct argus_coords *c)
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

/* Framing (wire.c). rec_start writes the header of a record of type (version
 * ARGUS_WIRE_VERSION); rec_finish fills in the length, appends the CRC and returns the
 * record's size. rec_open checks magic, a readable version, type and length of rec and
 * sets up r over its payload (0, or -errno with errbuf naming "what" and the offset);
 * rec_close requires the payload to have been read exactly. */
void argus_wire_rec_start(struct wbuf *w, uint16_t type);
long argus_wire_rec_finish(struct wbuf *w);
int argus_wire_rec_open(const uint8_t *rec, size_t len, int type, const char *what,
                        struct rbuf *r, char *errbuf, size_t errlen);
int argus_wire_rec_close(const struct rbuf *r, const char *what, char *errbuf, size_t errlen);
/* Largest summary payload of any readable version (wire_summary.c). */
size_t argus_wire_summary_payload_max(void);

#endif /* ARGUS_COMMON_WIRE_IO_H */
