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
#include "reduce/agentsleep.h"
#include "reduce/condense.h"
#include "reduce/bytebuf.h"
#include "reduce/clockkeep.h"
#include "reduce/clocksync.h"
#include "reduce/handoff.h"
#include "reduce/pull.h"
#include "reduce/recvpoll.h"
#include "reduce/rootbatch.h"
#include "reduce/stackxchg.h"
#include "reduce/testknob.h"
#include "reduce/tracereq.h"
#include "reduce/treemsg.h"
#include "tracer/tracer.h"

#define TAG_WIN 0x4157
#define GRACE_MS 2000              /* after an abandoned finish, for rank 0's report */
/* Once rank 0's thread is past MPI and writing its final report (local work only), an
 * abandoned finish waits this much longer for it rather than leave a report half
 * rewritten (some files from the last window, some from the one before). */
#define WRITE_GRACE_MS 20000
/* The Argus thread's sleep between rounds is agentsleep.h's; this file says when it is
 * busy and the earliest deadline it owns (next_due). */
#define RESERVE_MAX ((size_t)8 << 20) /* first window buffer's initial capacity, at most */

struct child {
    int rank;
    uint64_t got;      /* windows delivered (highest window id + 1) */
    int final, missing;
    struct argus_recv rx; /* its next message */
    uint64_t heard;       /* monotonic ns of its last message (silence: treemsg.h) */
};

static struct {
    struct argus_agent_opts o;
    int *kids;
    pthread_t th;
    int thread_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* thread -> MPI_Finalize thread: done */
    atomic_int abort_now;
    atomic_int r0_writing;    /* rank 0's thread: past MPI, writing the final report */
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
    int mute;                       /* test knob MUTE_RANK (testknob.h) names this rank */
    int deaf;                       /* test knob DEAF_PULL_RANK: never answers a pull */
    int condense;                   /* this node condenses (reduce/condense.h) */
    int hold;                       /* ... and holds extreme cells for rank 0 (pull.h) */
    struct argus_condense cd;
    struct argus_pull pull;         /* rank 0 and holding children */
    struct argus_rootbatch rb;      /* rank 0: the batch being condensed around a pull */
    uint64_t final_at;              /* monotonic ns the final window went up */
    uint64_t bytes_in;              /* bytes of window messages received (reduce.json) */
    double thread_cpu_s;            /* the Argus thread's CPU time (reduce.json) */
    uint64_t sent_at;               /* monotonic ns the last message went up (keep_alive) */
    uint64_t checked_at;            /* monotonic ns keep_alive last ran */
    uint64_t miss_reported;         /* rank 0: r0->windows_with_miss at its last report */
    int news;                       /* this round: more than a sign of life came */
    struct argus_agentsleep sleep;  /* backoff, when something last happened (agentsleep.h) */
} agent;

/* ---- application side (the ring itself is handoff.c) ------------------------------ */

void argus_agent_push_summary(const struct argus_step_summary *s)
{
    argus_handoff_push_summary(s, atomic_load(&agent.offset));
}

void argus_agent_push_name(uint64_t hash, const char *name)
{
    argus_handoff_push_name(hash, name);
}

void argus_agent_push_rankinfo(const struct argus_rank_info *ri)
{
    argus_handoff_push_rankinfo(ri);
}

/* ---- the exchange (Argus thread) --------------------------------------------------- */

/* Take the oldest ready window into the outbox. 1 when one was taken. */
static int take_window(void)
{
    struct argus_handoff_win hw;

    if (!argus_handoff_pop(&hw))
        return 0;
    uint64_t w = hw.window;
    if (argus_bytebuf_append(&agent.out, hw.data, hw.len) != 0)
        argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                       "summaries is lost", agent.o.rank);
    agent.t_ready[w % 64] = argus_clock_monotonic_ns();
    agent.first_step[w % 64] = hw.has_first ? hw.first_step : agent.last_step + 1;
    if (hw.has_first)
        agent.last_step = hw.first_step + (uint64_t)agent.o.window - 1;
    agent.own_taken = w + 1;
    if (hw.final)
        agent.own_final = 1;
    argus_handoff_release(&hw);
    return 1;
}

/* Rank 0: which ranks' windows never came; expanded to subtrees by rank0.c. */
static void root_mark(uint32_t rank, uint64_t window)
{
    uint64_t step = window < agent.own_taken && window + 64 > agent.own_taken
                        ? agent.first_step[window % 64] : agent.last_step + 1;
    argus_rank0_mark_missing(agent.o.r0, rank, step, window);
}

