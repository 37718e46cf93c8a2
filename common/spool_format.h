/* spool_format.h — internal to common/spool_write.c and common/spool_read.c: the on-disk
 * pieces both sides of a spool file share (spool.h, "File layout"): the header and mark
 * frame sizes, little-endian put/get, building the 16-byte header, building and parsing a
 * mark frame. Plain functions of their arguments: no I/O, no allocation, no state.
 */
#ifndef ARGUS_COMMON_SPOOL_FORMAT_H
#define ARGUS_COMMON_SPOOL_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "common/spool.h"
#include "common/wire.h"

#define SPOOL_HDR 16
#define MARK_PAYLOAD 40 /* "ARGM" u16 u16 u32 u64 u64 u64 u32 */
#define MARK_FRAME (8 + MARK_PAYLOAD)

static inline void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

static inline void header_build(uint8_t h[SPOOL_HDR], uint8_t flags)
{
    memcpy(h, ARGUS_SPOOL_MAGIC, 8);
    h[8] = (uint8_t)ARGUS_SPOOL_VERSION;
    h[9] = (uint8_t)(ARGUS_SPOOL_VERSION >> 8);
    h[10] = flags;
    h[11] = 0;
    put32(h + 12, argus_crc32c(h, 12));
}

/* f: a whole mark frame (zstd skippable-frame header, then the payload) saying *m. */
static inline void mark_build(uint8_t f[MARK_FRAME], const struct argus_spool_mark *m)
{
    put32(f, ARGUS_SPOOL_MARK_MAGIC);
    put32(f + 4, MARK_PAYLOAD);
    uint8_t *p = f + 8;
    memcpy(p, "ARGM", 4);
    p[4] = 1; /* mark version */
    p[5] = 0;
    p[6] = (uint8_t)m->kind;
    p[7] = (uint8_t)(m->kind >> 8);
    put32(p + 8, m->level);
    put64(p + 12, m->a);
    put64(p + 20, m->b);
    put64(p + 28, m->c);
    put32(p + 36, argus_crc32c(p, 36));
}

/* 0 and *m, or -1: not a mark of this format. */
static inline int mark_parse(const uint8_t *p, struct argus_spool_mark *m)
{
    if (memcmp(p, "ARGM", 4) != 0 || p[4] != 1 || p[5] != 0 ||
        get32(p + 36) != argus_crc32c(p, 36))
        return -1;
    m->kind = (uint32_t)p[6] | ((uint32_t)p[7] << 8);
    m->level = get32(p + 8);
    m->a = get64(p + 12);
    m->b = get64(p + 20);
    m->c = get64(p + 28);
    return 0;
}

#endif
