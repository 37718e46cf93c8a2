/* add_rows.c — the batch add of thin rows (store/jobstore.h: argus_jobstore_add_rows):
 * rank 0's rows records (wire_rows.h) bring ~P rows a step in canonical (step, rank)
 * order, each stored as its thin summary (argus_aggrow_thin). On top of the core
 * (store/cells.c) and retention (store/retain.c); must know nothing of wire records (the
 * rows come decoded: store/ingest.c).
 *
 * Why a batch: at P = 16,384 the store is ~90 MB, none of it in cache, and each add
 * touches its rank's own arrays (ids, sums, rows: one allocation per rank) and a reused
 * summary block, so one add at a time waits on its misses one after the other. Here the
 * rank slot, the arrays' next entries and the free block of the rows a few places ahead
 * are fetched while the current row is stored, and the thin summary is written straight
 * into its block instead of through the scratch summary.
 *
 * Contract: the store ends exactly as after argus_jobstore_add_summary of each row's thin
 * summary, in order (tests/store/test_jobstore_rows.c checks it). A row that appends a
 * newer step to its rank (every row in steady state) takes add_row's own path,
 * jobstore_cell_put's for that case step for step; any other (its step stale, already
 * held: a replacement, or older than the rank's last: an insertion) goes through
 * argus_jobstore_add_summary itself. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/aggregate.h"
#include "common/aggrow.h"

#include <errno.h>
#include <stddef.h>

/* The block a thin summary (no kmodes) takes. */
#define THIN_BLOCK JOBSTORE_BLOCK_SIZE(0)

/* Rows ahead of the current one whose rank slot is fetched, and whose slot arrays are
 * (the slot fetched by then): enough misses in flight to cover memory latency. */
#define SLOT_AHEAD 16
#define ARRAYS_AHEAD 8

/* One row, as add_summary would store its thin summary. An append is written straight
 * into its block (add_summary's copy from the scratch doubles the stores, and stores to a
 * block not yet in cache hold up every store behind them). */
static int add_row(struct argus_jobstore *js, const struct argus_agg_row *row)
{
    struct rank_slot *rs = &js->ranks[row->rank];

    if (row->step < js->evicted_below ||
        (rs->n && rs->ids[rs->head + rs->n - 1] >= row->step)) {
        argus_aggrow_thin(row, js->scratch);
        return argus_jobstore_add_summary(js, js->scratch);
    }
    int rc = jobstore_slot_room(js, rs);
    if (rc)
        return rc;
    struct argus_step_summary *c = jobstore_arena_block(&js->arena, THIN_BLOCK);
    size_t fat;
    if (!c || jobstore_step_hold(js, row->step, &fat) != 0) {
        if (c)
            jobstore_arena_put(&js->arena, c, THIN_BLOCK);
        return -ENOMEM;
    }
    argus_aggrow_thin(row, c);
    const uint32_t at = rs->head + rs->n;
    rs->sums[at] = c;
    rs->ids[at] = row->step;
    jobstore_row_of(c, &rs->rows[at]);
    jobstore_fig_add(js, fat, row->rank, &rs->rows[at]);
    rs->n++;
    js->total++;
    jobstore_enforce_horizon(js);
    return 0;
}

/* The lines that row i + ARRAYS_AHEAD will write, fetched now (its slot, fetched
 * SLOT_AHEAD rows before, in cache by then): its rank's last id (read to place the step)
 * and next entry of ids, sums and rows, all within [0, cap] of their arrays; and the free
 * block it will take, thin blocks being reused last freed first (a guess only: an
 * eviction in between pushes other blocks first). Written out in the loop: GCC deletes a
 * call to a function that only prefetches. */
int argus_jobstore_add_rows(struct argus_jobstore *js, const struct argus_agg_row *rows,
                            size_t n)
{
    int rc = 0;

    if (!js || (!rows && n))
        return -EINVAL;
    if (!jobstore_scratch_summary(js))
        return -ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i + SLOT_AHEAD < n && rows[i + SLOT_AHEAD].rank < js->n_ranks)
            __builtin_prefetch(&js->ranks[rows[i + SLOT_AHEAD].rank]);
        if (i + ARRAYS_AHEAD < n && rows[i + ARRAYS_AHEAD].rank < js->n_ranks &&
            js->ranks[rows[i + ARRAYS_AHEAD].rank].n) {
            const struct rank_slot *rs = &js->ranks[rows[i + ARRAYS_AHEAD].rank];
            const uint32_t end = rs->head + rs->n;
            __builtin_prefetch(rs->ids + end - 1, 1);
            __builtin_prefetch(rs->ids + end, 1);
            __builtin_prefetch(rs->sums + end, 1);
            __builtin_prefetch(rs->rows + end, 1);
        }
        const unsigned char *b = jobstore_arena_reuse_ahead(&js->arena, THIN_BLOCK,
                                                            ARRAYS_AHEAD);
        if (b)
            for (size_t at = 0; at < THIN_BLOCK; at += JOBSTORE_UNIT)
                __builtin_prefetch(b + at, 1);
        rc = rows[i].rank < js->n_ranks ? add_row(js, &rows[i]) : -EINVAL;
    }
    return rc;
}