static void add_miss(uint32_t rank, uint64_t window)
{
    if (agent.o.parent < 0) {
        root_mark(rank, window);
        return;
    }
    struct argus_treemsg_miss m = {.rank = rank, .window = window};
    if (argus_bytebuf_append(&agent.miss, &m, sizeof m) != 0)
        argus_log_once(ARGUS_LOG_WARN, "miss-oom", "out of memory for missing-rank marks");
}

/* Parse one message from child c into the outbox. */
static void child_message(struct child *c)
{
    struct argus_treemsg m;
    char err[160];

    if (argus_treemsg_parse(c->rx.buf.p, c->rx.buf.len, &m) != 0) {
        argus_log_once(ARGUS_LOG_WARN, "bad-msg", "rank %d: a damaged window message from "
                       "rank %d was dropped", agent.o.rank, c->rank);
        return;
    }
    if (!(m.flags & ARGUS_TREEMSG_ALIVE) && m.window + 1 > c->got)
        c->got = m.window + 1;
    if (m.flags & ARGUS_TREEMSG_FINAL)
        c->final = 1;
    for (uint32_t i = 0; i < m.nmissing; i++) {
        struct argus_treemsg_miss x = argus_treemsg_miss_at(&m, i);
        add_miss(x.rank, x.window);
    }
    if (!(m.flags & ARGUS_TREEMSG_ALIVE))
        agent.news = 1; /* more may follow soon: poll fast again (run_loop) */
    agent.bytes_in += c->rx.buf.len;
    if (m.agg_len && agent.o.parent < 0) { /* merged when its batch begins (rootbatch.h) */
        argus_pull_holder(&agent.pull, (int)(c - agent.ch));
        if (agent.condense && argus_rootbatch_add_agg(&agent.rb, m.agg, m.agg_len) != 0)
            argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                           "summaries is lost", agent.o.rank);
    } else if (m.agg_len && (!agent.condense || argus_condense_merge(&agent.cd, m.agg, m.agg_len,
                                                                  err, sizeof err) != 0)) {
        argus_log_once(ARGUS_LOG_WARN, "bad-agg",
                       "rank %d: a window aggregate from rank %d "
                       "was dropped (%s)",
                       agent.o.rank, c->rank, agent.condense ? err : "unexpected");
    }
    if (argus_bytebuf_append(&agent.out, m.recs, m.recs_len) != 0)
        argus_log_once(ARGUS_LOG_WARN, "out-oom", "rank %d: out of memory; a window of "
                       "summaries is lost", agent.o.rank);
}

/* Post or complete the receive of each child. 1 when something arrived. */
static int progress_children(void)
{
    int any = 0;

    for (int i = 0; i < agent.o.nchildren; i++) {
        struct child *c = &agent.ch[i];
        if (c->final)
            continue;
        if (argus_recv_poll(&c->rx, c->rank, TAG_WIN, agent.o.comm) != 1)
            continue;
        c->heard = argus_clock_monotonic_ns();
        child_message(c);
        any = 1;
    }
    return any;
}

static void root_finish(int final);

/* The send in flight; rank 0: its pull; a holding child: rank 0's asks. */
static void progress_send(void)
{
    if (agent.hold && !agent.deaf)
        argus_pull_serve(&agent.pull, &agent.cd);
    if (agent.o.parent < 0) {
        if (agent.condense && argus_rootbatch_poll(&agent.rb, argus_clock_monotonic_ns())) {
            agent.sending = 0; /* answered, or too late */
            root_finish(0);
        }
        return;
    }
    if (!agent.sending)
        return;
    int done = 0;
    if (MPI_Test(&agent.sreq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "send-fail", "rank %d: a window send failed",
                       agent.o.rank);
        done = 1;
    }
    if (done)
        agent.sending = 0;
}

/* Rank 0: the ready batch into the job store (condensed: its own final flag counts). */
static void root_finish(int final)
{
    if (agent.condense) {
        final = argus_rootbatch_deliver(&agent.rb, agent.o.r0);
    } else {
        argus_rank0_ingest(agent.o.r0, agent.out.p, agent.out.len);
        agent.out.len = 0;
        if (!final)
            argus_rank0_report(agent.o.r0, 0);
    }
    if (final)
        agent.sent_final = 1;
}

