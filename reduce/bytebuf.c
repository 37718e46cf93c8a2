/* bytebuf.c — growable byte buffer (bytebuf.h). */
#include "reduce/bytebuf.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/grow.h"

int argus_bytebuf_reserve(struct argus_bytebuf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -ENOMEM;
    return argus_grow(&b->p, &b->cap, b->len + extra, 1, 4096);
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
