/* agent.c — the Argus thread (agent.h): windows from the hand-off ring (handoff.h),
 * non-blocking exchange up the tree (condensed when the job is large: reduce/condense.h) with
 * per-window deadlines, missing-rank marks, bounded finish. Only this thread touches the
 * private communicator once started (or the MPI_Finalize thread, inline, when
 * MPI_THREAD_MULTIPLE was refused). Must never abort, exit or wait unboundedly. */
#include "reduce/agent.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "reduce/condense.h"
#include "reduce/bytebuf.h"
#include "reduce/clockkeep.h"
#include "reduce/clocksync.h"
#include "reduce/handoff.h"
#include "reduce/pull.h"
#include "reduce/recvpoll.h"
#include "reduce/rootbatch.h"
#include "reduce/tracereq.h"
#include "reduce/treemsg.h"
#include "tracer/tracer.h"

#define TAG_WIN 0x4157
#define GRACE_MS 2000              /* after an abandoned finish, for rank 0's report */
#define POLL_NS 1000000L           /* poll period of the Argus thread while busy */
#define POLL_MAX_NS 16000000L      /* ... and at most this when idle */

struct child {
    int rank;
    uint64_t got;      /* windows delivered (highest window id + 1) */
    int final, missing;
    struct argus_recv rx; /* its next message */
};

static struct {
    struct argus_agent_opts o;
    int *kids;
    pthread_t th;
    int thread_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* thread -> MPI_Finalize thread: done */
    atomic_int abort_now;
    int done;
    _Atomic int64_t offset;

    /* Argus thread only */
    struct child *ch;
    struct argus_bytebuf out, send, miss;
    uint64_t own_taken, fwd_next;   /* own windows popped / forwarded */
    uint64_t t_ready[64];           /* monotonic time own window w was popped, [w % 64] */
    uint64_t first_step[64];        /* rank 0: first step of own window w, [w % 64] */
    uint64_t last_step;
    int own_final, sent_final;
    MPI_Request sreq;
    int sending;
    int fwd_pending;
    int mute;                       /* ARGUS_TEST_MUTE_RANK names this rank */
    int deaf;                       /* ARGUS_TEST_DEAF_PULL_RANK: never answers a pull */
    int condense;                   /* this node condenses (reduce/condense.h) */
    int hold;                       /* ... and holds extreme cells for rank 0 (pull.h) */
    struct argus_condense cd;
    struct argus_pull pull;         /* rank 0 and holding children */
    struct argus_rootbatch rb;      /* rank 0: the batch being condensed around a pull */
    uint64_t final_at;              /* monotonic ns the final window went up */
    struct argus_agent_stats st;
} ag;

/* ---- application side (the ring itself is handoff.c) ------------------------------ */

void argus_agent_push_summary(const struct argus_step_summary *s)
{
    argus_handoff_push_summary(s, atomic_load(&ag.offset));
}

void argus_agent_push_name(uint64_t hash, const char *name)
{
    argus_handoff_push_name(hash, name);
}

void argus_agent_push_rankinfo(const struct argus_rank_info *ri)
{
    argus_handoff_push_rankinfo(ri);
}

int64_t argus_agent_clock_offset(void)
{
    return atomic_load(&ag.offset);
}

/* ---- the exchange (Argus thread) --------------------------------------------------- */

/* Take the oldest ready window into the outbox. 1 when one was taken. */
static int take_window(void)
{
    struct argus_handoff_win hw;

    if (!argus_handoff_pop(&hw))
        return 0;
    uint64_t w = hw.window;
    if (argus_bytebuf_append(&ag.out, hw.data, hw.len) != 0)
        argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                       "summaries is lost", ag.o.rank);
    ag.t_ready[w % 64] = argus_clock_monotonic_ns();
    ag.first_step[w % 64] = hw.has_first ? hw.first_step : ag.last_step + 1;
    if (hw.has_first)
        ag.last_step = hw.first_step + (uint64_t)ag.o.window - 1;
    ag.own_taken = w + 1;
    if (hw.final)
        ag.own_final = 1;
    argus_handoff_release(&hw);
    return 1;
}