/* Rank 0: the outbox into the job store; when condensing, in two steps around a pull
 * from the holding children (rootbatch.h). A pull in flight counts as a send in flight:
 * later windows wait in the outbox (children's messages keep arriving there). */
static void root_ship(int final)
{
    if (agent.sending) {
        agent.fwd_pending = 1 + final;
        return;
    }
    agent.fwd_pending = 0;
    const uint64_t dl = argus_clock_monotonic_ns() + (uint64_t)agent.o.deadline_ms * 1000000ull;
    if (agent.condense && argus_rootbatch_begin(&agent.rb, &agent.out, final, dl)) {
        agent.sending = 1;
        return;
    }
    root_finish(final);
}

/* Rank 0 abandoning the exchange: a pull in flight ends now with what answered. */
static void root_no_wait(void)
{
    if (agent.o.parent >= 0 || !agent.sending)
        return;
    argus_rootbatch_poll(&agent.rb, UINT64_MAX);
    agent.sending = 0;
    root_finish(0);
}

/* Ship the outbox (condensed first when condensing): to the parent (one send in flight;
 * later windows wait in the outbox and go together) or, on rank 0, into the job store. */
static void ship(int final)
{
    const uint8_t *recs = agent.out.p;
    size_t nrecs = agent.out.len;
    uint64_t bad = 0;
    if (agent.o.parent < 0) {
        root_ship(final);
        return;
    }
    if (agent.condense && !agent.sending) { /* reduce/condense.h */
        if (argus_condense_run(&agent.cd, agent.out.p, agent.out.len,
                               agent.hold ? ARGUS_CONDENSE_HOLD : ARGUS_CONDENSE_UP, &bad)
            || bad)
            argus_log_once(ARGUS_LOG_WARN, "condense", "rank %d: %s while condensing a "
                           "window", agent.o.rank, bad ? "damaged records skipped" : "out of "
                           "memory: its summaries are lost");
        recs = agent.cd.out;
        nrecs = agent.cd.outlen;
        agent.out.len = 0;
    }
    if (agent.sending) {
        agent.fwd_pending = 1 + final;
        return;
    }
    if (agent.mute) { /* test knob: a rank that stops sending */
        agent.out.len = agent.miss.len = 0;
        agent.fwd_pending = 0;
        agent.sent_final = final;
        return;
    }
    struct argus_treemsg m = {
        .flags = (uint16_t)(final ? ARGUS_TREEMSG_FINAL : 0),
        .window = agent.fwd_next ? agent.fwd_next - 1 : 0,
        .miss = (const struct argus_treemsg_miss *)(const void *)agent.miss.p,
        .nmissing = (uint32_t)(agent.miss.len / sizeof(struct argus_treemsg_miss)),
        .agg = agent.cd.enc, .agg_len = agent.condense ? agent.cd.enclen : 0,
        .recs = recs, .recs_len = nrecs};
    if (argus_treemsg_build(&agent.send, &m) != 0)
        argus_log_once(ARGUS_LOG_WARN, "send-oom", "rank %d: a window is too large or out of "
                       "memory; it is lost", agent.o.rank);
    agent.miss.len = 0;
    agent.out.len = 0;
    agent.fwd_pending = 0;
    if (MPI_Isend(agent.send.p, (int)agent.send.len, MPI_BYTE, agent.o.parent, TAG_WIN,
                  agent.o.comm, &agent.sreq)
        != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "send-fail", "rank %d: a window send failed",
                       agent.o.rank);
        return;
    }
    agent.sending = 1;
    agent.sent_at = argus_clock_monotonic_ns();
    if (final) {
        agent.sent_final = 1;
        agent.final_at = argus_clock_monotonic_ns();
    }
}

/* Forward own window fwd_next once every live child delivered it or its deadline
 * passed (late children are marked missing and not waited on again). */
