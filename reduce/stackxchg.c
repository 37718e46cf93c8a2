/* stackxchg.c — host call stacks from every rank to rank 0 (stackxchg.h). Ranks > 0 send
 * each sample the sampler finished as one message and take rank 0's requests for a peer
 * sample; rank 0 adds its own samples and the messages that have arrived to its set, and
 * asks the stalled rank's neighbours for theirs (at most ASKS requests in flight). Must never block the Argus thread unboundedly,
 * never abort; a damaged message is said once and dropped.
 */
#include "reduce/stackxchg.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/stackrec.h"
#include "pipeline/pipeline.h"
#include "tracer/hoststack.h"

#define TAG_STK 0x4180 /* 0x4150.. clocksync.c, 0x4157.. agent.c, pull.h, 0x4160.. */
#define TAG_ASK 0x4181 /* rank 0 -> a healthy peer: sample now */
#define PER_POLL 16    /* messages taken in (rank 0) per round */
#define ASKS 8         /* requests in flight (rank 0); more are skipped */
#define PEERS 2        /* healthy peers asked per stall sample */
#define FLUSH_MS 200   /* the longest a rank sends what is left at finish */
#define ASKED 16       /* (rank, step) stalls whose peers were asked, remembered */
#define UNKNOWN_GAP_MS 1000 /* peers of a rank no host_stall verdict names: this far apart */

static struct {
    int on, rank, size, sending;
    MPI_Request ask_req[ASKS];
    uint8_t ask_buf[ASKS][ARGUS_STACKREQ_WIRE];
    int ask_busy[ASKS];
    MPI_Comm comm;
    MPI_Request req;
    uint8_t sbuf[ARGUS_STACKREC_WIRE_MAX];
    uint8_t rbuf[ARGUS_STACKREC_WIRE_MAX];
    struct argus_stackset set; /* rank 0 */
    struct argus_report *rep;  /* rank 0 */
    struct argus_hoststack_sample hs;
    struct argus_stackrec rec;
    uint32_t asked_rank[ASKED]; /* rank 0: stalls already asked for, a ring */
    uint64_t asked_step[ASKED];
    unsigned n_asked;
    uint64_t unknown_at;        /* monotonic ns of the last ask for an unnamed rank */
} stackxchg;

static void to_rec(const struct argus_hoststack_sample *s, struct argus_stackrec *r)
{
    r->rank = (uint32_t)stackxchg.rank;
    r->stalled_ms = s->stalled_ms;
    r->step = s->step;
    r->t_ns = s->t_ns;
    r->cost_ns = s->cost_ns;
    r->why = s->why;
    r->lang = s->lang;
    r->nframes = s->nframes;
    r->for_rank = s->for_rank;
    r->for_step = s->for_step;
    memcpy(r->folded, s->folded, sizeof r->folded);
    r->folded[sizeof r->folded - 1] = '\0';
}

int argus_stackxchg_start(MPI_Comm comm, int rank, struct argus_report *rep)
{
    struct argus_config cfg; /* ARGUS_STACKS, ARGUS_STACKS_MIN_MS (a bad value: argus-run
                              * refused it already; here the default stands) */
    argus_config_load(&cfg, NULL, NULL, 0);
    memset(&stackxchg, 0, sizeof stackxchg);
    if (cfg.stacks != ARGUS_MODE_ON) {
        argus_log_once(ARGUS_LOG_INFO, "stackxchg-off", "host stacks off (ARGUS_STACKS=off)");
        return -ECANCELED;
    }
    argus_hoststack_set_min_ms((uint32_t)cfg.stacks_min_ms);
    stackxchg.comm = comm;
    stackxchg.rank = rank;
    if (MPI_Comm_size(comm, &stackxchg.size) != MPI_SUCCESS)
        stackxchg.size = 1;
    if (rank == 0) {
        if (argus_stackset_init(&stackxchg.set, ARGUS_STACKXCHG_MAX) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "stackxchg-mem", "host stacks off: no memory");
            return -ENOMEM;
        }
        stackxchg.rep = rep;
        rep->stacks = &stackxchg.set;
    }
    int rc = argus_hoststack_start(1);
    if (rc != 0)
        return rc; /* said once; rank 0 still takes in the others' samples */
    stackxchg.on = 1;
    return 0;
}

