/* hash.h — the 64-bit mixer (the splitmix64 finaliser) that every hash table and every
 * hash-chosen set in Argus uses, so that a rank chosen on one node is chosen on all. */
#ifndef ARGUS_COMMON_HASH_H
#define ARGUS_COMMON_HASH_H

#include <stdint.h>

static inline uint64_t argus_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif /* ARGUS_COMMON_HASH_H */
