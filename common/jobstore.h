/* jobstore.h — everything known about one job's steps, in memory: per-rank step summaries,
 * the kernel-name dictionary, per-rank info and job metadata. Filled by rank 0 from the
 * reduction (online) or by argus-analyze from spool files / imports (offline), read by
 * analysis/ and the report writers. The same store for both paths: the analysis has no
 * second input format.
 *
 * Memory: each summary is stored trimmed to its used kmodes. Not thread-safe: one owner.
 */
#ifndef ARGUS_COMMON_JOBSTORE_H
#define ARGUS_COMMON_JOBSTORE_H

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

int argus_jobstore_create(uint32_t n_ranks, struct argus_jobstore **out);
void argus_jobstore_free(struct argus_jobstore *js);

uint32_t argus_jobstore_nranks(const struct argus_jobstore *js);
struct argus_job_meta *argus_jobstore_meta(struct argus_jobstore *js);
const struct argus_job_meta *argus_jobstore_meta_c(const struct argus_jobstore *js);

/* Copy s (trimmed) into the store. A second summary for the same (rank, step) replaces
 * the first. -EINVAL when s->rank >= n_ranks, -ENOMEM. */
int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s);
int argus_jobstore_add_name(struct argus_jobstore *js, uint64_t hash, const char *name);
int argus_jobstore_set_rankinfo(struct argus_jobstore *js, const struct argus_rank_info *ri);

/* Decode one wire record (any type) and add it. errbuf on failure. */
int argus_jobstore_ingest(struct argus_jobstore *js, int type, const uint8_t *rec,
                          size_t len, char *errbuf, size_t errlen);
/* Walk a buffer of concatenated records, ingesting each; returns 0, or the first error
 * (records before it are kept). base_offset is used in messages. */
int argus_jobstore_ingest_buffer(struct argus_jobstore *js, const uint8_t *buf, size_t len,
                                 uint64_t base_offset, char *errbuf, size_t errlen);

/* Lookups. NULL when unknown / missing. */
const char *argus_jobstore_name(const struct argus_jobstore *js, uint64_t hash);
const struct argus_step_summary *argus_jobstore_get(const struct argus_jobstore *js,
                                                    uint32_t rank, uint64_t step);
const struct argus_rank_info *argus_jobstore_rankinfo(const struct argus_jobstore *js,
                                                      uint32_t rank);
/* Steps held for a rank, in ascending step order: *out points into the store. */
size_t argus_jobstore_rank_steps(const struct argus_jobstore *js, uint32_t rank,
                                 const struct argus_step_summary *const **out);
/* First and last step id over all ranks; -ENOENT when empty. */
int argus_jobstore_step_range(const struct argus_jobstore *js, uint64_t *first,
                              uint64_t *last);
/* Total summaries held. */
size_t argus_jobstore_count(const struct argus_jobstore *js);

/* Mark a rank as missing from step `from_step` on (it died or stopped sending). */
void argus_jobstore_mark_missing(struct argus_jobstore *js, uint32_t rank,
                                 uint64_t from_step);
/* Take the mark back (the rank turned out to have delivered everything). */
void argus_jobstore_clear_missing(struct argus_jobstore *js, uint32_t rank);
/* UINT64_MAX when the rank is not missing. */
uint64_t argus_jobstore_missing_since(const struct argus_jobstore *js, uint32_t rank);

#endif /* ARGUS_COMMON_JOBSTORE_H */
