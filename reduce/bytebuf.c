/* bytebuf.c — growable byte buffer (bytebuf.h). */
#include "reduce/bytebuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int argus_bytebuf_reserve(struct argus_bytebuf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *n = realloc(b->p, cap);
    if (!n)
        return -ENOMEM;
    b->p = n;
    b->cap = cap;
    return 0;
}

int argus_bytebuf_append(struct argus_bytebuf *b, const void *d, size_t n)
{
    int rc = argus_bytebuf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}