/* Rank 0: which ranks' windows never came; expanded to subtrees by rank0.c. */
static void root_mark(uint32_t rank, uint64_t window)
{
    uint64_t step = window < ag.own_taken && window + 64 > ag.own_taken
                        ? ag.first_step[window % 64] : ag.last_step + 1;
    argus_rank0_mark_missing(ag.o.r0, rank, step, window);
}

static void add_miss(uint32_t rank, uint64_t window)
{
    ag.st.missing_marked++;
    if (ag.o.parent < 0) {
        root_mark(rank, window);
        return;
    }
    struct argus_treemsg_miss m = {.rank = rank, .window = window};
    if (argus_bytebuf_append(&ag.miss, &m, sizeof m) != 0)
        argus_log_once(ARGUS_LOG_WARN, "miss-oom", "out of memory for missing-rank marks");
}

/* Parse one message from child c into the outbox. */
static void child_message(struct child *c)
{
    struct argus_treemsg m;
    char err[160];

    if (argus_treemsg_parse(c->rx.buf.p, c->rx.buf.len, &m) != 0) {
        argus_log_once(ARGUS_LOG_WARN, "bad-msg", "rank %d: a damaged window message from "
                       "rank %d was dropped", ag.o.rank, c->rank);
        return;
    }
    if (c->missing)
        ag.st.late_messages++;
    if (m.window + 1 > c->got)
        c->got = m.window + 1;
    if (m.flags & ARGUS_TREEMSG_FINAL)
        c->final = 1;
    for (uint32_t i = 0; i < m.nmissing; i++) {
        struct argus_treemsg_miss x = argus_treemsg_miss_at(&m, i);
        ag.st.missing_marked--; /* counted where it was first marked */
        add_miss(x.rank, x.window);
    }
    ag.st.bytes_in += c->rx.buf.len;
    if (m.agg_len && ag.o.parent < 0) { /* merged when its batch begins (rootbatch.h) */
        argus_pull_holder(&ag.pull, (int)(c - ag.ch));
        if (ag.condense && argus_rootbatch_add_agg(&ag.rb, m.agg, m.agg_len) != 0)
            argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                           "summaries is lost", ag.o.rank);
    } else if (m.agg_len && (!ag.condense || argus_condense_merge(&ag.cd, m.agg, m.agg_len,
                                                                  err, sizeof err) != 0)) {
        argus_log_once(ARGUS_LOG_WARN, "bad-agg", "rank %d: a window aggregate from rank %d "
                       "was dropped (%s)", ag.o.rank, c->rank, ag.condense ? err : "unexpected");
    }
    if (argus_bytebuf_append(&ag.out, m.recs, m.recs_len) != 0)
        argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                       "summaries is lost", ag.o.rank);
}

/* Post or complete the receive of each child. 1 when something arrived. */
static int progress_children(void)
{
    int any = 0;

    for (int i = 0; i < ag.o.nchildren; i++) {
        struct child *c = &ag.ch[i];
        if (c->final)
            continue;
        if (argus_recv_poll(&c->rx, c->rank, TAG_WIN, ag.o.comm) != 1)
            continue;
        child_message(c);
        any = 1;
    }
    return any;
}

static void root_finish(int final);

/* The send in flight; rank 0: its pull; a holding child: rank 0's asks. */
static void progress_send(void)
{
    if (ag.hold && !ag.deaf)
        argus_pull_serve(&ag.pull, &ag.cd);
    if (ag.o.parent < 0) {
        if (ag.condense && argus_rootbatch_poll(&ag.rb, argus_clock_monotonic_ns())) {
            ag.sending = 0; /* answered, or too late */
            root_finish(0);
        }
        return;
    }
    if (!ag.sending)
        return;
    int done = 0;
    if (MPI_Test(&ag.sreq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "send-fail", "rank %d: a window send failed",
                       ag.o.rank);
        done = 1;
    }
    if (done)
        ag.sending = 0;
}

