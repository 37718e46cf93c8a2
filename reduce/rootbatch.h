/* rootbatch.h — rank 0's condensed batch (reduce/condense.h) around a pull (pull.h): the
 * outbox becomes the batch, rank 0 folds it and selects, asks its holding children for
 * the cells it keeps but does not hold, and when they answered (or the ask's deadline
 * passed) writes the batch's records (exemplars and thin summaries) for the job store.
 * Meanwhile the outbox is free for the children's next windows, and their aggregates
 * wait here (argus_rootbatch_add_agg) until the next batch begins: a batch's rows and its
 * records always come from the same messages. Argus thread only.
 */
#ifndef ARGUS_REDUCE_ROOTBATCH_H
#define ARGUS_REDUCE_ROOTBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "reduce/condense.h"
#include "reduce/bytebuf.h"
#include "reduce/pull.h"
#include "reduce/rank0.h"

struct argus_rootbatch {
    struct argus_condense *cd; /* borrowed */
    struct argus_pull *pull;   /* borrowed */
    struct argus_bytebuf in;   /* the batch's input, then the answers */
    struct argus_bytebuf aggs; /* children's aggregates for the next batch: u64 len, bytes */
    size_t from;               /* where the answers start */
    int ok, final, pulling;
    uint64_t bad;              /* damaged records skipped, all batches */
    int oom;                   /* a batch was lost for memory, all batches */
    uint64_t bad_aggs;         /* damaged aggregates dropped, all batches */
    char agg_err[160];         /* why the last one was */
};

void argus_rootbatch_init(struct argus_rootbatch *b, struct argus_condense *cd,
                          struct argus_pull *pull);
void argus_rootbatch_free(struct argus_rootbatch *b);
/* A child's encoded aggregate for the next batch (copied). 0 or -ENOMEM. */
int argus_rootbatch_add_agg(struct argus_rootbatch *b, const uint8_t *agg, size_t len);
/* Take *outbox (left empty) and the aggregates added since the last batch as the next
 * batch. Returns 1 while a pull is in flight
 * (argus_rootbatch_poll until it returns 1), 0 when the batch is ready now. */
int argus_rootbatch_begin(struct argus_rootbatch *b, struct argus_bytebuf *outbox, int final,
                          uint64_t deadline_ns);
/* Progress the pull (late answers of earlier asks are dropped). 1 when ready. */
int argus_rootbatch_poll(struct argus_rootbatch *b, uint64_t now_ns);
/* The ready batch into rank 0's job store and spool (rank0.h:
 * argus_rank0_ingest_condensed, then a report unless final), with the condensing and pull
 * figures for reduce.json; a problem is said once. Returns the batch's final flag. */
int argus_rootbatch_deliver(struct argus_rootbatch *b, struct argus_rank0 *r0);

#endif /* ARGUS_REDUCE_ROOTBATCH_H */
