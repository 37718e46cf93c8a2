/* pull.c — rank 0 pulls the extreme cells its condensing children hold (pull.h). */
#include "reduce/pull.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/wire.h"

#define ASK_MAGIC 0x4b4c5041u    /* "APLK" */
#define ANSWER_MAGIC 0x414c5041u /* "APLA" */
#define ASK_HEAD 16u             /* magic, seq, flags, n; then keys, then a CRC32C */
#define ANSWER_HEAD 8u           /* magic, seq; then records */
#define ASK_FINAL 1u

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void wr32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

int argus_pull_init(struct argus_pull *p, MPI_Comm comm, const int *kids, int nkids,
                    int parent)
{
    memset(p, 0, sizeof *p);
    p->comm = comm;
    p->parent = parent;
    if (nkids > 0) {
        p->kid = calloc((size_t)nkids, sizeof *p->kid);
        if (!p->kid)
            return -ENOMEM;
        for (int i = 0; i < nkids; i++)
            p->kid[i].rank = kids[i];
    }
    p->nkids = nkids > 0 ? nkids : 0;
    return 0;
}

void argus_pull_free(struct argus_pull *p)
{
    for (int i = 0; i < p->nkids; i++) {
        free(p->kid[i].rx.buf.p);
        free(p->kid[i].out.p);
    }
    free(p->kid);
    free(p->ask.p);
    free(p->rx.buf.p);
    free(p->rep.p);
    memset(p, 0, sizeof *p);
}

void argus_pull_holder(struct argus_pull *p, int i)
{
    if (i >= 0 && i < p->nkids)
        p->kid[i].holds = 1;
}

void argus_pull_forget(struct argus_pull *p, int i)
{
    if (i >= 0 && i < p->nkids)
        p->kid[i].holds = p->kid[i].waiting = 0;
}

/* ---- rank 0 ------------------------------------------------------------------------ */

