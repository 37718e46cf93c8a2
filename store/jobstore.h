/* jobstore.h — everything known about one job's steps, in memory: per-rank step summaries,
 * the kernel-name dictionary, per-rank info and job metadata. Filled by rank 0 from the
 * reduction (online) or by argus-analyze from spool files / imports (offline), read by
 * analysis/ and the report writers. The same store for both paths: the analysis has no
 * second input format.
 *
 * Stored summaries have their kmodes in name-hash order (the modes of one name keep their
 * order), so that a kernel is found by binary search.
 *
 * Memory: each summary is stored trimmed to its used kmodes, in arena chunks; the space of
 * a replaced or evicted summary is reused by the next summary of the same size, so a store
 * that keeps a bounded horizon stops taking fresh pages once the horizon is full.
 *
 * Retention (bounded memory for long jobs): the store holds the most recent `horizon`
 * distinct step ids, horizon = max(min_steps, max_cells / n_ranks) (every step when
 * max_cells is 0). A summary of a newer step that takes the count past the horizon evicts
 * the oldest step of every rank. The defaults (ARGUS_JOBSTORE_MAX_CELLS = 2^18 summaries,
 * ARGUS_JOBSTORE_MIN_STEPS = 16) keep 16,384 steps at 16 ranks, 256 at 1,024, 64 at
 * 4,096 and 16 from 16,384 ranks on: rank 0 analyses the held steps after every window,
 * so this bounds its memory (~85 MB of kernel-less summaries) and its CPU per window
 * whatever the job's length and size. What eviction keeps:
 *   - the job-wide step range (argus_jobstore_step_range covers evicted steps too);
 *   - per evicted step its id and the longest step wall of the ranks that held it and
 *     were not missing then (argus_jobstore_evicted): the job step-time series, so that
 *     the step count and range of a report stay exact; bounded: at most
 *     ARGUS_JOBSTORE_GONE_MAX entries, the newest 2,048 or more of them single steps and
 *     the older ones, once the list was full, merged into entries of a uniform number of
 *     consecutive steps (their range, longest wall, wall sum, sum of squares and
 *     count), so that the
 *     median, p99 and variability of a report are exact until then and read the older
 *     steps at that coarser resolution after;
 *   - per rank a quantile sketch of its evicted step walls (argus_jobstore_rank_gone):
 *     its median step time stays within ARGUS_QSKETCH_ALPHA (2 %) of the exact one;
 *   - the running sum of the evicted steps' walls (argus_jobstore_evicted_wall_sum).
 * Per held step the store also keeps a few figures over its ranks (the slowest wall, the
 * slowest and summed own work, who is slowest: argus_jobstore_step_figs), updated as
 * cells come in, 32 bytes a held step.
 * Everything else (summaries, kernel statistics, steps.csv rows, the analysis' view and so
 * the anomalies of a report) covers the held steps only: anomalies found in earlier
 * windows stay in anomalies.jsonl, which rank 0 appends after every window, and the spool
 * (summaries.argus) keeps every summary for argus-analyze, which keeps everything
 * (argus_jobstore_set_retention(js, 0, 0)). A summary that arrives
 * for a step already evicted is dropped and counted (argus_jobstore_stale).
 *
 * Not thread-safe: one owner.
 */
#ifndef ARGUS_STORE_JOBSTORE_H
#define ARGUS_STORE_JOBSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"

enum argus_source { ARGUS_SRC_REPLAY = 0, ARGUS_SRC_CUPTI = 1, ARGUS_SRC_KINETO = 2 };

struct argus_job_meta {
    char id[256];
    char step[64];        /* Slurm step id or "0" */
    int source;           /* enum argus_source */
    uint64_t started_ns;  /* CLOCK_REALTIME */
    uint64_t ended_ns;
    int complete;         /* 1 when every rank delivered every window */
};

struct argus_jobstore;
struct argus_agg_row; /* common/aggregate.h */

/* Retention defaults (see above). */
#define ARGUS_JOBSTORE_MAX_CELLS ((size_t)1 << 18)
#define ARGUS_JOBSTORE_MIN_STEPS 16u