static void try_forward(uint64_t now)
{
    if (agent.fwd_pending && !agent.sending) {
        ship(agent.fwd_pending == 2);
        return;
    }
    while (agent.fwd_next < agent.own_taken && !agent.sent_final) {
        uint64_t w = agent.fwd_next;
        int last = agent.own_final && w + 1 == agent.own_taken;
        uint64_t dl = agent.t_ready[w % 64] +
                      (uint64_t)agent.o.deadline_ms * 1000000ull * (uint64_t)agent.o.height;
        int waiting = 0;
        for (int i = 0; i < agent.o.nchildren; i++) {
            struct child *c = &agent.ch[i];
            if (c->missing || c->final)
                continue;
            if (c->got > w && !last)
                continue;
            waiting = 1;
        }
        if (waiting && now < dl && !atomic_load(&agent.abort_now))
            return;
        for (int i = 0; i < agent.o.nchildren; i++) {
            struct child *c = &agent.ch[i];
            if (c->missing || c->final || (c->got > w && !last))
                continue;
            c->missing = 1;
            argus_pull_forget(&agent.pull, i);
            add_miss((uint32_t)c->rank, c->got);
            argus_log(ARGUS_LOG_WARN, "rank %d: rank %d (and the ranks below it) sent nothing "
                      "for window %llu within the deadline; marked missing", agent.o.rank,
                      c->rank, (unsigned long long)c->got);
        }
        agent.fwd_next = w + 1;
        ship(last);
    }
}

/* A transfer in flight or an own window waiting for the children's (agentsleep.h: the
 * sleep is then at most its POLL_MAX). */
static int thread_busy(void)
{
    int busy = agent.sending || agent.fwd_pending || agent.fwd_next < agent.own_taken;
    for (int i = 0; i < agent.o.nchildren; i++)
        busy |= agent.ch[i].rx.posted;
    return busy;
}

/* The earliest deadline this thread keeps (monotonic ns; UINT64_MAX: none): a sign of
 * life due, a child's silence, an own window's wait, rank 0's held report files. */
static uint64_t next_due(void)
{
    uint64_t due = UINT64_MAX; /* monotonic ns */
    if (agent.o.parent >= 0 && !agent.sent_final && !agent.mute && !agent.sending &&
        !agent.fwd_pending) /* else keep_alive waits for the send: polled, above */
        due = agent.sent_at + argus_treemsg_alive_ns(agent.o.silence_ms);
    const uint64_t silent = argus_treemsg_silent_ns(agent.o.silence_ms);
    for (int i = 0; i < agent.o.nchildren; i++) {
        const struct child *c = &agent.ch[i];
        if (!c->missing && !c->final && c->heard + silent < due)
            due = c->heard + silent;
    }
    if (agent.fwd_next < agent.own_taken) {
        const uint64_t dl = agent.t_ready[agent.fwd_next % 64] +
                            (uint64_t)agent.o.deadline_ms * 1000000ull * (uint64_t)agent.o.height;
        due = dl < due ? dl : due;
    }
    if (agent.o.parent < 0) { /* rank 0: held report files (rank0.h, reportpace.h) */
        const uint64_t held = argus_rank0_report_due(agent.o.r0);
        due = held < due ? held : due;
    }
    return due;
}

/* Silence (treemsg.h; docs/ALGORITHMS.md, "Missing data"): a child not heard from at all
 * for argus_treemsg_silent_ns is marked missing from its first window not delivered,
 * whether or not an own window is due (a rank killed outright while the others wait on it
 * in the application: no window comes from anyone, only signs of life from the living). A
 * sign of life with the marks gathered goes up when nothing else did for
 * argus_treemsg_alive_ns. Rank 0 rewrites its report when marks came in since it last
 * wrote one, so that a job that hangs after a rank died names that rank. */
