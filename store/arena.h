/* arena.h — the job store's memory (store/arena.c): blocks of a multiple of 64 bytes
 * carved from an arena of chunks, the blocks given back reused by size, and the work
 * memory lent to the store's reader. The bottom of the store's files (store/jobstore_int.h
 * lists them): it knows nothing of the store, nor of summaries beyond the size of the
 * largest one; it must not call into the other files of store/.
 *
 * Ownership: the arena owns every chunk, the free lists and the work memory; a block
 * taken from it is the caller's until it is given back, and all of them go at
 * jobstore_arena_fini. Not thread-safe: one owner (the store).
 */
#ifndef ARGUS_STORE_ARENA_H
#define ARGUS_STORE_ARENA_H

#include <stddef.h>

#include "common/types.h"

/* Blocks are multiples of this; the arena hands out blocks of up to a full summary. */
#define JOBSTORE_UNIT 64
/* The block a trimmed summary of n kmodes takes (a constant expression). */
#define JOBSTORE_BLOCK_SIZE(n_kmodes)                                                      \
    ((offsetof(struct argus_step_summary, kmodes) +                                        \
      (size_t)(n_kmodes) * sizeof(struct argus_kmode_stats) + JOBSTORE_UNIT - 1) &          \
     ~(size_t)(JOBSTORE_UNIT - 1))
/* Free lists, one per block size in units (index size / JOBSTORE_UNIT). */
#define JOBSTORE_N_SIZES                                                                   \
    ((offsetof(struct argus_step_summary, kmodes) +                                        \
      ARGUS_MAX_KMODES * sizeof(struct argus_kmode_stats)) / JOBSTORE_UNIT + 2)

struct jobstore_chunk; /* store/arena.c */

/* Given-back blocks of one size: a stack of pointers (a block is not touched until it is
 * reused). */
struct jobstore_free {
    void **v;
    size_t n, cap;
};

/* All zero: an empty arena whose first chunk is the smallest. */
struct jobstore_arena {
    struct jobstore_chunk *chunks;      /* newest first */
    size_t next_chunk;                  /* size of the next chunk; 0: the smallest */
    struct jobstore_free *free_by_size; /* JOBSTORE_N_SIZES stacks; NULL until one */
    void *work;                         /* jobstore_arena_work */
    size_t work_cap;
};

/* Start the arena's chunks at their largest size (2 MiB, transparent huge pages) when
 * huge, else at the smallest (64 KiB, doubling on each new chunk). */
void jobstore_arena_init(struct jobstore_arena *a, int huge);
/* Free every chunk, the free lists and the work memory; a is empty (all zero) after. */
void jobstore_arena_fini(struct jobstore_arena *a);
/* n fresh bytes (a multiple of JOBSTORE_UNIT): aligned as malloc's in the small chunks,
 * to 64 bytes in the 2 MiB ones; NULL when out of memory. Never given back (for memory
 * that lives as long as the arena). */
void *jobstore_arena_carve(struct jobstore_arena *a, size_t n);
/* A block of n bytes (a multiple of JOBSTORE_UNIT, at most a full summary's): the block
 * of that size given back last, else a fresh one; NULL when out of memory. */
void *jobstore_arena_block(struct jobstore_arena *a, size_t n);
/* Give block b of n bytes back for reuse. Out of memory for the free list: b stays
 * unused until jobstore_arena_fini. */
void jobstore_arena_put(struct jobstore_arena *a, void *b, size_t n);
/* The block that the (ahead + 1)-th next jobstore_arena_block(a, n) would reuse if no
 * block were given back in between; NULL when none. For prefetching: a guess only. */
static inline const void *jobstore_arena_reuse_ahead(const struct jobstore_arena *a,
                                                     size_t n, size_t ahead)
{
    const struct jobstore_free *fs = a->free_by_size ? &a->free_by_size[n / JOBSTORE_UNIT]
                                                     : NULL;
    return fs && fs->n > ahead ? fs->v[fs->n - 1 - ahead] : NULL;
}
/* At least `bytes` of work memory, 2 MiB aligned, content undefined, kept until a larger
 * request replaces it or jobstore_arena_fini; NULL when out of memory (the old memory is
 * kept then). */
void *jobstore_arena_work(struct jobstore_arena *a, size_t bytes);

#endif /* ARGUS_STORE_ARENA_H */