/* Steps that left the store: one step, or (n > 1) n consecutive evicted steps merged
 * when the list was full. A step's wall is the longest step wall (end - start, ns) among
 * the ranks that held it and were not marked missing at it. */
struct argus_jobstore_gone {
    uint64_t step;        /* the first step */
    uint64_t wall_ns;     /* the longest wall of its steps */
    uint64_t last;        /* the last step (== step when n is 1) */
    uint64_t wall_sum_ns; /* the sum of its steps' walls (== wall_ns when n is 1) */
    uint64_t n;           /* the evicted steps it stands for, >= 1 */
    double wall_sq_ms2;   /* the sum of its steps' walls squared, in ms^2 */
};
/* The most entries of the evicted-step list (store/retain.c: how it is reduced when
 * full): its memory is bounded whatever the job's length. */
#define ARGUS_JOBSTORE_GONE_MAX ((size_t)4096)

/* The numbers of one held summary that a reader needs for every (rank, step) — the
 * analysis' hot loops — kept next to it (one cache line) so that they can be streamed
 * without touching the summaries. Each is derived from the summary exactly as named. */
struct argus_jobstore_row {
    double wall_ns;       /* end_ns - start_ns, 0 when end_ns <= start_ns */
    double compute_ns;    /* compute_ns */
    double host_ns;       /* host_gap_ns, else phase_wall_ns[ARGUS_PH_HOST] */
    double start_ns;      /* start_ns + clock_offset_ns (rank 0's clock) */
    double comm_ns;       /* collective_ns + p2p_ns */
    uint64_t kernel_count;
    uint64_t dropped;
    uint32_t n_kmodes;
    uint16_t coords_known; /* 1 when tp_size, pp_size and dp_size are all set */
    uint16_t thin;         /* 1 when flags has ARGUS_SF_THIN (row values only) */
};

/* A store for n_ranks ranks with the default retention. */
int argus_jobstore_create(uint32_t n_ranks, struct argus_jobstore **out);
void argus_jobstore_free(struct argus_jobstore *js);
/* Keep at most max(min_steps, max_cells / n_ranks) distinct steps (max_cells 0: all of
 * them, as argus-analyze does); evicts at once what is past the new horizon. 0 or
 * -EINVAL. */
int argus_jobstore_set_retention(struct argus_jobstore *js, size_t max_cells,
                                 uint32_t min_steps);
/* Pin the steps from from_step on (those not analysed yet): eviction passes them by while
 * the store holds at most extra_steps more than its horizon, so that a reader that falls
 * behind still sees every step once; evicts at once what the new pin lets go. UINT64_MAX:
 * no pin (the default). 0 or -EINVAL. */
int argus_jobstore_pin(struct argus_jobstore *js, uint64_t from_step, size_t extra_steps);
/* The horizon in steps; SIZE_MAX when unbounded. */
size_t argus_jobstore_horizon(const struct argus_jobstore *js);

uint32_t argus_jobstore_nranks(const struct argus_jobstore *js);
struct argus_job_meta *argus_jobstore_meta(struct argus_jobstore *js);
const struct argus_job_meta *argus_jobstore_meta_c(const struct argus_jobstore *js);

/* Copy s (trimmed) into the store. A second summary for the same (rank, step) replaces
 * the first; one for a step already evicted is dropped (0, counted as stale). -EINVAL
 * when s->rank >= n_ranks, -ENOMEM. */
int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s);
/* Add the thin summary (argus_aggrow_thin) of each of rows[0..n), in order: the store
 * ends exactly as after argus_jobstore_add_summary of each, only with fewer waits on
 * memory (rank 0's rows records, wire_rows.h: ~P rows a step). 0, or the first row's
 * error (-EINVAL: rank >= n_ranks; -ENOMEM) with the rows before it added. */
int argus_jobstore_add_rows(struct argus_jobstore *js, const struct argus_agg_row *rows,
                            size_t n);