/* Rank 0: whether the latest analysis names rank as a source of a host_stall. */
static int known_source(uint32_t rank)
{
    const struct argus_result *res = stackxchg.rep ? &stackxchg.rep->res : NULL;
    return res && res->ranks && rank < res->n_ranks && res->ranks[rank].rank == rank &&
           (res->ranks[rank].flags & (1u << ARGUS_AK_HOST_STALL));
}

/* Rank 0: whether the stall of r at step s gets its peers asked: once per stall (r, s);
 * at once when a host_stall verdict names r, else at most once per UNKNOWN_GAP_MS (before
 * any verdict the first stalls still get a view of their peers; a flood does not). */
static int should_ask(uint32_t r, uint64_t s)
{
    for (unsigned i = 0; i < ASKED && i < stackxchg.n_asked; i++)
        if (stackxchg.asked_rank[i] == r && stackxchg.asked_step[i] == s)
            return 0;
    if (!known_source(r)) {
        const uint64_t now = argus_clock_monotonic_ns();
        if (stackxchg.unknown_at && now - stackxchg.unknown_at < UNKNOWN_GAP_MS * 1000000ull)
            return 0;
        stackxchg.unknown_at = now;
    }
    stackxchg.asked_rank[stackxchg.n_asked % ASKED] = r;
    stackxchg.asked_step[stackxchg.n_asked % ASKED] = s;
    stackxchg.n_asked++;
    return 1;
}

/* Rank 0: a stall sample of rank r at step s came in: ask two healthy peers what they do
 * now, the view of the same moment (rank 0 asks itself directly). Rank 0 knows no layout
 * in band, so the peers are the nearest other ranks (r-1, r+1, r-2, ...) that no
 * host_stall verdict names as a source. */
static void ask_peers(uint32_t r, uint64_t s)
{
    const int n = stackxchg.size;
    int asked = 0;
    if (!should_ask(r, s))
        return;
    for (int d = 1; d <= n / 2 && asked < PEERS; d++) {
        for (int sign = -1; sign <= 1 && asked < PEERS; sign += 2) {
            const int p = (((int)r + sign * d) % n + n) % n;
            if (p == (int)r || (sign == 1 && d * 2 == n) || known_source((uint32_t)p))
                continue; /* itself; the opposite rank once; a stalling rank */
            asked++;
            if (p == 0) {
                if (stackxchg.on)
                    argus_hoststack_request(r, s);
                continue;
            }
            int k = 0;
            for (; k < ASKS; k++) {
                if (stackxchg.ask_busy[k]) {
                    int done = 0;
                    MPI_Test(&stackxchg.ask_req[k], &done, MPI_STATUS_IGNORE);
                    stackxchg.ask_busy[k] = !done;
                }
                if (!stackxchg.ask_busy[k])
                    break;
            }
            if (k == ASKS)
                return; /* all in flight: this one is skipped */
            argus_stackreq_encode(r, s, stackxchg.ask_buf[k]);
            if (MPI_Isend(stackxchg.ask_buf[k], ARGUS_STACKREQ_WIRE, MPI_BYTE, p, TAG_ASK,
                          stackxchg.comm, &stackxchg.ask_req[k]) == MPI_SUCCESS)
                stackxchg.ask_busy[k] = 1;
        }
    }
}

/* Rank 0: keep one sample; a stall of a rank asks its healthy peers. */
static void keep(const struct argus_stackrec *r)
{
    if (argus_stackset_add(&stackxchg.set, r) && r->why == ARGUS_STACK_WHY_STALL &&
        r->lang == ARGUS_STACK_NATIVE) /* one per signal: every sample has a native part */
        ask_peers(r->rank, r->step);
}