static void keep_alive(uint64_t now)
{
    const uint64_t silent = argus_treemsg_silent_ns(agent.o.silence_ms);
    /* Time this thread itself was away (a report written on rank 0, fsync, a descheduled
     * thread on an oversubscribed node) is no child's silence: it did not listen then. */
    const uint64_t slack = (uint64_t)argus_agentsleep_idle_cap_ns(&agent.sleep) +
                           ARGUS_AGENTSLEEP_POLL_MAX_NS; /* longest planned sleep */
    const uint64_t away = agent.checked_at && now > agent.checked_at + slack
                              ? now - agent.checked_at - slack
                              : 0;
    agent.checked_at = now;

    for (int i = 0; i < agent.o.nchildren; i++) {
        struct child *c = &agent.ch[i];
        if (away)
            c->heard = c->heard + away < now ? c->heard + away : now;
        if (c->missing || c->final || now <= c->heard || now - c->heard <= silent)
            continue;
        c->missing = 1;
        argus_pull_forget(&agent.pull, i);
        add_miss((uint32_t)c->rank, c->got);
        argus_log(ARGUS_LOG_WARN, "rank %d: rank %d (and the ranks below it) sent nothing, "
                  "not even a sign of life, for %llu ms; marked missing from window %llu",
                  agent.o.rank, c->rank, (unsigned long long)(silent / 1000000ull),
                  (unsigned long long)c->got);
    }
    if (agent.o.parent < 0) {
        if (agent.o.r0->windows_with_miss != agent.miss_reported) {
            agent.miss_reported = agent.o.r0->windows_with_miss;
            argus_rank0_report(agent.o.r0, 0);
        }
        return;
    }
    /* marks waiting go up at once (a launcher may kill the whole job a second after one
     * rank died: Slurm's mpi/pmix does), else a sign of life when one is due */
    if (agent.sending || agent.fwd_pending || agent.sent_final || agent.mute ||
        (agent.miss.len == 0 && now - agent.sent_at < argus_treemsg_alive_ns(agent.o.silence_ms)))
        return;
    struct argus_treemsg m = {
        .flags = ARGUS_TREEMSG_ALIVE,
        .window = agent.fwd_next ? agent.fwd_next - 1 : 0,
        .miss = (const struct argus_treemsg_miss *)(const void *)agent.miss.p,
        .nmissing = (uint32_t)(agent.miss.len / sizeof(struct argus_treemsg_miss))};
    agent.sent_at = now;
    if (argus_treemsg_build(&agent.send, &m) != 0 ||
        MPI_Isend(agent.send.p, (int)agent.send.len, MPI_BYTE, agent.o.parent, TAG_WIN,
                  agent.o.comm, &agent.sreq) != MPI_SUCCESS)
        return; /* the next one, or the next window, tries again; the marks wait */
    agent.miss.len = 0;
    agent.sending = 1;
}

/* Done; a holding child also once rank 0 pulled its last batch, or when rank 0 has had
 * every deadline for that (pull.h). */
