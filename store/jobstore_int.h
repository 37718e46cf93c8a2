/* store/jobstore_int.h — the job store's layout, shared by its files (store/jobstore.c: summaries,
 * retention settings; store/retain.c: eviction and the pin; store/ingest.c: kernel
 * names, rank info, missing marks, ingest of wire records; store/rows.c: rows, the
 * batch add of thin cells). Nobody else includes it: readers go through store/jobstore.h.
 */
#ifndef ARGUS_STORE_JOBSTORE_INT_H
#define ARGUS_STORE_JOBSTORE_INT_H

#include "store/jobstore.h"

struct chunk {
    struct chunk *next;
    size_t used, cap; /* bytes of data[] */
    _Alignas(64) unsigned char data[];
};

/* A rank's held steps: sums, ids and rows [head .. head + n), ascending step (ids[i] ==
 * sums[i]->step: lookups never touch a summary; rows[i] derived from sums[i]). Evicting
 * its oldest step is head++; the live part moves back to the front only when an append
 * finds no room. Zero means empty, so a fresh store of P ranks is untouched calloc
 * memory. */
struct rank_slot {
    struct argus_step_summary **sums;
    uint64_t *ids;                        /* in the same block as sums: sums + cap */
    struct argus_jobstore_row *rows;      /* after ids, 64-byte aligned */
    uint32_t head, n, cap;
    uint32_t pad;
    uint64_t missing_p1;                  /* missing from step missing_p1 - 1; 0: present */
    struct argus_rank_info *info;         /* NULL until set */
    struct argus_qsketch *gone;           /* walls of its evicted steps; NULL until one */
};

/* Freed summary blocks of one size. */
struct free_stack {
    void **v;
    size_t n, cap;
};

struct name_entry {
    uint64_t hash;
    char *name; /* NULL: free slot */
};

struct argus_jobstore {
    uint32_t n_ranks;
    struct rank_slot *ranks;
    size_t total;
    struct argus_job_meta meta;
    struct name_entry *names; /* capacity is a power of two */
    size_t names_cap, names_used;
    struct argus_step_summary *scratch; /* decode target for ingest, allocated once */
    struct argus_agg_row *rowbuf;       /* a rows record decoded (ingest), allocated once */
    /* summary memory: arena chunks (newest first) and free blocks by size (64-byte units) */
    struct chunk *arena;
    size_t next_chunk;                  /* size of the next chunk */
    struct free_stack *free_by_size;    /* by size in 64-byte units; NULL until one */
    /* distinct step ids held by some rank, st[st_head .. st_head + st_n), ascending */
    uint64_t *st;
    size_t st_head, st_n, st_cap;
    /* retention: at most `horizon` distinct steps (SIZE_MAX: everything) */
    size_t max_cells, horizon;
    uint32_t min_steps;
    /* what eviction leaves behind */
    uint64_t evicted_below;             /* steps below this are gone (0: none evicted) */
    uint64_t pin_from;                  /* argus_jobstore_pin (UINT64_MAX: none) */
    size_t pin_extra;
    uint64_t evicted_first;             /* first evicted step, UINT64_MAX when none */
    uint64_t stale;                     /* summaries dropped: their step was already gone */
    struct argus_jobstore_gone *gone;
    size_t n_gone, cap_gone;
    void *work;                         /* argus_jobstore_scratch */
    size_t work_cap;
    char name_scratch[ARGUS_NAME_MAX + 1];
};

/* store/jobstore.c, for the batch add of rows (store/rows.c), each as add_summary uses it:
 * summary blocks of n bytes (a multiple of 64), the distinct held steps, room at the end
 * of a rank's arrays, retention after an add. store/rows.c: a summary's row. */
void *jobstore_block_alloc(struct argus_jobstore *js, size_t n);
void jobstore_block_put(struct argus_jobstore *js, void *b, size_t n);
int jobstore_step_hold(struct argus_jobstore *js, uint64_t step);
int jobstore_slot_room(struct argus_jobstore *js, struct rank_slot *rs);
void jobstore_row_of(const struct argus_step_summary *s, struct argus_jobstore_row *w);
void jobstore_enforce_horizon(struct argus_jobstore *js); /* store/retain.c */
size_t jobstore_summary_size_n(uint32_t n_kmodes);

/* store/ingest.c */
void argus_jobstore_dict_free(struct argus_jobstore *js);

#endif /* ARGUS_STORE_JOBSTORE_INT_H */