/* Rank 0: the ready batch into the job store (condensed: its own final flag counts). */
static void root_finish(int final)
{
    if (ag.condense) {
        final = argus_rootbatch_deliver(&ag.rb, ag.o.r0);
    } else {
        argus_rank0_ingest(ag.o.r0, ag.out.p, ag.out.len);
        ag.out.len = 0;
        if (!final)
            argus_rank0_report(ag.o.r0, 0);
    }
    ag.st.windows_sent++;
    if (final)
        ag.sent_final = 1;
}

/* Rank 0: the outbox into the job store; when condensing, in two steps around a pull
 * from the holding children (rootbatch.h). A pull in flight counts as a send in flight:
 * later windows wait in the outbox (children's messages keep arriving there). */
static void root_ship(int final)
{
    if (ag.sending) {
        ag.fwd_pending = 1 + final;
        return;
    }
    ag.fwd_pending = 0;
    const uint64_t dl = argus_clock_monotonic_ns() + (uint64_t)ag.o.deadline_ms * 1000000ull;
    if (ag.condense && argus_rootbatch_begin(&ag.rb, &ag.out, final, dl)) {
        ag.sending = 1;
        return;
    }
    root_finish(final);
}

/* Rank 0 abandoning the exchange: a pull in flight ends now with what answered. */
static void root_no_wait(void)
{
    if (ag.o.parent >= 0 || !ag.sending)
        return;
    argus_rootbatch_poll(&ag.rb, UINT64_MAX);
    ag.sending = 0;
    root_finish(0);
}

/* Ship the outbox (condensed first when condensing): to the parent (one send in flight;
 * later windows wait in the outbox and go together) or, on rank 0, into the job store. */
static void ship(int final)
{
    const uint8_t *recs = ag.out.p;
    size_t nrecs = ag.out.len;
    uint64_t bad = 0;
    if (ag.o.parent < 0) {
        root_ship(final);
        return;
    }
    if (ag.condense && !ag.sending) { /* reduce/condense.h */
        if (argus_condense_run(&ag.cd, ag.out.p, ag.out.len, ag.hold ? ARGUS_CONDENSE_HOLD :
                               ARGUS_CONDENSE_UP, &bad) || bad)
            argus_log_once(ARGUS_LOG_WARN, "condense", "rank %d: %s while condensing a "
                           "window", ag.o.rank, bad ? "damaged records skipped" : "out of "
                           "memory: its summaries are lost");
        recs = ag.cd.out;
        nrecs = ag.cd.outlen;
        ag.out.len = 0;
    }
    if (ag.sending) {
        ag.fwd_pending = 1 + final;
        return;
    }
    if (ag.mute) { /* test knob: a rank that stops sending */
        ag.out.len = ag.miss.len = 0;
        ag.fwd_pending = 0;
        ag.sent_final = final;
        return;
    }
    struct argus_treemsg m = {
        .flags = (uint16_t)(final ? ARGUS_TREEMSG_FINAL : 0),
        .window = ag.fwd_next ? ag.fwd_next - 1 : 0,
        .miss = (const struct argus_treemsg_miss *)(const void *)ag.miss.p,
        .nmissing = (uint32_t)(ag.miss.len / sizeof(struct argus_treemsg_miss)),
        .agg = ag.cd.enc, .agg_len = ag.condense ? ag.cd.enclen : 0,
        .recs = recs, .recs_len = nrecs};
    if (argus_treemsg_build(&ag.send, &m) != 0)
        argus_log_once(ARGUS_LOG_WARN, "send-oom", "rank %d: a window is too large or out of "
                       "memory; it is lost", ag.o.rank);
    ag.miss.len = 0;
    ag.out.len = 0;
    ag.fwd_pending = 0;
    if (MPI_Isend(ag.send.p, (int)ag.send.len, MPI_BYTE, ag.o.parent, TAG_WIN, ag.o.comm,
                  &ag.sreq) != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "send-fail", "rank %d: a window send failed",
                       ag.o.rank);
        return;
    }
    ag.sending = 1;
    ag.st.bytes_sent += ag.send.len;
    ag.st.windows_sent++;
    if (final) {
        ag.sent_final = 1;
        ag.final_at = argus_clock_monotonic_ns();
    }
}

