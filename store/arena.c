/* arena.c — the job store's memory (store/arena.h). Summaries are carved from an
 * arena of chunks that grow from 64 KiB to 2 MiB (2 MiB chunks aligned and advised for
 * transparent huge pages): rank 0 adds P summaries per step, and one malloc and a few page
 * faults per summary were most of its cost. The block of a replaced or evicted summary
 * goes to a free list of its size (in 64-byte units) and is the first choice for the next
 * summary of that size: at a steady horizon the store writes into memory it already has
 * instead of faulting in (and zeroing) fresh pages every window.
 *
 * Must not know the store (no store/jobstore_int.h here) nor call the other files of
 * store/. One owner; not thread-safe.
 */
#include "store/arena.h"
#include "common/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (2u << 20)

struct jobstore_chunk {
    struct jobstore_chunk *next;
    size_t used, cap; /* bytes of data[] */
    _Alignas(64) unsigned char data[];
};

void jobstore_arena_init(struct jobstore_arena *a, int huge)
{
    *a = (struct jobstore_arena){ .next_chunk = huge ? CHUNK_MAX : CHUNK_MIN };
}

void jobstore_arena_fini(struct jobstore_arena *a)
{
    while (a->chunks) {
        struct jobstore_chunk *n = a->chunks->next;
        free(a->chunks);
        a->chunks = n;
    }
    for (size_t i = 0; a->free_by_size && i < JOBSTORE_N_SIZES; i++)
        free(a->free_by_size[i].v);
    free(a->free_by_size);
    free(a->work);
    *a = (struct jobstore_arena){ 0 };
}

void *jobstore_arena_carve(struct jobstore_arena *a, size_t n)
{
    struct jobstore_chunk *c = a->chunks;

    if (!c || c->cap - c->used < n) {
        size_t sz = a->next_chunk ? a->next_chunk : CHUNK_MIN;
        while (sz - sizeof *c < n)
            sz *= 2;
        void *p = NULL;
        if (sz >= CHUNK_MAX) {
            if (posix_memalign(&p, CHUNK_MAX, sz) != 0)
                p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
            if (p)
                madvise(p, sz, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
        } else {
            p = malloc(sz);
        }
        if (!p)
            return NULL;
        c = p;
        c->next = a->chunks;
        c->used = 0;
        c->cap = sz - sizeof *c;
        a->chunks = c;
        a->next_chunk = sz < CHUNK_MAX ? sz * 2 : sz;
    }
    void *out = c->data + c->used;
    c->used += n;
    return out;
}

void *jobstore_arena_block(struct jobstore_arena *a, size_t n)
{
    struct jobstore_free *fs = a->free_by_size ? &a->free_by_size[n / JOBSTORE_UNIT] : NULL;
    if (fs && fs->n)
        return fs->v[--fs->n];
    return jobstore_arena_carve(a, n);
}

void jobstore_arena_put(struct jobstore_arena *a, void *b, size_t n)
{
    if (!a->free_by_size &&
        !(a->free_by_size = calloc(JOBSTORE_N_SIZES, sizeof *a->free_by_size)))
        return; /* out of memory: the block stays unused until the arena is freed */
    struct jobstore_free *fs = &a->free_by_size[n / JOBSTORE_UNIT];
    if (argus_grow(&fs->v, &fs->cap, fs->n + 1, sizeof *fs->v, 256) != 0)
        return; /* the same */
    fs->v[fs->n++] = b;
}

void *jobstore_arena_work(struct jobstore_arena *a, size_t bytes)
{
    if (bytes <= a->work_cap)
        return a->work;
    size_t cap = (bytes + CHUNK_MAX - 1) & ~(size_t)(CHUNK_MAX - 1);
    void *p = NULL;
    if (cap < bytes || posix_memalign(&p, CHUNK_MAX, cap) != 0)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, cap, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    free(a->work);
    a->work = p;
    a->work_cap = cap;
    return p;
}
