/* aggregate.h — the window aggregate (DESIGN.md contract 4): what one subtree of the
 * reduction tree knows about one window, in a form whose size does not grow with the
 * rank count except for one fixed-size row per rank and step:
 *   - rows: per (rank, step) a handful of numbers (step wall, phase times, host gap,
 *     compute, collective wait), 56 bytes each, sorted by (step, rank);
 *   - kmodes: per (kernel, mode, group) merged statistics: count, sum, min, max and a
 *     mergeable log-bucket sketch (qsketch.h), plus the top-k slowest and top-k fastest
 *     (rank, step) by mean duration; sorted by (name_hash, mode, group). group is the
 *     rank's pipeline stage, so peers (same work) share an entry.
 * Merging is a sorted union of rows, bucket-count addition of sketches, min/max/sum of
 * the statistics and top-k of the union under a total order (value, rank, step): it is
 * associative and commutative, so every tree shape and merge order gives byte-identical
 * encodings (as long as no sketch collapsed; see qsketch.h).
 *
 * Encoding: u32 magic "AGGR", u16 version, u16 flags, u32 nrows, u32 nkmodes, rows,
 * kmodes (sketches sparse), u32 CRC32C. Decoding checks every length. Not thread-safe;
 * the struct owns its arrays (argus_agg_free).
 */
#ifndef ARGUS_COMMON_AGGREGATE_H
#define ARGUS_COMMON_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define ARGUS_AGG_MAGIC 0x52474741u /* "AGGR" */
#define ARGUS_AGG_VERSION 1
#define ARGUS_AGG_TOPK 4
#define ARGUS_AGG_ROW_BYTES 56

struct argus_agg_row {
    uint64_t step;
    uint32_t rank, flags;
    uint64_t start_ns;
    /* µs: step wall, forward, backward, optimizer, comm, host gap, compute, collective */
    uint32_t us[8];
};

struct argus_agg_ext {
    uint64_t value; /* mean duration (ns) of this kernel-mode on that rank in that step */
    uint32_t rank;
    uint32_t step;
};

struct argus_agg_kmode {
    uint64_t name_hash;
    uint8_t mode, kclass;
    uint16_t group;
    uint64_t count, sum_ns, min_ns, max_ns;
    struct argus_qsketch sketch;
    uint8_t ntop, nbot;
    struct argus_agg_ext top[ARGUS_AGG_TOPK]; /* largest first */
    struct argus_agg_ext bot[ARGUS_AGG_TOPK]; /* smallest first */
};

struct argus_aggregate {
    struct argus_agg_row *rows;
    size_t nrows, caprows;
    struct argus_agg_kmode *km;
    size_t nkm, capkm;
};

void argus_agg_init(struct argus_aggregate *a);
void argus_agg_free(struct argus_aggregate *a);
void argus_agg_reset(struct argus_aggregate *a); /* keeps capacity */
/* Fold one step summary in: one row plus its kmodes. 0 or -ENOMEM. */
int argus_agg_add_summary(struct argus_aggregate *a, const struct argus_step_summary *s);
/* dst ∪= src. 0 or -ENOMEM (dst then unchanged in size, possibly partly merged). */
int argus_agg_merge(struct argus_aggregate *dst, const struct argus_aggregate *src);
/* Exact encoded size, and the encoding (canonical: equal aggregates, equal bytes).
 * Returns bytes written or -ENOSPC. */
size_t argus_agg_encoded_size(const struct argus_aggregate *a);
long argus_agg_encode(const struct argus_aggregate *a, uint8_t *buf, size_t cap);
/* Replace *a with the decoding of buf. 0 or -EINVAL/-ENOMEM with errbuf. */
int argus_agg_decode(struct argus_aggregate *a, const uint8_t *buf, size_t len, char *errbuf,
                     size_t errlen);

#endif /* ARGUS_COMMON_AGGREGATE_H */
