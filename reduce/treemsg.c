/* treemsg.c — the reduction tree's message (treemsg.h). */
#include "reduce/treemsg.h"

#include <errno.h>
#include <string.h>

#include "common/wire.h"

#define MSG_MAGIC 0x4e575241u /* "ARWN" */
#define MSG_VERSION 2

struct hdr {
    uint32_t magic;
    uint16_t version, flags;
    uint64_t window;
    uint32_t nmissing;
    uint32_t agg_len;
    uint32_t crc; /* CRC32C of this header (crc = 0) and the miss entries */
    uint32_t pad;
};

static uint32_t hdr_crc(struct hdr h, const void *miss, size_t mlen)
{
    uint8_t tmp[sizeof h];
    h.crc = 0;
    memcpy(tmp, &h, sizeof h);
    return argus_crc32c(tmp, sizeof h) ^ argus_crc32c(miss, mlen);
}

int argus_treemsg_build(struct argus_bytebuf *out, const struct argus_treemsg *m)
{
    const size_t mlen = (size_t)m->nmissing * sizeof(struct argus_treemsg_miss);
    struct hdr h = {.magic = MSG_MAGIC, .version = MSG_VERSION, .flags = m->flags,
                    .window = m->window, .nmissing = m->nmissing,
                    .agg_len = (uint32_t)m->agg_len};
    int rc = sizeof h + mlen + m->agg_len + m->recs_len > (size_t)INT32_MAX ? -E2BIG : 0;
    out->len = 0;
    if (!rc) {
        h.crc = hdr_crc(h, m->miss, mlen);
        if (argus_bytebuf_append(out, &h, sizeof h) ||
            argus_bytebuf_append(out, m->miss, mlen) ||
            argus_bytebuf_append(out, m->agg, m->agg_len) ||
            argus_bytebuf_append(out, m->recs, m->recs_len))
            rc = -ENOMEM;
    }
    if (rc) {
        out->len = 0;
        h.nmissing = h.agg_len = 0;
        h.crc = hdr_crc(h, NULL, 0);
        argus_bytebuf_append(out, &h, sizeof h);
    }
    return rc;
}

int argus_treemsg_parse(const uint8_t *p, size_t n, struct argus_treemsg *m)
{
    struct hdr h;
    if (n < sizeof h)
        return -EBADMSG;
    memcpy(&h, p, sizeof h);
    const size_t mlen = (size_t)h.nmissing * sizeof(struct argus_treemsg_miss);
    if (h.magic != MSG_MAGIC || h.version != MSG_VERSION ||
        n - sizeof h < mlen || n - sizeof h - mlen < h.agg_len ||
        h.crc != hdr_crc(h, p + sizeof h, mlen))
        return -EBADMSG;
    m->flags = h.flags;
    m->window = h.window;
    m->miss = (const struct argus_treemsg_miss *)(const void *)(p + sizeof h);
    m->nmissing = h.nmissing;
    m->agg = p + sizeof h + mlen;
    m->agg_len = h.agg_len;
    m->recs = m->agg + h.agg_len;
    m->recs_len = n - sizeof h - mlen - h.agg_len;
    return 0;
}

struct argus_treemsg_miss argus_treemsg_miss_at(const struct argus_treemsg *m, uint32_t i)
{
    struct argus_treemsg_miss x;
    memcpy(&x, (const uint8_t *)m->miss + (size_t)i * sizeof x, sizeof x);
    return x;
}