int argus_jobstore_add_name(struct argus_jobstore *js, uint64_t hash, const char *name);
int argus_jobstore_set_rankinfo(struct argus_jobstore *js, const struct argus_rank_info *ri);

/* Decode one wire record (any type) and add it. errbuf on failure. */
int argus_jobstore_ingest(struct argus_jobstore *js, int type, const uint8_t *rec,
                          size_t len, char *errbuf, size_t errlen);
/* Walk a buffer of concatenated records, ingesting each; returns 0, or the first error
 * (records before it are kept). base_offset is used in messages. */
int argus_jobstore_ingest_buffer(struct argus_jobstore *js, const uint8_t *buf, size_t len,
                                 uint64_t base_offset, char *errbuf, size_t errlen);
/* The same, leaving out the records of type skip_type (rank 0 stores a condensed window's
 * rows from the rows it holds decoded: reduce/rank0.c). */
int argus_jobstore_ingest_buffer_but(struct argus_jobstore *js, const uint8_t *buf,
                                     size_t len, int skip_type, uint64_t base_offset,
                                     char *errbuf, size_t errlen);

/* Lookups. NULL when unknown / missing. */
const char *argus_jobstore_name(const struct argus_jobstore *js, uint64_t hash);
const struct argus_step_summary *argus_jobstore_get(const struct argus_jobstore *js,
                                                    uint32_t rank, uint64_t step);
const struct argus_rank_info *argus_jobstore_rankinfo(const struct argus_jobstore *js,
                                                      uint32_t rank);
/* Steps held for a rank, in ascending step order: *out points into the store (valid until
 * the next add or retention change). */
size_t argus_jobstore_rank_steps(const struct argus_jobstore *js, uint32_t rank,
                                 const struct argus_step_summary *const **out);
/* The same steps' ids ((*ids)[i] == (*out)[i]->step of rank_steps), without touching the
 * summaries. */
size_t argus_jobstore_rank_step_ids(const struct argus_jobstore *js, uint32_t rank,
                                    const uint64_t **ids);
/* The same steps' rows (see struct argus_jobstore_row), in the same order. */
size_t argus_jobstore_rank_rows(const struct argus_jobstore *js, uint32_t rank,
                                const struct argus_jobstore_row **rows);
/* The distinct step ids held by some rank (missing marks aside), ascending: *ids points
 * into the store (valid until the next add or retention change). */
size_t argus_jobstore_steps(const struct argus_jobstore *js, const uint64_t **ids);
/* First and last step id over all ranks, evicted steps included; -ENOENT when nothing was
 * ever held. */
int argus_jobstore_step_range(const struct argus_jobstore *js, uint64_t *first,
                              uint64_t *last);
/* Total summaries held. */
size_t argus_jobstore_count(const struct argus_jobstore *js);
/* Steps evicted so far, oldest first, as entries (*out points into the store, valid until
 * the next add or retention change; 0 when none): at most ARGUS_JOBSTORE_GONE_MAX; the
 * entries of one step (n == 1) are the newest ones, at least the newest 2,048 evicted
 * steps; before them, once the list was full, entries of several consecutive steps, each
 * but the newest of them standing for the same number of steps. */
size_t argus_jobstore_evicted(const struct argus_jobstore *js,
                              const struct argus_jobstore_gone **out);
/* The bound of that list in entries: ARGUS_JOBSTORE_GONE_MAX by default; 0 unbounded (one
 * entry per evicted step; memory grows with the job: the reference of tests and benches).
 * -EINVAL when entries is not 0 and at most 3,072, or below the entries held now. */
int argus_jobstore_set_evicted_max(struct argus_jobstore *js, size_t entries);
/* The memory the list holds, in bytes (its capacity). */
size_t argus_jobstore_evicted_bytes(const struct argus_jobstore *js);
/* Quantile sketch of the step walls (ns) of a rank's evicted steps before its missing
 * mark; NULL when none. */
const struct argus_qsketch *argus_jobstore_rank_gone(const struct argus_jobstore *js,
                                                     uint32_t rank);
/* The sum of the walls of the steps evicted so far (argus_jobstore_evicted's wall_ns),
 * kept as they are evicted: O(1). */