/* Ranks > 0: rank 0's requests. */
static int take_asks(void)
{
    int moved = 0;
    for (int i = 0; i < PER_POLL; i++) {
        int flag = 0, n = 0;
        MPI_Status st;
        uint8_t buf[ARGUS_STACKREQ_WIRE];
        uint32_t fr;
        uint64_t fs;
        if (MPI_Iprobe(0, TAG_ASK, stackxchg.comm, &flag, &st) != MPI_SUCCESS || !flag)
            break;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (MPI_Recv(buf, (int)sizeof buf, MPI_BYTE, 0, TAG_ASK, stackxchg.comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            break;
        if (n >= 0 && argus_stackreq_decode(buf, (size_t)n, &fr, &fs, NULL, 0) == 0)
            argus_hoststack_request(fr, fs);
        moved = 1;
    }
    return moved;
}

static int take_in(void)
{
    int moved = 0;
    for (int i = 0; i < PER_POLL; i++) {
        int flag = 0, n = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_STK, stackxchg.comm, &flag, &st) != MPI_SUCCESS ||
            !flag)
            break;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n < 0 || n > (int)sizeof stackxchg.rbuf) {
            MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, TAG_STK, stackxchg.comm,
                     MPI_STATUS_IGNORE); /* truncates: dropped below */
            argus_log_once(ARGUS_LOG_WARN, "stackxchg-big", "rank %d sent a host stack "
                           "sample of %d bytes; dropped", st.MPI_SOURCE, n);
            continue;
        }
        if (MPI_Recv(stackxchg.rbuf, n, MPI_BYTE, st.MPI_SOURCE, TAG_STK, stackxchg.comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            break;
        char err[160];
        if (argus_stackrec_decode(stackxchg.rbuf, (size_t)n, &stackxchg.rec, err,
                                  sizeof err) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "stackxchg-bad", "rank %d: %s; dropped",
                           st.MPI_SOURCE, err);
            continue;
        }
        stackxchg.rec.rank = (uint32_t)st.MPI_SOURCE; /* who sent it, not what it says */
        keep(&stackxchg.rec);
        moved = 1;
    }
    return moved;
}

/* Ranks > 0: the next sample out when no send is in flight. */
static int send_next(void)
{
    if (stackxchg.sending) {
        int done = 0;
        if (MPI_Test(&stackxchg.req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done)
            return 0;
        stackxchg.sending = 0;
    }
    if (!argus_hoststack_take(&stackxchg.hs))
        return 0;
    to_rec(&stackxchg.hs, &stackxchg.rec);
    long n = argus_stackrec_encode(&stackxchg.rec, stackxchg.sbuf, sizeof stackxchg.sbuf);
    if (n < 0 || MPI_Isend(stackxchg.sbuf, (int)n, MPI_BYTE, 0, TAG_STK, stackxchg.comm,
                           &stackxchg.req) != MPI_SUCCESS)
        return 0;
    stackxchg.sending = 1;
    return 1;
}

int argus_stackxchg_poll(void)
{
    if (stackxchg.rank == 0 && stackxchg.rep) {
        int moved = 0;
        while (stackxchg.on && argus_hoststack_take(&stackxchg.hs)) {
            to_rec(&stackxchg.hs, &stackxchg.rec);
            keep(&stackxchg.rec);
            moved = 1;
        }
        return take_in() | moved;
    }
    return stackxchg.on ? take_asks() | send_next() : 0;
}

void argus_stackxchg_finish(void)
{
    if (stackxchg.on)
        argus_hoststack_stop();
    if (stackxchg.rank == 0) {
        argus_stackxchg_poll();
        stackxchg.on = 0;
        for (int k = 0; k < ASKS; k++) /* requests not taken: MPI drops them at finalize */
            if (stackxchg.ask_busy[k]) {
                int done = 0;
                MPI_Test(&stackxchg.ask_req[k], &done, MPI_STATUS_IGNORE);
                if (!done)
                    MPI_Request_free(&stackxchg.ask_req[k]);
                stackxchg.ask_busy[k] = 0;
            }
        return;
    }
    const uint64_t until = argus_clock_monotonic_ns() + FLUSH_MS * 1000000ull;
    const struct timespec nap = {0, 200000};
    while (stackxchg.on && argus_clock_monotonic_ns() < until) {
        if (!send_next() && !stackxchg.sending)
            break; /* nothing left */
        nanosleep(&nap, NULL);
    }
    if (stackxchg.sending) {
        int done = 0;
        MPI_Test(&stackxchg.req, &done, MPI_STATUS_IGNORE);
        if (!done)
            MPI_Request_free(&stackxchg.req); /* MPI delivers it or drops it at finalize */
        stackxchg.sending = 0;
    }
    stackxchg.on = 0;
}

void argus_stackxchg_free(void)
{
    if (stackxchg.rep)
        stackxchg.rep->stacks = NULL;
    stackxchg.rep = NULL;
    argus_stackset_free(&stackxchg.set);
}
