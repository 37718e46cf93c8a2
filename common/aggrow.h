/* aggrow.h — the compact wire form of window-aggregate rows (aggregate.h), for the
 * aggregate's encoding and the rows record (wire_rows.h). It codes one sequence of rows in
 * canonical order (aggregate.c's row_cmp: step, rank, then the row's bytes in host order)
 * or any subsequence of it, in as many calls as the caller likes, and knows nothing of
 * runs, kmodes, framing or checksums; it never allocates. Single-threaded per coder.
 *
 * Each row is LEB128 varints of differences from the row before it (prev; all zero before
 * the first row), lossless for every value of every field:
 *   uv h = rank_delta << 2 | new_step << 1 | (flags != 0), where new_step = step differs
 *        from prev's and rank_delta = rank - (new_step ? 0 : prev rank);
 *   if new_step: uv step - prev step (>= 1);
 *   if flags:    uv flags;
 *   zz start_ns - pred, pred = prev start_ns, plus 1000 x prev us[0] on a new step (the
 *        previous step's end); all modulo 2^64;
 *   8 x zz us[k] - prev us[k] (as signed 64-bit).
 * zz: the zigzag varint of a 64-bit difference. Ranks of one step start about together
 * and take about as long, so a realistic row takes 12-16 bytes (test_aggregate.c measures
 * 12.4 for bench/reduce_scale's rows, 15.3 for noisier ones; ARGUS_AGGROW_MAX at worst).
 * The form is canonical: one sequence of rows has exactly one encoding, and a decoder
 * accepts only that one (no overlong varints, no empty step or flag fields, no rows out
 * of order).
 */
#ifndef ARGUS_COMMON_AGGROW_H
#define ARGUS_COMMON_AGGROW_H

#include <stddef.h>
#include <stdint.h>

#include "common/aggregate.h"

/* The most bytes one row takes: h 5 (34 bits), step 10, flags 5, start 10, us 8 x 5. */
#define ARGUS_AGGROW_MAX 70
/* The fewest: h, start and the 8 us, one byte each. */
#define ARGUS_AGGROW_MIN 10

/* The coder's state: the row before (encoder and decoder keep the same one). */
struct argus_aggrow_coder {
    struct argus_agg_row prev;
    uint64_t n; /* rows coded so far */
};

void argus_aggrow_init(struct argus_aggrow_coder *c);
/* Append the n rows r (which continue c's sequence in canonical order) at p, which has
 * room for n x ARGUS_AGGROW_MAX bytes; returns the end of what was written. */
uint8_t *argus_aggrow_put(struct argus_aggrow_coder *c, const struct argus_agg_row *r,
                          size_t n, uint8_t *p);
/* Exact bytes argus_aggrow_put would write for them (advances c the same way). */
size_t argus_aggrow_size(struct argus_aggrow_coder *c, const struct argus_agg_row *r,
                         size_t n);
/* Decode n rows from [*p, end) into out. Never reads at or past end. 0 with *p past the
 * last row, or -EINVAL with *p at the first byte of the row that is truncated, malformed
 * or out of canonical order (out then partly written). */
int argus_aggrow_get(struct argus_aggrow_coder *c, const uint8_t **p, const uint8_t *end,
                     struct argus_agg_row *out, size_t n);

/* The thin summary of one row: its step-time and phase values only, flagged
 * ARGUS_SF_THIN (types.h), no kernel statistics and no longest idle interval
 * (idle_long_ns, idle_long_end_ns: 0, unknown; a row does not carry them). Where a
 * condensed row is read (the job store, the spool reader) it becomes this summary. */
void argus_aggrow_thin(const struct argus_agg_row *r, struct argus_step_summary *out);

#endif /* ARGUS_COMMON_AGGROW_H */
