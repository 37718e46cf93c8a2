/* jobstore_int.h — the job store's layout and what its files call of each other.
 * Nobody outside store/ includes it: readers go through store/jobstore.h.
 *
 * The files, each calling only the ones listed before it (tests/store/t_layers.sh checks
 * that the calls point one way):
 *   arena.c     memory: summary blocks from an arena of chunks, reused by size, and the
 *               reader's work memory (store/arena.h; knows nothing of the store);
 *   names.c     the kernel-name dictionary;
 *   ranks.c     what is known of a rank besides its steps: rank info, missing mark, and
 *               the planned steps its rank info gives;
 *   cells.c     the core: per rank its held cells (summary, step id, row) in step order,
 *               the per-step figures of the distinct held steps,
 *               the distinct held steps, lookups; no retention, no wire records;
 *   retain.c    retention on the core: the adds it admits (stale steps dropped), eviction
 *               past the horizon, the pin, what eviction leaves behind;
 *   add_rows.c  the batch add of thin rows, on the core and retention;
 *   ingest.c    wire records decoded and stored through all of the above;
 *   jobstore.c  the store's life: create (each part's init), free (each part's fini),
 *               metadata.
 * A file writes only the fields the layout below gives it, with two exceptions, both for
 * speed at P ranks (they write cells.c's fields as cells.c would): retain.c drops the
 * oldest cell of each rank and the oldest distinct step (head, n, total, st_head, st_n;
 * its figures go with it), add_rows.c appends a thin cell (a rank's arrays at head + n, n,
 * total; the step's figures through jobstore_fig_add). One owner; not
 * thread-safe.
 */
#ifndef ARGUS_STORE_JOBSTORE_INT_H
#define ARGUS_STORE_JOBSTORE_INT_H

#include "store/arena.h"
#include "store/jobstore.h"

/* A rank's held cells: sums, ids and rows [head .. head + n), ascending step (ids[i] ==
 * sums[i]->step: lookups never touch a summary; rows[i] derived from sums[i]). Evicting
 * its oldest step is head++; the live part moves back to the front only when an append
 * finds no room. Zero means empty, so a fresh store of P ranks is untouched calloc
 * memory. */
struct rank_slot {
    /* cells.c (retain.c drops the oldest cell, add_rows.c appends one: see above) */
    struct argus_step_summary **sums;
    uint64_t *ids;                        /* in the same block as sums: sums + cap */
    struct argus_jobstore_row *rows;      /* after ids; 64-byte aligned but in a rank's
                                           * first block (store/arena.h: carved) */
    uint32_t head, n, cap;
    uint32_t pad;
    uint64_t missing_p1;                  /* ranks.c: missing from step missing_p1 - 1; 0:
                                           * present (retain.c reads it) */
    struct argus_rank_info *info;         /* ranks.c: NULL until set */
    struct argus_qsketch *gone;           /* retain.c: walls of its evicted steps; NULL
                                           * until one */
};

struct name_entry {
    uint64_t hash;
    char *name; /* NULL: free slot */
};

