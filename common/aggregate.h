/* aggregate.h — the window aggregate (docs/ARCHITECTURE.md, Contracts): what one subtree of the
 * reduction tree knows about one window, in a form whose size does not grow with the
 * rank count except for one fixed-size row per rank and step:
 *   - rows: per (rank, step) a handful of numbers (start on rank 0's clock, step wall,
 *     phase times, host gap, compute, collective + p2p time), sorted by (step, rank);
 *     12-16 bytes each on the wire for realistic data (at most ARGUS_AGG_ROW_BYTES);
 *   - kmodes: per (kernel, mode, group) merged statistics: count, sum, min, max and a
 *     mergeable log-bucket sketch (qsketch.h), plus the top-k slowest and top-k fastest
 *     (rank, step) by mean duration; sorted by (name_hash, mode, group). group is the
 *     rank's pipeline stage, so peers (same work) share an entry.
 * Merging is a sorted union of rows, bucket-count addition of sketches, min/max/sum of
 * the statistics and top-k of the union under a total order (value, rank, step): it is
 * associative and commutative, so every tree shape and merge order gives byte-identical
 * encodings (as long as no sketch collapsed; see qsketch.h).
 *
 * Rows are merged lazily: a merge appends the source's rows as sorted runs (one memcpy;
 * a run that sorts after the last row extends it), and the union is ordered once, by a
 * k-way merge that copies whole blocks — in argus_agg_sort_rows, or on the fly by
 * argus_agg_encode. So a parent with k children pays one copy per row per merge plus
 * one ordering pass, not k passes over its rows. Readers of a->rows call
 * argus_agg_sort_rows first (rows are in (step, rank) order when nruns <= 1).
 *
 * Encoding: u32 magic "AGGR", u16 version (2), u16 flags, u32 nrows, u32 nkmodes, rows
 * (in canonical order, each as varint differences from the row before: aggrow.h), kmodes
 * (sketches sparse), u32 CRC32C. Decoding checks every length and value and never reads
 * out of bounds. Not thread-safe; the struct owns its arrays (argus_agg_free).
 */
#ifndef ARGUS_COMMON_AGGREGATE_H
#define ARGUS_COMMON_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define ARGUS_AGG_MAGIC 0x52474741u /* "AGGR" */
#define ARGUS_AGG_VERSION 2 /* 1: rows as 56-byte memory images */
#define ARGUS_AGG_TOPK 4
/* The most bytes one row takes in an encoding: argus_agg_encoded_size's bound per row, so
 * encoded_size - nrows x ARGUS_AGG_ROW_BYTES is the exact size of everything else. What
 * the rows really take: argus_agg_rows_encoded_size. */
#define ARGUS_AGG_ROW_BYTES 70

struct argus_agg_row {
    uint64_t step;
    uint32_t rank, flags;
    uint64_t start_ns; /* start_ns + clock_offset_ns: rank 0's clock */
    /* µs: step wall, forward, backward, optimizer, comm, host gap, compute,
     * collective + p2p */
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
    size_t nruns;  /* rows is nruns sorted runs; run i ends at run[i] */
    size_t *run;   /* 3 x caprun: run ends, then the k-way merge's cursors and heap */
    size_t caprun;
    struct argus_agg_row *spare; /* argus_agg_sort_rows' target, kept for reuse */
    size_t capspare;
    struct argus_agg_kmode *km;
    size_t nkm, capkm;
};

void argus_agg_init(struct argus_aggregate *a);
void argus_agg_free(struct argus_aggregate *a);
void argus_agg_reset(struct argus_aggregate *a); /* keeps capacity */
/* Fold one step summary in: one row plus its kmodes. 0 or -ENOMEM. */
int argus_agg_add_summary(struct argus_aggregate *a, const struct argus_step_summary *s);
/* dst ∪= src (src may be unsorted). 0 or -ENOMEM (dst then unchanged in size, possibly
 * partly merged). dst's rows are left as runs: see argus_agg_sort_rows. */
int argus_agg_merge(struct argus_aggregate *dst, const struct argus_aggregate *src);
/* Make room for nrows rows in nruns runs in all (a parent that knows how many rows its
 * children send: no regrowth, no copy, while merging). 0 or -ENOMEM. */
int argus_agg_reserve(struct argus_aggregate *a, size_t nrows, size_t nruns);
/* Put the rows in (step, rank) order (nruns becomes <= 1). 0 or -ENOMEM (then unchanged). */
int argus_agg_sort_rows(struct argus_aggregate *a);
/* An upper bound of the encoded size, always enough for argus_agg_encode: exact for the
 * header, kmodes and checksum, ARGUS_AGG_ROW_BYTES per row (O(kmodes), no pass over the
 * rows). */
size_t argus_agg_encoded_size(const struct argus_aggregate *a);
/* The exact encoded size of the rows part (one pass over the rows in canonical order,
 * using a's scratch like argus_agg_encode); the whole encoding takes
 * argus_agg_encoded_size(a) - a->nrows * ARGUS_AGG_ROW_BYTES + this. */
size_t argus_agg_rows_encoded_size(const struct argus_aggregate *a);
/* The encoding (canonical: equal aggregates, equal bytes, whether or not the rows were
 * sorted first; unsorted rows are merged straight into buf, using a's scratch, so a must
 * not be encoded from two threads at once). Writes at most cap bytes; cap =
 * argus_agg_encoded_size(a) always suffices. Returns bytes written, or -ENOSPC when the
 * encoding does not fit in cap (buf's contents then undefined). */
long argus_agg_encode(const struct argus_aggregate *a, uint8_t *buf, size_t cap);
/* Replace *a with the decoding of buf (rows must be in canonical order, as every
 * encoding is). 0 or -EINVAL/-ENOMEM with errbuf. */
int argus_agg_decode(struct argus_aggregate *a, const uint8_t *buf, size_t len, char *errbuf,
                     size_t errlen);

#endif /* ARGUS_COMMON_AGGREGATE_H */