/* The ask in flight to k completed? (Its buffer is then free.) */
static void ask_sent(struct argus_pull_kid *k)
{
    int done = 0;
    if (k->sending && (MPI_Test(&k->sreq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done))
        k->sending = 0;
}

int argus_pull_ask(struct argus_pull *p, const uint64_t *keys, size_t n, int final,
                   uint64_t deadline)
{
    if (n > (size_t)(INT_MAX - ASK_HEAD - 4) / sizeof *keys)
        return 0; /* an ask MPI cannot carry in one message: nothing is pulled */
    const size_t len = ASK_HEAD + n * sizeof *keys + 4;
    p->seq++;
    p->ask.len = 0;
    if (argus_bytebuf_reserve(&p->ask, len) != 0)
        return 0;
    wr32(p->ask.p, ASK_MAGIC);
    wr32(p->ask.p + 4, p->seq);
    wr32(p->ask.p + 8, final ? ASK_FINAL : 0);
    wr32(p->ask.p + 12, (uint32_t)n);
    if (n)
        memcpy(p->ask.p + ASK_HEAD, keys, n * sizeof *keys);
    wr32(p->ask.p + len - 4, argus_crc32c(p->ask.p, len - 4));
    p->ask.len = len;
    int asked = 0;
    for (int i = 0; i < p->nkids; i++) {
        struct argus_pull_kid *k = &p->kid[i];
        k->waiting = 0;
        ask_sent(k);
        if (!k->holds || k->sending) /* an earlier ask still in flight: it is stuck */
            continue;
        k->out.len = 0; /* the kid's own copy: asks to others may still be in flight */
        if (argus_bytebuf_append(&k->out, p->ask.p, len) != 0 ||
            MPI_Isend(k->out.p, (int)len, MPI_BYTE, k->rank, ARGUS_PULL_TAG_ASK, p->comm,
                      &k->sreq) != MPI_SUCCESS)
            continue;
        k->sending = 1;
        k->waiting = 1;
        asked++;
    }
    p->asked++;
    p->active = asked > 0;
    p->deadline = deadline;
    return asked;
}

/* A complete answer from k in in[0..len): appended to batch when it answers this ask. */
static void take_answer(struct argus_pull *p, struct argus_pull_kid *k, const uint8_t *in,
                        size_t len, struct argus_bytebuf *batch)
{
    if (len < ANSWER_HEAD || rd32(in) != ANSWER_MAGIC || rd32(in + 4) != p->seq ||
        !p->active || !k->waiting) {
        p->late++;
        return;
    }
    k->waiting = 0;
    p->answers++;
    if (argus_bytebuf_append(batch, in + ANSWER_HEAD, len - ANSWER_HEAD) != 0)
        p->late++; /* out of memory: those cells stay thin */
}

int argus_pull_poll(struct argus_pull *p, struct argus_bytebuf *batch, uint64_t now)
{
    int waiting = 0;
    for (int i = 0; i < p->nkids; i++) {
        struct argus_pull_kid *k = &p->kid[i];
        ask_sent(k);
        if ((k->waiting || k->holds || k->rx.posted) &&
            argus_recv_poll(&k->rx, k->rank, ARGUS_PULL_TAG_ANSWER, p->comm) == 1) {
            p->bytes_in += k->rx.buf.len;
            take_answer(p, k, k->rx.buf.p, k->rx.buf.len, batch);
        }
        waiting |= k->waiting;
    }
    if (!p->active)
        return 0;
    if (waiting && now < p->deadline)
        return 0;
    for (int i = 0; i < p->nkids; i++) { /* too late: their cells stay rows only */
        if (p->kid[i].waiting) {
            p->unanswered++;
            argus_log_once(ARGUS_LOG_WARN, "pull-late", "rank 0: rank %d did not answer a "
                           "pull within the deadline; the cells it holds stay rows only",
                           p->kid[i].rank);
        }
        p->kid[i].waiting = 0;
    }
    p->active = 0;
    return 1;
}

/* ---- a holding child ---------------------------------------------------------------- */

/* The keys of a whole, undamaged ask in req (ascending), or NULL. */
static const uint64_t *ask_keys(const struct argus_bytebuf *req, size_t *n, uint32_t *seq,
                                int *final)
{
    const uint8_t *q = req->p;
    *n = 0;
    if (req->len < ASK_HEAD + 4 || rd32(q) != ASK_MAGIC)
        return NULL;
    *seq = rd32(q + 4);
    *final = (rd32(q + 8) & ASK_FINAL) != 0;
    const size_t m = rd32(q + 12);
    if (req->len != ASK_HEAD + m * 8 + 4 || rd32(q + req->len - 4) !=
                                                argus_crc32c(q, req->len - 4))
        return NULL;
    const uint64_t *k = (const uint64_t *)(const void *)(q + ASK_HEAD); /* 8-aligned */
    for (size_t i = 1; i < m; i++)
        if (k[i - 1] >= k[i])
            return NULL;
    *n = m;
    return k;
}

/* Answer the ask now in p->rx (a damaged one with nothing, so rank 0 is not held). */
static void answer(struct argus_pull *p, struct argus_condense *cd)
{
    size_t n = 0;
    uint32_t seq = 0;
    int final = 0;
    const uint64_t *keys = ask_keys(&p->rx.buf, &n, &seq, &final);
    cd->replen = 0;
    if (keys && argus_condense_answer(cd, keys, n) != 0)
        cd->replen = 0;
    p->rep.len = 0;
    uint8_t head[ANSWER_HEAD];
    wr32(head, ANSWER_MAGIC);
    wr32(head + 4, seq);
    if (argus_bytebuf_append(&p->rep, head, sizeof head) != 0 ||
        (cd->replen && argus_bytebuf_append(&p->rep, cd->rep, cd->replen) != 0))
        p->rep.len = sizeof head; /* out of memory: answer with nothing */
    if (!p->rep.p || MPI_Isend(p->rep.p, (int)p->rep.len, MPI_BYTE, p->parent,
                               ARGUS_PULL_TAG_ANSWER, p->comm, &p->sq) != MPI_SUCCESS)
        return;
    p->replying = 1 + final;
    p->served++;
}

int argus_pull_serve(struct argus_pull *p, struct argus_condense *cd)
{
    int any = 0, done = 0;
    if (p->parent < 0)
        return 0;
    if (p->replying) {
        if (MPI_Test(&p->sq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
            p->released |= p->replying == 2;
            p->replying = 0;
            any = 1;
        } else {
            return 0; /* one answer at a time: the next ask waits in MPI */
        }
    }
    int rc = argus_recv_poll(&p->rx, p->parent, ARGUS_PULL_TAG_ASK, p->comm);
    if (rc == 0)
        return any;
    if (rc < 0)
        p->rx.buf.len = 0; /* could not take it: answer with nothing */
    answer(p, cd);
    return 1;
}

int argus_pull_released(const struct argus_pull *p)
{
    return p->released;
}