uint64_t argus_jobstore_evicted_wall_sum(const struct argus_jobstore *js);

/* What the store keeps per held step, folded in as the step's cells are added or
 * replaced, so that a reader of the job's step series (the forecast, every window) needs
 * no pass over the P cells of a step. Over every rank that holds the step (marked missing
 * or not), from its row (struct argus_jobstore_row): */
struct argus_jobstore_stepfig {
    double wall_max_ns;   /* the longest wall_ns */
    double work_max_ns;   /* the largest own work: wall_ns - comm_ns when 0 < comm_ns <
                           * wall_ns, else wall_ns */
    double work_sum_ns;   /* the sum of their own work (exact while below 2^53 ns) */
    uint32_t work_arg;    /* the lowest rank with work_max_ns */
    uint32_t n;           /* the ranks that hold the step */
};
/* The held steps' figures, (*figs)[i] for step ids[i] of argus_jobstore_steps: *figs
 * points into the store (valid until the next add or retention change). O(held steps);
 * a step whose slowest cell was replaced by a faster one is folded again from its cells
 * on this call (O(P log held) once per such step). Through a const store, like the
 * scratch below: one reader at a time. */
size_t argus_jobstore_step_figs(const struct argus_jobstore *js,
                                const struct argus_jobstore_stepfig **figs);
/* Summaries dropped because their step had been evicted. */
uint64_t argus_jobstore_stale(const struct argus_jobstore *js);

/* Work memory for the store's reader: at least `bytes`, 64-byte aligned, owned by the
 * store and kept until it is freed (or a larger request replaces it), content undefined;
 * NULL when out of memory. The analysis keeps its rank x step tables there between runs,
 * so that rank 0, which analyses after every window, writes into pages it already has
 * instead of faulting fresh ones in each time. Lent through a const store (it is no part
 * of the store's content); one reader at a time, like the store itself. */
void *argus_jobstore_scratch(const struct argus_jobstore *js, size_t bytes);

/* Where the job's planned steps (argus_jobstore_planned_steps) come from. */
enum argus_plan_from {
    ARGUS_PLAN_NONE = 0,    /* no rank info gave a plan */
    ARGUS_PLAN_PROGRAM = 1, /* argus_set_total_steps on some rank (planned_steps) */
    ARGUS_PLAN_ENV = 2,     /* ARGUS_TOTAL_STEPS as a rank read it (env_planned_steps) */
};

/* The job's planned steps as its ranks' rank info gives them. The program's
 * (argus_set_total_steps on any rank: struct argus_rank_info planned_steps) win: the value
 * of the record with the latest planned_at_ns among those that have one (a tie: the one
 * added last). When none has one (or the latest was 0: taken back), the environment's
 * (ARGUS_TOTAL_STEPS: env_planned_steps) of the lowest rank that gave one. Either way
 * whatever the order the records come in; 0 when neither. *rank: whose it is. *other (the
 * program's only): a value of another rank that differed from it when they came in, and
 * *other_rank that rank (*other 0: none differed). NULLs allowed. O(1). */
uint64_t argus_jobstore_planned_steps(const struct argus_jobstore *js, uint32_t *rank,
                                      uint64_t *other, uint32_t *other_rank);
/* Which of the two argus_jobstore_planned_steps gives; ARGUS_PLAN_NONE for NULL. O(1). */
enum argus_plan_from argus_jobstore_plan_from(const struct argus_jobstore *js);

/* Mark a rank as missing from step `from_step` on (it died or stopped sending). */
void argus_jobstore_mark_missing(struct argus_jobstore *js, uint32_t rank,
                                 uint64_t from_step);
/* Take the mark back (the rank turned out to have delivered everything). */
void argus_jobstore_clear_missing(struct argus_jobstore *js, uint32_t rank);
/* UINT64_MAX when the rank is not missing. */
uint64_t argus_jobstore_missing_since(const struct argus_jobstore *js, uint32_t rank);

#endif /* ARGUS_STORE_JOBSTORE_H */