/* Forward own window fwd_next once every live child delivered it or its deadline
 * passed (late children are marked missing and not waited on again). */
static void try_forward(uint64_t now)
{
    if (ag.fwd_pending && !ag.sending) {
        ship(ag.fwd_pending == 2);
        return;
    }
    while (ag.fwd_next < ag.own_taken && !ag.sent_final) {
        uint64_t w = ag.fwd_next;
        int last = ag.own_final && w + 1 == ag.own_taken;
        uint64_t dl = ag.t_ready[w % 64] +
                      (uint64_t)ag.o.deadline_ms * 1000000ull * (uint64_t)ag.o.height;
        int waiting = 0;
        for (int i = 0; i < ag.o.nchildren; i++) {
            struct child *c = &ag.ch[i];
            if (c->missing || c->final)
                continue;
            if (c->got > w && !last)
                continue;
            waiting = 1;
        }
        if (waiting && now < dl && !atomic_load(&ag.abort_now))
            return;
        for (int i = 0; i < ag.o.nchildren; i++) {
            struct child *c = &ag.ch[i];
            if (c->missing || c->final || (c->got > w && !last))
                continue;
            c->missing = 1;
            argus_pull_forget(&ag.pull, i);
            add_miss((uint32_t)c->rank, c->got);
            argus_log(ARGUS_LOG_WARN, "rank %d: rank %d (and the ranks below it) sent nothing "
                      "for window %llu within the deadline; marked missing", ag.o.rank,
                      c->rank, (unsigned long long)c->got);
        }
        ag.fwd_next = w + 1;
        ship(last);
    }
}

/* Done; a holding child also once rank 0 pulled its last batch, or when rank 0 has had
 * every deadline for that (pull.h). */
