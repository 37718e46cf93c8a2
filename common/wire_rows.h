/* wire_rows.h — the rows record (ARGUS_REC_ROWS, wire.h): how rank 0 keeps the cells of a
 * condensed batch that have no full summary (reduce/condense.h: "thin" cells). Instead of
 * one thin summary record per (rank, step), up to ARGUS_ROWS_PER_RECORD of the batch's
 * window-aggregate rows go in one record, in the compact row form (aggrow.h, ~16 B a row
 * against ~50 B for a thin summary), and become thin summaries only where they are read:
 * the job store (argus_jobstore_ingest) and the spool reader's users. Payload: u32 row
 * count (1..ARGUS_ROWS_PER_RECORD), then the rows coded afresh (each record stands alone),
 * in canonical order. Decoding is bounds-checked and accepts only that form.
 */
#ifndef ARGUS_COMMON_WIRE_ROWS_H
#define ARGUS_COMMON_WIRE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/aggregate.h"
#include "common/aggrow.h"
#include "common/wire.h"

/* Room for a rows record of n rows (n <= ARGUS_ROWS_PER_RECORD). */
size_t argus_rows_encoded_max(size_t n);
/* Encode rows r[0..n) (1 <= n <= ARGUS_ROWS_PER_RECORD, canonical order: aggregate.h's
 * sorted rows or a subsequence of them). Returns the record's size, or -EINVAL /
 * -ENOSPC (nothing written). */
long argus_rows_encode(const struct argus_agg_row *r, size_t n, uint8_t *buf, size_t cap);

/* Reading one record row by row (no allocation). */
struct argus_rows_reader {
    const uint8_t *p, *end; /* the coded rows left */
    uint32_t left;          /* rows left */
    struct argus_aggrow_coder c;
};
/* Open rec[0..len) (a record argus_record_peek accepted as ARGUS_REC_ROWS). 0 or
 * negative with errbuf filled. */
int argus_rows_open(const uint8_t *rec, size_t len, struct argus_rows_reader *rd,
                    char *errbuf, size_t errlen);
/* The next row: 1, 0 after the last one (the payload was read exactly), or negative
 * (malformed: errbuf names the row). */
int argus_rows_next(struct argus_rows_reader *rd, struct argus_agg_row *row, char *errbuf,
                    size_t errlen);

#endif /* ARGUS_COMMON_WIRE_ROWS_H */
