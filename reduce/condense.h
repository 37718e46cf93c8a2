/* condense.h — how a node of the reduction tree keeps rank 0's inbound bytes bounded
 * in a large job (ARGUS_CONDENSE; docs/ARCHITECTURE.md, contract 5). Full step summaries
 * cost ~0.9 KB per rank and step; at 16,384 ranks that is ~15 MB per step into rank 0. A
 * condensing node instead forwards, per batch of windows:
 *   - its window aggregate (common/aggregate.h): one row per (rank, step) of its subtree
 *     (12-16 bytes in its compact wire form, common/aggrow.h) and per-(kernel, mode,
 *     stage) merged sketches with the top/bottom extremes; and
 *   - full summaries ("exemplars", flagged ARGUS_SF_EXEMPLAR) for only
 *       (a) reference ranks: data-parallel index < ARGUS_CONDENSE_REF_DP when the layout
 *           is known (every (pp, tp) position keeps that many ordinary peers), else a
 *           fixed hash-chosen set of at most ARGUS_CONDENSE_REF_MAX ranks; and
 *       (b) extreme cells: the (rank, step) among the ARGUS_CONDENSE_EXTREMES slowest or
 *           fastest mean durations of some kernel-mode in the merged aggregate.
 * Both rules are decided on data whose merge is exact (a cell among the k most extreme
 * of the whole job is among the k most extreme of every subtree that holds it), so every
 * tree shape and fan-in sends rank 0 the same exemplars and the same aggregate.
 * Rank 0 (root) writes every row that has no exemplar into rows records (wire_rows.h);
 * where they are read, each becomes a thin summary (argus_aggrow_thin; ARGUS_SF_THIN:
 * row values only; the analysis reads no kernel statistics from it), so the job store
 * and the analysis see one summary per (rank, step) as before.
 *
 * Pull (the last hop): rank 0's condensing children do not push their extreme cells. In
 * mode ARGUS_CONDENSE_HOLD a node keeps them (the last two batches) and answers rank 0's
 * request for the cells it chose (argus_condense_answer); rank 0 runs its batch in two
 * steps (argus_condense_root_begin: fold, select, list the wanted cells it does not hold;
 * then argus_condense_root_end over the same input with the answers appended). Only the
 * cells rank 0 keeps cross the last hop, and rank 0 keeps exactly what the push would
 * give it (the selection is the same; every wanted cell is held by one child).
 *
 * Input of a node: raw summaries (its own and its leaf children's: folded into the
 * aggregate and candidates), exemplars of condensing children (candidates only; their
 * rows arrive in the child's aggregate, argus_condense_merge), kernel names (forwarded
 * once per node) and rank info (forwarded). Not thread-safe; one owner (the Argus
 * thread). Allocates per batch, never per kernel event.
 */
#ifndef ARGUS_REDUCE_CONDENSE_H
#define ARGUS_REDUCE_CONDENSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/aggregate.h"
#include "common/condensed.h"

#define ARGUS_CONDENSE_EXTREMES 2    /* per kernel-mode: slowest and fastest cells kept */
#define ARGUS_CONDENSE_SENT_BITS 65536 /* root: the filter of ranks written in full */

enum argus_condense_mode {
    ARGUS_CONDENSE_UP = 0,   /* forward the exemplars to the parent */
    ARGUS_CONDENSE_ROOT = 1, /* rank 0: keep them, rows records for the other cells */
    ARGUS_CONDENSE_HOLD = 2, /* forward references, hold extreme cells for a pull */
};

/* Records held for a pull: one batch's extreme cells. */
struct argus_condense_held {
    uint8_t *p;
    size_t len, cap;
    struct argus_condense_heldix {
        uint64_t key;
        size_t off, len;
    } *ix;
    size_t nix, capix;
};

struct argus_condense_stats {
    uint64_t batches;
    uint64_t rows;       /* rows in the aggregates this node produced */
    uint64_t exemplars;  /* full summaries it forwarded (root: kept) */
    uint64_t dropped;    /* candidate summaries it left to the aggregate */
    uint64_t thin;       /* root: cells written as rows (thin) */
    uint64_t names;      /* kernel-name records forwarded */
    uint64_t held;       /* extreme cells held for a pull */
    uint64_t wanted;     /* root: cells asked for in pulls */
    uint64_t answered;   /* cells sent in answers to pulls */
};

