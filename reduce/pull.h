/* pull.h — the last hop of a condensing tree (reduce/condense.h, "Pull"): rank 0 asks
 * its condensing children for the extreme cells it keeps, instead of every child pushing
 * all of its subtree's candidates. Owned by the Argus thread (agent.c); non-blocking
 * throughout (Improbe + Imrecv + Test, Isend + Test), never waits.
 *
 * Wire (tags on the private communicator):
 *   ask    (rank 0 -> child): u32 magic "APLK", u32 seq, u32 flags (bit 0: rank 0's
 *          final batch), u32 n, then n u64 cell keys ascending (argus_condense_key);
 *   answer (child -> rank 0): u32 magic "APLA", u32 seq, then wire records (the held
 *          exemplars among the keys; possibly none).
 * Every ask is answered, even a damaged one (with nothing), so rank 0 waits only for a
 * child that is gone — and then only until the ask's deadline. An answer whose seq is not
 * the current ask's is dropped (it was late for an earlier batch).
 * A child stays for rank 0's final ask after its own final window (argus_pull_released),
 * so that rank 0 can still pull the last batch; the agent bounds that wait.
 */
#ifndef ARGUS_REDUCE_PULL_H
#define ARGUS_REDUCE_PULL_H

#include <mpi.h>
#include <stdint.h>

#include "reduce/condense.h"
#include "reduce/bytebuf.h"
#include "reduce/recvpoll.h"

#define ARGUS_PULL_TAG_ASK 0x4158
#define ARGUS_PULL_TAG_ANSWER 0x4159

struct argus_pull_kid {
    int rank;
    int holds;          /* it sent an aggregate, and is not marked missing: ask it */
    int waiting;        /* the current ask is unanswered */
    int sending;        /* the ask is in flight */
    MPI_Request sreq;
    struct argus_bytebuf out; /* its copy of the ask */
    struct argus_recv rx;     /* its answer */
};

struct argus_pull {
    MPI_Comm comm;
    /* rank 0 */
    struct argus_pull_kid *kid;
    int nkids;
    struct argus_bytebuf ask;
    uint32_t seq;
    int active;          /* an ask is out; answers are awaited */
    uint64_t deadline;   /* monotonic ns */
    uint64_t asked, answers, late; /* asks; answers taken; answers dropped */
    uint64_t unanswered;           /* asks whose deadline passed first */
    uint64_t bytes_in;             /* answer messages received, all */
    /* a holding child */
    int parent;
    struct argus_recv rx;     /* the next ask */
    struct argus_bytebuf rep; /* the answer in flight */
    int replying, released;
    MPI_Request sq;
    uint64_t served;
};

/* 0 or -ENOMEM. kids: rank 0's children (NULL/0 on a child); parent: -1 on rank 0. */
int argus_pull_init(struct argus_pull *p, MPI_Comm comm, const int *kids, int nkids,
                    int parent);
void argus_pull_free(struct argus_pull *p);

/* ---- rank 0 ---- */
/* Child i (index into kids) sent an aggregate: it holds cells from now on. */
void argus_pull_holder(struct argus_pull *p, int i);
/* Child i is marked missing: never ask it again. */
void argus_pull_forget(struct argus_pull *p, int i);
/* Ask every holding child for keys[0..n) (ascending) until `deadline` (monotonic ns).
 * Returns how many were asked (0: nothing to wait for; p->active stays 0). */
int argus_pull_ask(struct argus_pull *p, const uint64_t *keys, size_t n, int final,
                   uint64_t deadline);
/* Progress an active ask: answers are appended to *batch. Returns 1 when every asked
 * child answered or the deadline passed (p->active then 0), else 0. */
int argus_pull_poll(struct argus_pull *p, struct argus_bytebuf *batch, uint64_t now);

/* ---- a holding child ---- */
/* Answer asks from the parent from cd's held cells (argus_condense_answer). 1 when
 * something happened. */
int argus_pull_serve(struct argus_pull *p, struct argus_condense *cd);
/* Rank 0's final ask was answered (and the answer's send completed). */
int argus_pull_released(const struct argus_pull *p);

#endif /* ARGUS_REDUCE_PULL_H */