static int finished(void)
{
    if (!agent.sent_final || agent.sending || agent.fwd_pending)
        return 0;
    return !agent.hold || argus_pull_released(&agent.pull) ||
           argus_clock_monotonic_ns() - agent.final_at >
               (uint64_t)agent.o.deadline_ms * 1000000ull * (uint64_t)(agent.o.height + 3);
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
    argus_agentsleep_restart(&agent.sleep);
    agent.sent_at = argus_clock_monotonic_ns();
    agent.checked_at = 0;
    for (int i = 0; i < agent.o.nchildren; i++)
        agent.ch[i].heard = agent.sent_at;
    while (!finished()) {
        if (threaded) /* steps the GPU collector found by itself wait in the tracer */
            argus_tracer_deliver();
        agent.news = 0;
        int any = take_window();
        const int got = progress_children(); /* a sign of life alone sets got, not news */
        progress_send();
        try_forward(argus_clock_monotonic_ns());
        keep_alive(argus_clock_monotonic_ns());
        if (agent.o.parent < 0) /* the provisional report's files, when held and due */
            (void)argus_rank0_report_held(agent.o.r0, argus_clock_monotonic_ns());
        progress_send(); /* a small send is often done at once: no wake-up just for it */
        if (threaded) { /* keep the clock offset current; L4 trace requests */
            any |= argus_clockkeep_poll();
            atomic_store(&agent.offset, argus_clockkeep_offset());
            any |= argus_tracereq_poll(atomic_load(&agent.offset), 0);
            any |= argus_stackxchg_poll(); /* host call stacks to rank 0 */
        }
        if (until && argus_clock_monotonic_ns() >= until)
            atomic_store(&agent.abort_now, 1);
        if (atomic_load(&agent.abort_now))
            break;
        any |= agent.news;
        if (any || got) { /* again at once; poll fast after, unless a sign of life alone */
            if (any)
                argus_agentsleep_news(&agent.sleep, argus_clock_monotonic_ns());
            continue;
        }
        if (threaded) { /* sleep until a window, a kick, or the next poll or deadline */
            const uint64_t now = argus_clock_monotonic_ns();
            argus_handoff_wait(argus_agentsleep_next_ns(&agent.sleep, now, thread_busy(),
                                                        next_due()));
        } else {
            struct timespec ts = {0, ARGUS_AGENTSLEEP_POLL_NS / 4};
            nanosleep(&ts, NULL);
        }
    }
    if (!finished()) {
        /* Abandoned: leave requests to MPI, and let rank 0 report what it holds. */
        for (int i = 0; i < agent.o.nchildren; i++) {
            struct child *c = &agent.ch[i];
            if (!c->final && !c->missing) {
                c->missing = 1;
                argus_pull_forget(&agent.pull, i);
                add_miss((uint32_t)c->rank, c->got);
            }
            argus_recv_abandon(&c->rx);
        }
        if (agent.sending && agent.o.parent >= 0)
            MPI_Request_free(&agent.sreq);
        root_no_wait();
        agent.sending = 0;
        if (agent.o.parent < 0 && !agent.sent_final)
            ship(1);
        root_no_wait();
    }
    argus_tracereq_finish(atomic_load(&agent.offset), threaded && !atomic_load(&agent.abort_now));
    argus_clockkeep_free();
    if (threaded)
        argus_stackxchg_finish(); /* rank 0: before its final report */
    if (agent.o.parent < 0) {
        atomic_store(&agent.r0_writing, 1);
        const double slow_ms = argus_testknob(ARGUS_KNOB_SLOW_REPORT_MS);
        if (slow_ms > 0) { /* test knob: a final report that takes long to write */
            const long ms = (long)slow_ms;
            struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
                                  .tv_nsec = (ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        agent.thread_cpu_s = thread_cpu_s();
        argus_rank0_report(agent.o.r0, 1);
        agent.o.r0->spilled_windows = argus_handoff_spilled();
        argus_rank0_write_reduce_json(agent.o.r0, threaded ? agent.thread_cpu_s : -1.0,
                                      argus_handoff_dropped(),
                                      agent.bytes_in + agent.pull.bytes_in);
        argus_rank0_close(agent.o.r0);
    }
    if (threaded)
        argus_stackxchg_free();
}

/* The start-up clock offset (clocksync.h); with keep, kept current after (clockkeep.h). */
static void sync_clock(int keep)
{
    int64_t off = 0;
    if (agent.o.parent < 0 && agent.o.nchildren == 0)
        return;
    if (argus_clocksync_run(agent.o.comm, agent.o.parent, agent.kids, agent.o.nchildren, 16,
                            agent.o.deadline_ms, &off) == 0)
        atomic_store(&agent.offset, off);
    if (keep)
        argus_clockkeep_init(agent.o.comm, agent.o.parent, off, agent.o.clock_sync_ms);
}

static void *agent_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "argus-reduce"); /* for ps, top, the tests */
    sync_clock(1);
    run_loop(1, 0);
    agent.thread_cpu_s = thread_cpu_s();
    pthread_mutex_lock(&agent.mu);
    agent.done = 1;
    pthread_cond_broadcast(&agent.cv);
    pthread_mutex_unlock(&agent.mu);
    return NULL;
}

int argus_agent_start(const struct argus_agent_opts *o)
{
    int rc = -ENOMEM;
    /* The first window buffer starts with room for window summaries of 64 modes, up to
     * RESERVE_MAX: a long window grows at summary boundaries, as far as it needs. */
    size_t reserve = argus_summary_encoded_max(64);
    reserve = (size_t)o->window < RESERVE_MAX / reserve ? (size_t)o->window * reserve
                                                         : RESERVE_MAX;

    memset(&agent, 0, sizeof agent);
    agent.o = *o;
    pthread_mutex_init(&agent.mu, NULL);
    pthread_cond_init(&agent.cv, NULL);
    agent.kids = calloc((size_t)(o->nchildren + 1), sizeof *agent.kids);
    agent.ch = calloc((size_t)(o->nchildren + 1), sizeof *agent.ch);
    if (!agent.kids || !agent.ch)
        goto fail;
    for (int i = 0; i < o->nchildren; i++) {
        agent.kids[i] = o->children[i];
        agent.ch[i].rank = o->children[i];
    }
    agent.o.children = agent.kids;
    argus_agentsleep_init(&agent.sleep, o->silence_ms, o->deadline_ms);
    agent.condense = o->condense && (o->nchildren > 0 || o->parent < 0);
    agent.hold = agent.condense && o->parent == 0;
    argus_rootbatch_init(&agent.rb, &agent.cd, &agent.pull);
    if ((agent.condense && argus_condense_init(&agent.cd, (uint32_t)o->size) != 0) ||
        argus_pull_init(&agent.pull, o->comm, o->parent < 0 ? agent.kids : NULL,
                        o->parent < 0 ? o->nchildren : 0, agent.hold ? 0 : -1) != 0 ||
        argus_handoff_init(o->window, o->rank, reserve) != 0)
        goto fail;
    agent.mute = o->rank > 0 && argus_testknob(ARGUS_KNOB_MUTE_RANK) == (double)o->rank;
    agent.deaf = o->rank > 0 && argus_testknob(ARGUS_KNOB_DEAF_PULL_RANK) == (double)o->rank;
    return 0;
fail:
    argus_condense_free(&agent.cd);
    argus_pull_free(&agent.pull);
    free(agent.kids);
    free(agent.ch);
    memset(&agent, 0, sizeof agent);
    return rc;
}