static int finished(void)
{
    if (!ag.sent_final || ag.sending || ag.fwd_pending)
        return 0;
    return !ag.hold || argus_pull_released(&ag.pull) ||
           argus_clock_monotonic_ns() - ag.final_at >
               (uint64_t)ag.o.deadline_ms * 1000000ull * (uint64_t)(ag.o.height + 3);
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The exchange loop; returns when the final window is out, or abandons it on abort or
 * at `until` (monotonic ns; 0: no bound). */
static void run_loop(int threaded, uint64_t until)
{
    long idle_ns = POLL_NS;

    while (!finished()) {
        if (threaded) /* steps the GPU collector found by itself wait in the tracer */
            argus_tracer_deliver();
        int any = take_window();
        any |= progress_children();
        progress_send();
        try_forward(argus_clock_monotonic_ns());
        if (threaded) { /* keep the clock offset current; L4 trace requests */
            any |= argus_clockkeep_poll();
            atomic_store(&ag.offset, argus_clockkeep_offset());
            any |= argus_tracereq_poll(atomic_load(&ag.offset), 0);
        }
        if (until && argus_clock_monotonic_ns() >= until)
            atomic_store(&ag.abort_now, 1);
        if (atomic_load(&ag.abort_now))
            break;
        if (any) {
            idle_ns = POLL_NS;
            continue;
        }
        /* back off while idle (many ranks share a core when oversubscribed); in flight
         * transfers need progress, so never more than POLL_MAX_NS */
        idle_ns = idle_ns * 2 > POLL_MAX_NS ? POLL_MAX_NS : idle_ns * 2;
        if (threaded) {
            int busy = ag.sending || ag.fwd_next < ag.own_taken;
            for (int i = 0; i < ag.o.nchildren; i++)
                busy |= ag.ch[i].rx.posted;
            argus_handoff_wait(busy ? POLL_NS : idle_ns);
        } else {
            struct timespec ts = {0, POLL_NS / 4};
            nanosleep(&ts, NULL);
        }
    }
    if (!finished()) {
        /* Abandoned: leave requests to MPI, and let rank 0 report what it holds. */
        for (int i = 0; i < ag.o.nchildren; i++) {
            struct child *c = &ag.ch[i];
            if (!c->final && !c->missing) {
                c->missing = 1;
                argus_pull_forget(&ag.pull, i);
                add_miss((uint32_t)c->rank, c->got);
            }
            argus_recv_abandon(&c->rx);
        }
        if (ag.sending && ag.o.parent >= 0)
            MPI_Request_free(&ag.sreq);
        root_no_wait();
        ag.sending = 0;
        if (ag.o.parent < 0 && !ag.sent_final)
            ship(1);
        root_no_wait();
    }
    argus_tracereq_finish(atomic_load(&ag.offset), threaded && !atomic_load(&ag.abort_now));
    argus_clockkeep_free();
    if (ag.o.parent < 0) {
        ag.st.thread_cpu_s = thread_cpu_s();
        argus_rank0_report(ag.o.r0, 1);
        ag.o.r0->spilled_windows = argus_handoff_spilled();
        argus_rank0_write_reduce_json(ag.o.r0, threaded ? ag.st.thread_cpu_s : -1.0,
                                      argus_handoff_dropped(),
                                      ag.st.bytes_in + ag.pull.bytes_in);
        argus_rank0_close(ag.o.r0);
    }
}

/* The start-up clock offset (clocksync.h); with keep, kept current after (clockkeep.h). */
static void sync_clock(int keep)
{
    int64_t off = 0;
    if (ag.o.parent < 0 && ag.o.nchildren == 0)
        return;
    if (argus_clocksync_run(ag.o.comm, ag.o.parent, ag.kids, ag.o.nchildren, 16,
                            ag.o.deadline_ms, &off) == 0)
        atomic_store(&ag.offset, off);
    if (keep)
        argus_clockkeep_init(ag.o.comm, ag.o.parent, off, ag.o.clock_sync_ms);
}

static void *agent_main(void *arg)
{
    (void)arg;
    sync_clock(1);
    run_loop(1, 0);
    ag.st.thread_cpu_s = thread_cpu_s();
    pthread_mutex_lock(&ag.mu);
    ag.done = 1;
    pthread_cond_broadcast(&ag.cv);
    pthread_mutex_unlock(&ag.mu);
    return NULL;
}

int argus_agent_start(const struct argus_agent_opts *o)
{
    int rc = -ENOMEM;
    size_t reserve = (size_t)o->window * argus_summary_encoded_max(64);

    memset(&ag, 0, sizeof ag);
    ag.o = *o;
    pthread_mutex_init(&ag.mu, NULL);
    pthread_cond_init(&ag.cv, NULL);
    ag.kids = calloc((size_t)(o->nchildren + 1), sizeof *ag.kids);
    ag.ch = calloc((size_t)(o->nchildren + 1), sizeof *ag.ch);
    if (!ag.kids || !ag.ch)
        goto fail;
    for (int i = 0; i < o->nchildren; i++) {
        ag.kids[i] = o->children[i];
        ag.ch[i].rank = o->children[i];
    }
    ag.o.children = ag.kids;
    ag.condense = o->condense && (o->nchildren > 0 || o->parent < 0);
    ag.hold = ag.condense && o->parent == 0;
    argus_rootbatch_init(&ag.rb, &ag.cd, &ag.pull);
    if ((ag.condense && argus_condense_init(&ag.cd, (uint32_t)o->size) != 0) ||
        argus_pull_init(&ag.pull, o->comm, o->parent < 0 ? ag.kids : NULL,
                        o->parent < 0 ? o->nchildren : 0, ag.hold ? 0 : -1) != 0 ||
        argus_handoff_init(o->window, o->rank, reserve) != 0)
        goto fail;
    const char *mute = getenv("ARGUS_TEST_MUTE_RANK");
    ag.mute = mute && atoi(mute) == o->rank && o->rank > 0;
    const char *deaf = getenv("ARGUS_TEST_DEAF_PULL_RANK");
    ag.deaf = deaf && atoi(deaf) == o->rank && o->rank > 0;
    return 0;
fail:
    argus_condense_free(&ag.cd);
    argus_pull_free(&ag.pull);
    free(ag.kids);
    free(ag.ch);
    memset(&ag, 0, sizeof ag);
    return rc;
}

int argus_agent_go(void)
{
    int rc = 0;

    if (ag.o.threaded) {
        rc = -pthread_create(&ag.th, NULL, agent_main, NULL);
        if (rc == 0) {
            ag.thread_on = 1;
            return 0;
        }
        ag.o.threaded = 0;
    }
    /* Nothing is consumed before MPI_Finalize: windows past the ring wait on local disk. */
    if (argus_handoff_spill_to_file() != 0)
        argus_log_once(ARGUS_LOG_WARN, "spill-open", "rank %d: no node-local file for "
                       "windows; they wait in memory", ag.o.rank);
    sync_clock(0);
    return rc;
}

static void agent_free(void)
{
    argus_handoff_free();
    for (int i = 0; i < ag.o.nchildren && ag.ch; i++)
        free(ag.ch[i].rx.buf.p);
    free(ag.kids);
    free(ag.ch);
    free(ag.out.p);
    free(ag.send.p);
    free(ag.miss.p);
    argus_rootbatch_free(&ag.rb);
    argus_condense_free(&ag.cd);
    argus_pull_free(&ag.pull);
    pthread_mutex_destroy(&ag.mu);
    pthread_cond_destroy(&ag.cv);
    memset(&ag, 0, sizeof ag);
}

void argus_agent_abandon(void)
{
    agent_free();
}

/* Wait until done or the absolute CLOCK_REALTIME deadline; caller holds mu. */
static int wait_done_locked(uint64_t until_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(until_ns / 1000000000ull),
                          .tv_nsec = (long)(until_ns % 1000000000ull)};
    while (!ag.done)
        if (pthread_cond_timedwait(&ag.cv, &ag.mu, &ts) == ETIMEDOUT)
            break;
    return ag.done;
}

