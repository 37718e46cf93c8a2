/* grow.c — geometric array growth (grow.h). */
#include "common/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int argus_grow(void *pp, size_t *cap, size_t need, size_t size, size_t first)
{
    void *p, *np;
    size_t ncap;

    if (need <= *cap)
        return 0;
    ncap = *cap > SIZE_MAX / 2 ? need : *cap * 2;
    if (ncap < first)
        ncap = first;
    if (ncap < need)
        ncap = need;
    if (size && ncap > SIZE_MAX / size)
        return -ENOMEM;
    memcpy(&p, pp, sizeof p);
    np = realloc(p, ncap * size);
    if (!np)
        return -ENOMEM;
    memcpy(pp, &np, sizeof np);
    *cap = ncap;
    return 0;
}
