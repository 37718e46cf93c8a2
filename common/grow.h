/* grow.h — the one way Argus grows an array: geometric doubling with an overflow check.
 *
 *     struct thing *v = NULL; size_t n = 0, cap = 0;
 *     if (argus_grow(&v, &cap, n + 1, sizeof *v, 16) != 0)
 *         return -ENOMEM;
 *     v[n++] = x;
 *
 * Not for per-event hot paths (those allocate nothing). Any thread; the array is the
 * caller's.
 */
#ifndef ARGUS_COMMON_GROW_H
#define ARGUS_COMMON_GROW_H

#include <stddef.h>

/* Make *(T **)pp hold at least `need` elements of `size` bytes: when *cap is smaller,
 * realloc to max(need, 2 * *cap, first) elements and update *cap. `pp` is the address of
 * the array pointer (any object pointer type). 0, or -ENOMEM (count overflow or no
 * memory) with the array and *cap unchanged. */
int argus_grow(void *pp, size_t *cap, size_t need, size_t size, size_t first);

#endif /* ARGUS_COMMON_GROW_H */