struct argus_condense {
    uint32_t world;                 /* ranks in the job (reference rule) */
    struct argus_aggregate agg;     /* this node's aggregate of the current batch */
    struct argus_aggregate tmp;     /* decode scratch */
    struct argus_step_summary *s;   /* decode scratch */
    uint64_t *sel;                  /* open-addressed set of (rank, step) keys + 1 */
    size_t selcap, seln;
    uint64_t *sent;                 /* root: cells written in full this batch */
    size_t sentcap, sentn;
    uint64_t sent_ranks[ARGUS_CONDENSE_SENT_BITS / 64]; /* bit rank % SENT_BITS: some cell
                                       of that rank in sent (a filter in front of it) */
    struct argus_condense_cand {    /* this batch's summaries, from the fold */
        size_t off, len;            /* the record in the input */
        uint64_t key;               /* (rank, step) */
        int ref;                    /* a reference rank's */
        int verbatim;               /* already an exemplar in this build's encoding: its
                                       bytes go on as they came (no decode, no encode) */
    } *cand;
    size_t ncand, capcand;
    uint64_t *names;                /* kernel-name hashes + 1 already forwarded */
    size_t namecap, namen;
    uint8_t *enc;                   /* the encoded aggregate of the last batch */
    size_t enclen, enccap;
    uint8_t *out;                   /* the records of the last batch */
    size_t outlen, outcap;
    struct argus_condense_held held[2]; /* hold mode: the last two batches' extremes */
    int heldcur;
    uint64_t *have;                 /* root: cells present in the batch's input */
    size_t havecap, haven;
    uint64_t *want;                 /* root: cells to pull (argus_condense_root_begin) */
    size_t nwant, capwant;
    struct argus_agg_row *thin;     /* root: the last batch's rows records, decoded */
    size_t nthin, thincap;
    uint8_t *rep;                   /* the last answer (argus_condense_answer) */
    size_t replen, repcap;
    struct argus_condense_stats st;
};

/* 0 or -ENOMEM. world: the job's rank count. */
int argus_condense_init(struct argus_condense *c, uint32_t world);
void argus_condense_free(struct argus_condense *c);
/* A condensing child's aggregate (its encoding) joins this batch. 0, -EINVAL (damaged:
 * errbuf says why; nothing merged) or -ENOMEM. */
int argus_condense_merge(struct argus_condense *c, const uint8_t *agg, size_t len,
                         char *errbuf, size_t errlen);
/* End the batch: fold the records in[0..len), choose the exemplars and write c->out
 * (names first seen here, rank info, exemplars, and at the root rows records for every
 * other row) and, unless root, c->enc (the batch's aggregate). mode: enum
 * argus_condense_mode (HOLD keeps the extreme cells that are no reference rank's for
 * argus_condense_answer instead of writing them). Damaged records are skipped and
 * counted in *bad. Starts a new batch. 0 or -ENOMEM (the batch is lost). */
int argus_condense_run(struct argus_condense *c, const uint8_t *in, size_t len, int mode,
                       uint64_t *bad);
/* Root, step one of a pulled batch: fold in[0..len) and select; c->want[0..nwant) are
 * the selected cells in[] does not hold (ascending). 0 or -ENOMEM (the batch is lost). */
int argus_condense_root_begin(struct argus_condense *c, const uint8_t *in, size_t len,
                              uint64_t *bad);
/* Root, step two: in[0..from) is what root_begin saw, in[from..len) the answers (their
 * summaries join as exemplars; anything else there is skipped). Writes c->out as
 * argus_condense_run(ROOT) does and starts a new batch. 0 or -ENOMEM. */
int argus_condense_root_end(struct argus_condense *c, const uint8_t *in, size_t from,
                            size_t len, uint64_t *bad);
/* Root: the rows the last batch wrote as rows records (in c->out), in their order, as
 * those records decode: rank 0 stores them from here instead of decoding its own bytes.
 * Valid until the next batch starts; 0 rows after a failed one. */
size_t argus_condense_thin_rows(const struct argus_condense *c,
                                const struct argus_agg_row **rows);
/* Hold mode: c->rep[0..replen) gets the held records of the cells keys[0..n) (those this
 * node holds; possibly none). 0 or -ENOMEM. */
int argus_condense_answer(struct argus_condense *c, const uint64_t *keys, size_t n);
/* The cell key of (rank, step), as in want and answers. */
uint64_t argus_condense_key(uint32_t rank, uint64_t step);

#endif /* ARGUS_REDUCE_CONDENSE_H */