int argus_agent_finish(void)
{
    uint64_t t0 = argus_clock_realtime_ns();

    argus_handoff_close();

    if (!ag.thread_on) {
        /* No Argus thread: run the exchange here, for at most finalize_ms; then abandon
         * it as the threaded path does. */
        run_loop(0, argus_clock_monotonic_ns() + (uint64_t)ag.o.finalize_ms * 1000000ull);
        agent_free();
        return 0;
    }
    pthread_mutex_lock(&ag.mu);
    int ok = wait_done_locked(t0 + (uint64_t)ag.o.finalize_ms * 1000000ull);
    if (!ok) {
        atomic_store(&ag.abort_now, 1);
        argus_handoff_kick(); /* wake the thread from its wait for a window */
        argus_log(ARGUS_LOG_WARN, "rank %d: Argus's last exchange took longer than %ld ms; "
                  "abandoned", ag.o.rank, ag.o.finalize_ms);
        ok = wait_done_locked(argus_clock_realtime_ns() + GRACE_MS * 1000000ull);
    }
    pthread_mutex_unlock(&ag.mu);
    if (!ok) {
        pthread_detach(ag.th); /* stuck inside MPI: leave it, never hang the app */
        return -ETIMEDOUT;
    }
    pthread_join(ag.th, NULL);
    ag.thread_on = 0;
    agent_free();
    return 0;
}

void argus_agent_get_stats(struct argus_agent_stats *st)
{
    *st = ag.st;
    st->dropped_summaries = argus_handoff_dropped();
}
