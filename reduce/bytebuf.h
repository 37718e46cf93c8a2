/* bytebuf.h — a growable byte buffer for the Argus thread's messages (agent.c). Grows with
 * argus_grow (common/grow.h) from 4 KiB; never shrinks until freed. Not thread-safe. */
#ifndef ARGUS_REDUCE_BYTEBUF_H
#define ARGUS_REDUCE_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>

struct argus_bytebuf {
    uint8_t *p;
    size_t len, cap;
};

/* Room for extra more bytes past len. 0 or -ENOMEM (then unchanged). */
int argus_bytebuf_reserve(struct argus_bytebuf *b, size_t extra);
/* Append n bytes. 0 or -ENOMEM (then unchanged). */
int argus_bytebuf_append(struct argus_bytebuf *b, const void *d, size_t n);

#endif /* ARGUS_REDUCE_BYTEBUF_H */
