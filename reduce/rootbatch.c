/* rootbatch.c — rank 0's condensed batch around a pull (rootbatch.h). */
#include "reduce/rootbatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

void argus_rootbatch_init(struct argus_rootbatch *b, struct argus_condense *cd,
                          struct argus_pull *pull)
{
    memset(b, 0, sizeof *b);
    b->cd = cd;
    b->pull = pull;
}

void argus_rootbatch_free(struct argus_rootbatch *b)
{
    free(b->in.p);
    free(b->aggs.p);
    memset(b, 0, sizeof *b);
}

int argus_rootbatch_add_agg(struct argus_rootbatch *b, const uint8_t *agg, size_t len)
{
    const uint64_t n = len;
    if (argus_bytebuf_reserve(&b->aggs, sizeof n + len) != 0)
        return -ENOMEM;
    argus_bytebuf_append(&b->aggs, &n, sizeof n);
    argus_bytebuf_append(&b->aggs, agg, len);
    return 0;
}

/* The aggregates added since the last batch into the condensing state. */
static void merge_aggs(struct argus_rootbatch *b)
{
    for (size_t off = 0; off + sizeof(uint64_t) <= b->aggs.len;) {
        uint64_t n;
        memcpy(&n, b->aggs.p + off, sizeof n);
        off += sizeof n;
        if (argus_condense_merge(b->cd, b->aggs.p + off, (size_t)n, b->agg_err,
                                 sizeof b->agg_err) != 0)
            b->bad_aggs++;
        off += (size_t)n;
    }
    b->aggs.len = 0;
}

int argus_rootbatch_begin(struct argus_rootbatch *b, struct argus_bytebuf *outbox, int final,
                          uint64_t deadline_ns)
{
    merge_aggs(b);
    struct argus_bytebuf t = b->in;
    b->in = *outbox;
    *outbox = t;
    outbox->len = 0;
    int rc = argus_condense_root_begin(b->cd, b->in.p, b->in.len, &b->bad);
    b->oom |= rc != 0;
    b->ok = rc == 0;
    b->final = final;
    b->from = b->in.len;
    /* nothing to pull: no ask, except the final one, which releases the children */
    b->pulling = b->ok && (b->cd->nwant || final) &&
                 argus_pull_ask(b->pull, b->cd->want, b->cd->nwant, final, deadline_ns) > 0;
    return b->pulling;
}

int argus_rootbatch_poll(struct argus_rootbatch *b, uint64_t now_ns)
{
    int done = argus_pull_poll(b->pull, &b->in, now_ns);
    if (!b->pulling)
        return 0;
    if (done)
        b->pulling = 0;
    return done;
}

int argus_rootbatch_deliver(struct argus_rootbatch *b, struct argus_rank0 *r0)
{
    if (b->ok) {
        int rc = argus_condense_root_end(b->cd, b->in.p, b->from, b->in.len, &b->bad);
        b->oom |= rc != 0;
    }
    b->in.len = 0;
    b->pulling = 0;
    if (b->oom || b->bad)
        argus_log_once(ARGUS_LOG_WARN, "condense", "rank 0: %s while condensing a window",
                       b->oom ? "out of memory: its summaries are lost" :
                       "damaged records skipped");
    if (b->bad_aggs)
        argus_log_once(ARGUS_LOG_WARN, "bad-agg", "rank 0: a window aggregate from a child "
                       "was dropped (%s)", b->agg_err);
    const struct argus_agg_row *rows;
    const size_t nrows = argus_condense_thin_rows(b->cd, &rows);
    argus_rank0_ingest_condensed(r0, b->cd->out, b->ok ? b->cd->outlen : 0, rows,
                                 b->ok ? nrows : 0);
    r0->condense = b->cd->st;
    r0->pull_asks = b->pull->asked;
    r0->pull_answers = b->pull->answers;
    r0->pull_late = b->pull->late;
    r0->pull_unanswered = b->pull->unanswered;
    if (!b->final)
        argus_rank0_report(r0, 0);
    return b->final;
}
