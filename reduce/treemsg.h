/* treemsg.h — the message one rank of the reduction tree sends its parent per batch of
 * windows (agent.c): a header (magic "ARWN", version, flags, highest window covered,
 * counts, CRC32C over the header and the missing-rank marks), the marks of subtrees that
 * missed their deadline, the batch's window aggregate when the tree condenses
 * (reduce/condense.h; it has its own checksum), then wire records (common/wire.h; each
 * has its own checksum); or, flagged ALIVE, only a sign of life with marks. Ranks of one
 * job run one build: no other version is read.
 */
#ifndef ARGUS_REDUCE_TREEMSG_H
#define ARGUS_REDUCE_TREEMSG_H

#include <stddef.h>
#include <stdint.h>

#include "reduce/bytebuf.h"

#define ARGUS_TREEMSG_FINAL 1u /* the sender's last message */
/* A sign of life (docs/ALGORITHMS.md, "Missing data"): no records, no aggregate, only the
 * marks gathered so far; its window field means nothing (the parent's count of windows
 * delivered stays). A rank sends one when nothing else went to its parent for
 * argus_treemsg_alive_ns, until its final message: so a rank whose own application is
 * stuck (waiting, say, on a rank that died) still says it lives and passes its marks up. */
#define ARGUS_TREEMSG_ALIVE 2u

/* Silence (docs/ALGORITHMS.md, "Missing data"): the period of signs of life, an eighth of
 * ARGUS_SILENCE_MS (at least 1 ms), and how long a parent hears nothing at all from a
 * child before it marks the child's subtree missing from the first window not delivered:
 * ARGUS_SILENCE_MS, 8 signs of life missed. Apart from ARGUS_DEADLINE_MS (a window's
 * wait) because a launcher may end the whole job a second after a rank died. This is what names a rank killed outright
 * (kill -9) while the others wait on it and no window is due. Pure. */
static inline uint64_t argus_treemsg_alive_ns(long silence_ms)
{
    const uint64_t ns = (uint64_t)(silence_ms > 0 ? silence_ms : 1) * 125000ull;
    return ns > 1000000ull ? ns : 1000000ull;
}
static inline uint64_t argus_treemsg_silent_ns(long silence_ms)
{
    return 8 * argus_treemsg_alive_ns(silence_ms);
}

struct argus_treemsg_miss {
    uint32_t rank;   /* the root of the missing subtree */
    uint32_t pad;
    uint64_t window; /* first window it did not deliver */
};

struct argus_treemsg {
    uint16_t flags;
    uint64_t window;                       /* highest own window id covered */
    const struct argus_treemsg_miss *miss; /* parse: unaligned, read with memcpy */
    uint32_t nmissing;
    const uint8_t *agg;
    size_t agg_len;
    const uint8_t *recs;
    size_t recs_len;
};

/* Write m into out (replacing its contents). 0, or -ENOMEM / -E2BIG (the message would
 * pass INT32_MAX bytes): then out holds the same message without marks, aggregate and
 * records, so that the parent still learns the window and the final flag. */
int argus_treemsg_build(struct argus_bytebuf *out, const struct argus_treemsg *m);
/* Parse p[0..n) (pointers into p). 0 or -EBADMSG (bad magic, version, length or CRC). */
int argus_treemsg_parse(const uint8_t *p, size_t n, struct argus_treemsg *m);
/* The i-th missing-rank mark of a parsed message. */
struct argus_treemsg_miss argus_treemsg_miss_at(const struct argus_treemsg *m, uint32_t i);

#endif /* ARGUS_REDUCE_TREEMSG_H */