int argus_agent_go(void)
{
    int rc = 0;

    if (agent.o.threaded) {
        /* host call stacks (before the thread, which alone polls them after) */
        (void)argus_stackxchg_start(agent.o.comm, agent.o.rank,
                                    agent.o.r0 ? &agent.o.r0->pl.rep : NULL);
        rc = -pthread_create(&agent.th, NULL, agent_main, NULL);
        if (rc == 0) {
            agent.thread_on = 1;
            return 0;
        }
        argus_stackxchg_finish(); /* no Argus thread to carry them */
        argus_stackxchg_free();
        agent.o.threaded = 0;
    }
    /* Nothing is consumed before MPI_Finalize: windows past the ring wait on local disk. */
    if (argus_handoff_spill_to_file() != 0)
        argus_log_once(ARGUS_LOG_WARN, "spill-open", "rank %d: no node-local file for "
                       "windows; they wait in memory", agent.o.rank);
    sync_clock(0);
    return rc;
}

static void agent_free(void)
{
    argus_handoff_free();
    for (int i = 0; i < agent.o.nchildren && agent.ch; i++)
        free(agent.ch[i].rx.buf.p);
    free(agent.kids);
    free(agent.ch);
    free(agent.out.p);
    free(agent.send.p);
    free(agent.miss.p);
    argus_rootbatch_free(&agent.rb);
    argus_condense_free(&agent.cd);
    argus_pull_free(&agent.pull);
    pthread_mutex_destroy(&agent.mu);
    pthread_cond_destroy(&agent.cv);
    memset(&agent, 0, sizeof agent);
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
    while (!agent.done)
        if (pthread_cond_timedwait(&agent.cv, &agent.mu, &ts) == ETIMEDOUT)
            break;
    return agent.done;
}

int argus_agent_finish(void)
{
    uint64_t t0 = argus_clock_realtime_ns();

    argus_handoff_close();

    if (!agent.thread_on) {
        /* No Argus thread: run the exchange here, for at most finalize_ms; then abandon
         * it as the threaded path does. */
        run_loop(0, argus_clock_monotonic_ns() + (uint64_t)agent.o.finalize_ms * 1000000ull);
        agent_free();
        return 0;
    }
    pthread_mutex_lock(&agent.mu);
    int ok = wait_done_locked(t0 + (uint64_t)agent.o.finalize_ms * 1000000ull);
    if (!ok) {
        atomic_store(&agent.abort_now, 1);
        argus_handoff_kick(); /* wake the thread from its wait for a window */
        argus_log(ARGUS_LOG_WARN, "rank %d: Argus's last exchange took longer than %ld ms; "
                  "abandoned", agent.o.rank, agent.o.finalize_ms);
        ok = wait_done_locked(argus_clock_realtime_ns() + GRACE_MS * 1000000ull);
        if (!ok && atomic_load(&agent.r0_writing)) {
            argus_log(ARGUS_LOG_WARN, "rank 0: still writing the final report; waiting up to "
                      "%d ms more for it", WRITE_GRACE_MS);
            ok = wait_done_locked(argus_clock_realtime_ns() + WRITE_GRACE_MS * 1000000ull);
        }
    }
    pthread_mutex_unlock(&agent.mu);
    if (!ok) {
        pthread_detach(agent.th); /* stuck inside MPI: leave it, never hang the app */
        return -ETIMEDOUT;
    }
    pthread_join(agent.th, NULL);
    agent.thread_on = 0;
    /* the finish's share of Argus's fixed cost (bench/overhead.py reads it) */
    argus_log(ARGUS_LOG_INFO, "rank %d: last exchange took %.1f ms", agent.o.rank,
              (double)(argus_clock_realtime_ns() - t0) / 1e6);
    agent_free();
    return 0;
}