struct argus_jobstore {
    /* cells.c */
    uint32_t n_ranks;
    struct rank_slot *ranks;
    size_t total;
    /* distinct step ids held by some rank, st[st_head .. st_head + st_n), ascending */
    uint64_t *st;
    size_t st_head, st_n, st_cap;
    /* per distinct held step its figures (argus_jobstore_step_figs), figs[i] for st[i]
     * (valid in [st_head, st_head + st_n); figs_cap >= st_head + st_n); work_arg ==
     * UINT32_MAX marks one to fold again from its cells (its slowest cell was replaced by
     * a faster one), figs_dirty counts them */
    struct argus_jobstore_stepfig *figs;
    size_t figs_cap, figs_dirty;
    struct argus_step_summary *scratch; /* jobstore_scratch_summary */
    /* arena.c: summary blocks, the reader's work memory */
    struct jobstore_arena arena;
    /* names.c: open addressing on the name hash; capacity a power of two */
    struct name_entry *names;
    size_t names_cap, names_used;
    /* ranks.c: the planned steps of the rank info with the latest planned_at_ns
     * (argus_jobstore_planned_steps); a rank's that differed from another's */
    uint64_t plan_steps, plan_at, plan_other;
    uint32_t plan_rank, plan_other_rank;
    /* ranks.c: the environment's plan (ARGUS_TOTAL_STEPS) of the lowest rank that gave one
     * (plan_env 0: none did) */
    uint64_t plan_env;
    uint32_t plan_env_rank;
    /* retain.c: at most `horizon` distinct steps (SIZE_MAX: everything) */
    size_t max_cells, horizon;
    uint32_t min_steps;
    uint64_t evicted_below;             /* steps below this are gone (0: none evicted) */
    uint64_t pin_from;                  /* argus_jobstore_pin (UINT64_MAX: none) */
    size_t pin_extra;
    uint64_t evicted_first;             /* first evicted step, UINT64_MAX when none */
    uint64_t stale;                     /* summaries dropped: their step was already gone */
    struct argus_jobstore_gone *gone;   /* gone[0 .. n_coarse): merged entries of
                                         * gone_width steps (the last may have fewer);
                                         * gone[n_coarse .. n_gone): single steps */
    size_t n_gone, cap_gone, n_coarse;
    size_t gone_max;                    /* n_gone <= gone_max (0: unbounded) */
    uint64_t gone_width;
    uint64_t gone_wall_sum;             /* the sum of gone[0 .. n_gone).wall_sum_ns */
    /* ingest.c: decode targets, allocated once */
    struct argus_agg_row *rowbuf;       /* a rows record decoded */
    char name_scratch[ARGUS_NAME_MAX + 1];
    /* jobstore.c */
    struct argus_job_meta meta;
};

/* ---- names.c, ranks.c ---------------------------------------------------------------- */

/* Free what they allocated (the dictionary; each rank's info). */
void jobstore_names_fini(struct argus_jobstore *js);
void jobstore_ranks_fini(struct argus_jobstore *js);

/* ---- cells.c ------------------------------------------------------------------------- */

/* js->ranks for n_ranks ranks, all empty (js->n_ranks set). 0 or -ENOMEM. */
int jobstore_cells_init(struct argus_jobstore *js, uint32_t n_ranks);
/* Free the ranks' arrays, js->ranks (after every other part's fini), the distinct steps
 * and the scratch summary. */
void jobstore_cells_fini(struct argus_jobstore *js);
/* The store's one scratch summary (decode target, kmode sort buffer), allocated on first
 * use; NULL when out of memory. Its content lasts until the next store call. */
struct argus_step_summary *jobstore_scratch_summary(struct argus_jobstore *js);
/* Store a copy of s, trimmed, its kmodes in name-hash order: 1 when it is a new cell (the
 * caller enforces retention then), 0 when it replaced the held one of its (rank, step),
 * -ENOMEM (nothing changed). s must be valid for the store (rank < n_ranks, n_kmodes <=
 * ARGUS_MAX_KMODES) and may be the scratch summary. */
int jobstore_cell_put(struct argus_jobstore *js, const struct argus_step_summary *s);
/* Room for one more cell at the end of rs. 0 or -ENOMEM. */
int jobstore_slot_room(struct argus_jobstore *js, struct rank_slot *rs);
/* Add step to the distinct held steps unless it is there (a new one with empty
 * figures); *at: its index in js->st and js->figs. 0 or -ENOMEM (nothing added). */
int jobstore_step_hold(struct argus_jobstore *js, uint64_t step, size_t *at);
/* Fold the row of a new cell of rank into the figures of held step index at (from
 * jobstore_step_hold). */
void jobstore_fig_add(struct argus_jobstore *js, size_t at, uint32_t rank,
                      const struct argus_jobstore_row *w);
/* A summary's row (struct argus_jobstore_row). */
void jobstore_row_of(const struct argus_step_summary *s, struct argus_jobstore_row *w);

/* ---- retain.c ------------------------------------------------------------------------ */

/* The default retention, nothing evicted, no pin (js->n_ranks set). */
void jobstore_retain_init(struct argus_jobstore *js);
/* Free what eviction left behind. */
void jobstore_retain_fini(struct argus_jobstore *js);
/* Evict the oldest steps while the store holds more than its horizon (and the pin lets
 * them go): after every add of a new cell. */
void jobstore_enforce_horizon(struct argus_jobstore *js);

/* ---- ingest.c ------------------------------------------------------------------------ */

/* Free its decode targets. */
void jobstore_ingest_fini(struct argus_jobstore *js);

#endif /* ARGUS_STORE_JOBSTORE_INT_H */
