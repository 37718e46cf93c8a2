/* stackrec.c — host stack samples: the wire message and rank 0's bounded set
 * (stackrec.h). Layout, little-endian: magic u32, version u16, why u8, lang u8, rank u32,
 * stalled_ms u32, step u64, t_ns u64, cost_ns u32, nframes u16, text length u16 (no NUL),
 * for_rank u32, for_step u64, the text, CRC32C u32 of everything before it. A request:
 * magic u32, version u16, for_rank u32, for_step u64, CRC32C u32. Decoding checks every length and never
 * reads past the end; must not allocate except at set init.
 */
#include "common/stackrec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/wire.h"

#define HDR 52

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

long argus_stackrec_encode(const struct argus_stackrec *r, uint8_t *buf, size_t cap)
{
    const size_t tl = strnlen(r->folded, ARGUS_STACKREC_TEXT - 1);
    const size_t n = HDR + tl + 4;
    if (cap < n)
        return -ENOSPC;
    put32(buf, ARGUS_STACKREC_MAGIC);
    put16(buf + 4, ARGUS_STACKREC_VERSION);
    buf[6] = r->why;
    buf[7] = r->lang;
    put32(buf + 8, r->rank);
    put32(buf + 12, r->stalled_ms);
    put64(buf + 16, r->step);
    put64(buf + 24, r->t_ns);
    put32(buf + 32, r->cost_ns);
    put16(buf + 36, r->nframes);
    put16(buf + 38, (uint16_t)tl);
    put32(buf + 40, r->for_rank);
    put64(buf + 44, r->for_step);
    memcpy(buf + HDR, r->folded, tl);
    put32(buf + HDR + tl, argus_crc32c(buf, HDR + tl));
    return (long)n;
}

int argus_stackrec_decode(const uint8_t *buf, size_t len, struct argus_stackrec *r,
                          char *errbuf, size_t errlen)
{
    if (len < HDR + 4) {
        argus_seterr(errbuf, errlen, "stack sample: %zu bytes, shorter than its header", len);
        return -EINVAL;
    }
    if (get32(buf) != ARGUS_STACKREC_MAGIC || get16(buf + 4) != ARGUS_STACKREC_VERSION) {
        argus_seterr(errbuf, errlen, "stack sample: bad magic or version at offset 0");
        return -EINVAL;
    }
    const size_t tl = get16(buf + 38);
    if (tl >= ARGUS_STACKREC_TEXT || HDR + tl + 4 != len) {
        argus_seterr(errbuf, errlen, "stack sample: text length %zu does not match %zu bytes",
                     tl, len);
        return -EINVAL;
    }
    if (get32(buf + HDR + tl) != argus_crc32c(buf, HDR + tl)) {
        argus_seterr(errbuf, errlen, "stack sample: checksum mismatch at offset %zu", HDR + tl);
        return -EINVAL;
    }
    if (memchr(buf + HDR, '\0', tl) || (buf[7] != ARGUS_STACK_PYTHON &&
                                         buf[7] != ARGUS_STACK_NATIVE)) {
        argus_seterr(errbuf, errlen, "stack sample: bad text or kind at offset %d", HDR);
        return -EINVAL;
    }
    r->why = buf[6];
    r->lang = buf[7];
    r->rank = get32(buf + 8);
    r->stalled_ms = get32(buf + 12);
    r->step = get64(buf + 16);
    r->t_ns = get64(buf + 24);
    r->cost_ns = get32(buf + 32);
    r->nframes = get16(buf + 36);
    r->for_rank = get32(buf + 40);
    r->for_step = get64(buf + 44);
    memcpy(r->folded, buf + HDR, tl);
    r->folded[tl] = '\0';
    return 0;
}

void argus_stackreq_encode(uint32_t for_rank, uint64_t for_step,
                           uint8_t buf[ARGUS_STACKREQ_WIRE])
{
    put32(buf, ARGUS_STACKREQ_MAGIC);
    put16(buf + 4, ARGUS_STACKREC_VERSION);
    put32(buf + 6, for_rank);
    put64(buf + 10, for_step);
    put32(buf + 18, argus_crc32c(buf, 18));
}

int argus_stackreq_decode(const uint8_t *buf, size_t len, uint32_t *for_rank,
                          uint64_t *for_step, char *errbuf, size_t errlen)
{
    if (len != ARGUS_STACKREQ_WIRE || get32(buf) != ARGUS_STACKREQ_MAGIC ||
        get16(buf + 4) != ARGUS_STACKREC_VERSION) {
        argus_seterr(errbuf, errlen, "stack request: %zu bytes, bad length, magic or version",
                     len);
        return -EINVAL;
    }
    if (get32(buf + 18) != argus_crc32c(buf, 18)) {
        argus_seterr(errbuf, errlen, "stack request: checksum mismatch at offset 18");
        return -EINVAL;
    }
    *for_rank = get32(buf + 6);
    *for_step = get64(buf + 10);
    return 0;
}

int argus_stackset_init(struct argus_stackset *s, size_t max)
{
    memset(s, 0, sizeof *s);
    s->v = calloc(max ? max : 1, sizeof *s->v);
    if (!s->v)
        return -ENOMEM;
    s->max = max;
    return 0;
}

void argus_stackset_free(struct argus_stackset *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

int argus_stackset_add(struct argus_stackset *s, const struct argus_stackrec *r)
{
    if (s->n >= s->max) {
        s->dropped++;
        return 0;
    }
    s->v[s->n++] = *r;
    return 1;
}
