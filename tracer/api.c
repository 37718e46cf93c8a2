/* api.c — the process-wide tracer behind argus.h and tracer.h: one static state that
 * forwards the application's marks and kernels to the step summariser while started.
 * Must stay a cheap no-op when not started, must never block the application thread for
 * long, never allocate per call, never exit.
 *
 * Threads: argus_tracer_start/stop (MPI_Init/Finalize thread) publish and retire the
 * summariser; argus.h calls (the step-loop thread) enter through a busy counter so that
 * stop can wait for a call in flight before freeing (a Dekker-style pair of seq_cst
 * accesses: a caller either sees active == 0 or stop sees its busy mark).
 * Summaries (and new names) go through a small fixed queue: built on the application
 * thread (argus.h replay) or on the GPU collector's drain thread, they reach
 * opts.on_summary / on_name on the application thread (argus_tracer_deliver, called at the
 * end of argus_step_end, from the NVTX step callbacks and from stop), so reduce/ never
 * sees another thread. Queuing a summary also takes what NCCL's profiler plugin recorded
 * since the previous one (nccl_profiler_stats.h) into its compact NCCL block.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/wire.h"
#include "tracer/argus.h"
#include "tracer/nccl_profiler_stats.h"

/* libargus.so links nccl_profiler_stats.c; the unit tests and benches that link this file
 * without it run as if NCCL's profiler plugin never reported (weak references, NULL). */
#pragma weak argus_nccl_step_stats
#pragma weak argus_nccl_compact
#include "tracer/ring.h"
#include "tracer/tracer.h"

#define TRACER_MAX_NAMES 65536
#define TRACER_DEFAULT_EVENTS 131072
#define STOP_WAIT_NS 1000000000ull /* longest stop waits for a call in flight */
#define SUMQ 4      /* summaries waiting for delivery */
#define NAMEQ 2048  /* names waiting for delivery */

struct qname {
    uint64_t hash;
    char name[ARGUS_NAME_MAX + 1];
};

static struct {
    atomic_int active;
    atomic_uint busy;
    struct argus_summarizer *sm; /* valid while active (and until stop has waited) */
    pthread_mutex_t lock;        /* start/stop, coords */
    struct argus_coords coords;
    _Atomic uint64_t final_dropped, final_kernels; /* totals of the last stopped run */
    _Atomic uint64_t total_steps;  /* argus_set_total_steps; 0: not given */

    /* Delivery queue (qlock); sinks of the running tracer. */
    pthread_mutex_t qlock, dlock; /* dlock: one deliverer at a time */
    struct argus_step_summary *sq; /* [SUMQ] */
    struct qname *nq;              /* [NAMEQ] */
    size_t sq_head, sq_n, nq_n;
    argus_summary_sink_fn user_summary;
    argus_name_sink_fn user_name;
    void *user_ctx;

    /* GPU collection hooks (set once by InitializeInjection). */
    _Atomic(argus_gpu_mark_fn) gpu_mark;
    _Atomic(argus_gpu_drain_fn) gpu_drain;
    struct argus_ring *ring;
    struct argus_ring *api_ring;  /* argus.h path raw ring, while active */
    _Atomic uint64_t api_step;    /* the last argus_step_begin, for its events */
    uint32_t api_corr;            /* sequence number of argus_kernel events */
    uint64_t clk[3]; /* qlock: the latest clock triple, 0s when none */
    struct argus_nccl_step_stats nccl; /* qlock: scratch for the NCCL plugin's step */
    atomic_int api_seen; /* argus_step_begin was called (even while inactive) */
    atomic_uint no_cupti; /* enum argus_cupti_why once the GPU collector could not start */
    /* What the step-loop thread is doing, for tracer/hoststack.c (argus_tracer_activity):
     * monotonic ns of its latest mark, of the open step's begin, the open step, steps
     * ended, the last step's length, its thread id. Relaxed atomics, one writer. */
    _Atomic uint64_t act_mark_ns, act_begin_ns, act_step, act_done, act_last_ns;
    atomic_int act_open, act_tid;
} tracer_api = {.lock = PTHREAD_MUTEX_INITIALIZER, .qlock = PTHREAD_MUTEX_INITIALIZER,
       .dlock = PTHREAD_MUTEX_INITIALIZER};

static void q_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    pthread_mutex_lock(&tracer_api.qlock);
    if (tracer_api.sq_n == SUMQ) { /* drop the oldest */
        tracer_api.sq_head = (tracer_api.sq_head + 1) % SUMQ;
        tracer_api.sq_n--;
    }
    struct argus_step_summary *d = &tracer_api.sq[(tracer_api.sq_head + tracer_api.sq_n) % SUMQ];
    memcpy(d, s, offsetof(struct argus_step_summary, kmodes) +
                     s->n_kmodes * sizeof s->kmodes[0]);
    unsigned why = atomic_load_explicit(&tracer_api.no_cupti, memory_order_relaxed);
    if (why) /* the report says why this rank has no kernels */
        d->flags |= ARGUS_SF_NO_CUPTI | (why & 0xfu) << ARGUS_SF_CUPTI_WHY_SHIFT;
    if (tracer_api.clk[1]) { /* the latest clock triple of the GPU tracer, when there is one */
        d->clock_gpu_ns = tracer_api.clk[0];
        d->clock_real_ns = tracer_api.clk[1];
        d->clock_mono_ns = tracer_api.clk[2];
    }
    /* what NCCL's profiler plugin saw since the previous summary (its sink, same process):
     * collectives finish after their step's kernels were traced, so this is that step's
     * communication, give or take the calls still in flight at its end */
    if (argus_nccl_step_stats && argus_nccl_compact) {
        argus_nccl_step_stats(&tracer_api.nccl);
        argus_nccl_compact(&tracer_api.nccl, &d->nccl);
    }
    tracer_api.sq_n++;
    pthread_mutex_unlock(&tracer_api.qlock);
}

static void q_name(void *ctx, uint64_t hash, const char *name)
{
    (void)ctx;
    pthread_mutex_lock(&tracer_api.qlock);
    if (tracer_api.nq_n < NAMEQ) {
        tracer_api.nq[tracer_api.nq_n].hash = hash;
        snprintf(tracer_api.nq[tracer_api.nq_n].name, sizeof tracer_api.nq[tracer_api.nq_n].name,
                 "%s", name);
        tracer_api.nq_n++;
    } /* else dropped: the queue is full (tracer.h) */
    pthread_mutex_unlock(&tracer_api.qlock);
}

/* Hand queued names, then summaries, to the sinks (names first: a summary's names must
 * be known when it is read). One deliverer at a time (the application thread, or the
 * Argus thread for steps the GPU collector found itself); the sinks run without qlock.
 * wait: block for a deliverer in progress (stop must not leave anything queued). */
static void deliver_as(int wait)
{
    static struct argus_step_summary one; /* under dlock */
    struct qname nm;

    if (wait)
        pthread_mutex_lock(&tracer_api.dlock);
    else if (pthread_mutex_trylock(&tracer_api.dlock) != 0)
        return;
    for (;;) {
        pthread_mutex_lock(&tracer_api.qlock);
        int have_name = tracer_api.nq_n > 0, have_sum = !have_name && tracer_api.sq_n > 0;
        if (have_name) {
            nm = tracer_api.nq[0];
            memmove(tracer_api.nq, tracer_api.nq + 1,
                    (tracer_api.nq_n - 1) * sizeof *tracer_api.nq);
            tracer_api.nq_n--;
        } else if (have_sum) {
            const struct argus_step_summary *s = &tracer_api.sq[tracer_api.sq_head];
            memcpy(&one, s, offsetof(struct argus_step_summary, kmodes) +
                                s->n_kmodes * sizeof s->kmodes[0]);
            tracer_api.sq_head = (tracer_api.sq_head + 1) % SUMQ;
            tracer_api.sq_n--;
        }
        pthread_mutex_unlock(&tracer_api.qlock);
        if (have_name && tracer_api.user_name)
            tracer_api.user_name(tracer_api.user_ctx, nm.hash, nm.name);
        else if (have_sum && tracer_api.user_summary)
            tracer_api.user_summary(tracer_api.user_ctx, &one);
        if (!have_name && !have_sum)
            break;
    }
    pthread_mutex_unlock(&tracer_api.dlock);
}

static void deliver(void) { deliver_as(0); }

/* Enter a call on the summariser; 0 when the tracer is off (then do nothing). */
static int enter(void)
{
    if (!atomic_load_explicit(&tracer_api.active, memory_order_relaxed))
        return 0;
    atomic_fetch_add(&tracer_api.busy, 1);
    if (!atomic_load(&tracer_api.active)) {
        atomic_fetch_sub_explicit(&tracer_api.busy, 1, memory_order_release);
        return 0;
    }
    return 1;
}

static void leave(void)
{
    atomic_fetch_sub_explicit(&tracer_api.busy, 1, memory_order_release);
}

static uint64_t now_or(uint64_t t_ns)
{
    return t_ns ? t_ns : argus_clock_realtime_ns();
}

/* A mark of the step-loop thread: kind 0 step begin, 1 step end, 2 any other mark. */
static void act_note(int kind, uint64_t step)
{
    const uint64_t now = argus_clock_monotonic_ns();

    atomic_store_explicit(&tracer_api.act_mark_ns, now, memory_order_relaxed);
    if (kind == 0) {
        atomic_store_explicit(&tracer_api.act_tid, (int)gettid(), memory_order_relaxed);
        atomic_store_explicit(&tracer_api.act_step, step, memory_order_relaxed);
        atomic_store_explicit(&tracer_api.act_begin_ns, now, memory_order_relaxed);
        atomic_store_explicit(&tracer_api.act_open, 1, memory_order_release);
    } else if (kind == 1 && atomic_load_explicit(&tracer_api.act_open, memory_order_relaxed)) {
        atomic_store_explicit(&tracer_api.act_open, 0, memory_order_relaxed);
        atomic_store_explicit(&tracer_api.act_last_ns,
                              now - atomic_load_explicit(&tracer_api.act_begin_ns,
                                                         memory_order_relaxed),
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&tracer_api.act_done, 1, memory_order_release);
    }
}

void argus_tracer_activity(struct argus_tracer_activity *out)
{
    out->open = atomic_load_explicit(&tracer_api.act_open, memory_order_acquire);
    out->tid = atomic_load_explicit(&tracer_api.act_tid, memory_order_relaxed);
    out->step = atomic_load_explicit(&tracer_api.act_step, memory_order_relaxed);
    out->begin_ns = atomic_load_explicit(&tracer_api.act_begin_ns, memory_order_relaxed);
    out->mark_ns = atomic_load_explicit(&tracer_api.act_mark_ns, memory_order_relaxed);
    out->done = atomic_load_explicit(&tracer_api.act_done, memory_order_acquire);
    out->last_ns = atomic_load_explicit(&tracer_api.act_last_ns, memory_order_relaxed);
}

ARGUS_EXPORT int argus_tracer_start(const struct argus_tracer_opts *o)
{
    struct argus_summarizer_opts so;
    struct argus_summarizer *sm = NULL;
    int rc;

    if (!o)
        return -EINVAL;
    pthread_mutex_lock(&tracer_api.lock);
    if (atomic_load(&tracer_api.active)) {
        rc = -EALREADY;
        goto out;
    }
    memset(&so, 0, sizeof so);
    so.rank = o->rank;
    so.max_events = o->max_events ? o->max_events : TRACER_DEFAULT_EVENTS;
    so.max_names = TRACER_MAX_NAMES;
    so.coverage = o->coverage;
    so.on_summary = q_summary;
    so.on_name = q_name;
    so.ctx = NULL;
    if (!tracer_api.sq)
        tracer_api.sq =
            calloc(SUMQ, sizeof *tracer_api.sq); /* kept for the process: stop may race a drain */
    if (!tracer_api.nq)
        tracer_api.nq = calloc(NAMEQ, sizeof *tracer_api.nq);
    if (!tracer_api.sq || !tracer_api.nq) {
        rc = -ENOMEM;
        goto out;
    }
    tracer_api.user_summary = o->on_summary;
    tracer_api.user_name = o->on_name;
    tracer_api.user_ctx = o->ctx;
    rc = argus_summarizer_create(&so, &sm);
    if (rc < 0)
        goto out;
    argus_summarizer_set_coords(sm, &tracer_api.coords);
    tracer_api.sm = sm;
    tracer_api.api_ring = o->ring;
    atomic_store(&tracer_api.active, 1); /* publishes tracer_api.sm */
out:
    pthread_mutex_unlock(&tracer_api.lock);
    return rc;
}

ARGUS_EXPORT void argus_tracer_stop(void)
{
    const struct timespec nap = {0, 50000};
    uint64_t deadline;
    argus_gpu_drain_fn drain = atomic_load(&tracer_api.gpu_drain);

    if (drain && atomic_load(&tracer_api.active))
        drain(); /* the GPU's last steps reach the summariser while it is still there */
    deliver_as(1);
    pthread_mutex_lock(&tracer_api.lock);
    if (!atomic_load(&tracer_api.active))
        goto out;
    atomic_store(&tracer_api.active, 0);
    deadline = argus_clock_monotonic_ns() + STOP_WAIT_NS;
    while (atomic_load(&tracer_api.busy) != 0 && argus_clock_monotonic_ns() < deadline)
        nanosleep(&nap, NULL);
    atomic_store(&tracer_api.final_dropped, argus_summarizer_dropped(tracer_api.sm));
    atomic_store(&tracer_api.final_kernels, argus_summarizer_kernels(tracer_api.sm));
    if (atomic_load(&tracer_api.busy) != 0) {
        /* A call is stuck inside (e.g. stop from within on_summary): leak, never crash. */
        argus_log_once(ARGUS_LOG_WARN, "tracer-stop-busy",
                       "tracer stopped while a call was in flight; its memory is kept");
    } else {
        argus_summarizer_free(tracer_api.sm);
        tracer_api.api_ring = NULL;
    }
    tracer_api.sm = NULL;
out:
    pthread_mutex_unlock(&tracer_api.lock);
}

struct argus_summarizer *argus_tracer_acquire(void)
{
    return enter() ? tracer_api.sm : NULL;
}

void argus_tracer_release(void)
{
    leave();
}

ARGUS_EXPORT void argus_tracer_deliver(void)
{
    if (atomic_load_explicit(&tracer_api.active, memory_order_relaxed))
        deliver();
}

void argus_tracer_set_gpu_hooks(argus_gpu_mark_fn mark, argus_gpu_drain_fn drain,
                                struct argus_ring *ring)
{
    tracer_api.ring = ring;
    atomic_store(&tracer_api.gpu_drain, drain);
    atomic_store(&tracer_api.gpu_mark, mark);
}

void argus_tracer_set_no_cupti(unsigned why)
{
    atomic_store(&tracer_api.no_cupti, why);
}

int argus_tracer_wanted(void)
{
    return atomic_load_explicit(&tracer_api.gpu_mark, memory_order_relaxed) != NULL ||
           atomic_load_explicit(&tracer_api.api_seen, memory_order_relaxed);
}

struct argus_ring *argus_tracer_ring(void)
{
    return atomic_load(&tracer_api.gpu_mark) ? tracer_api.ring : NULL;
}

void argus_tracer_set_clock_triple(uint64_t cupti_ns, uint64_t real_ns, uint64_t mono_ns)
{
    pthread_mutex_lock(&tracer_api.qlock); /* qlock: q_summary stamps it into each summary */
    tracer_api.clk[0] = cupti_ns;
    tracer_api.clk[1] = real_ns;
    tracer_api.clk[2] = mono_ns;
    pthread_mutex_unlock(&tracer_api.qlock);
}

void argus_tracer_clock_triple(uint64_t out[3])
{
    pthread_mutex_lock(&tracer_api.qlock);
    memcpy(out, tracer_api.clk, sizeof tracer_api.clk);
    pthread_mutex_unlock(&tracer_api.qlock);
}

ARGUS_EXPORT int argus_set_total_steps(uint64_t steps)
{
    atomic_store(&tracer_api.total_steps, steps);
    return 0;
}

ARGUS_EXPORT uint64_t argus_tracer_total_steps(void)
{
    return atomic_load(&tracer_api.total_steps);
}

ARGUS_EXPORT void argus_tracer_coords(struct argus_coords *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&tracer_api.lock);
    *out = tracer_api.coords;
    pthread_mutex_unlock(&tracer_api.lock);
}

ARGUS_EXPORT uint64_t argus_tracer_dropped(void)
{
    uint64_t v;

    if (!enter())
        return atomic_load(&tracer_api.final_dropped);
    v = argus_summarizer_dropped(tracer_api.sm);
    leave();
    return v;
}

ARGUS_EXPORT uint64_t argus_tracer_kernels(void)
{
    uint64_t v;

    if (!enter())
        return atomic_load(&tracer_api.final_kernels);
    v = argus_summarizer_kernels(tracer_api.sm);
    leave();
    return v;
}

ARGUS_EXPORT int argus_active(void)
{
    return atomic_load_explicit(&tracer_api.active, memory_order_relaxed) ? 1 : 0;
}

static int layout_ok(int size, int index)
{
    if (size < 0 || size > UINT16_MAX || index < 0 || index > UINT16_MAX)
        return 0;
    return size == 0 || index < size;
}

ARGUS_EXPORT int argus_set_layout(int tp_size, int pp_size, int dp_size, int ep_size, int tp,
                                  int pp, int dp, int ep)
{
    struct argus_coords c;

    if (!layout_ok(tp_size, tp) || !layout_ok(pp_size, pp) || !layout_ok(dp_size, dp) ||
        !layout_ok(ep_size, ep))
        return -EINVAL;
    c.tp_size = (uint16_t)tp_size;
    c.pp_size = (uint16_t)pp_size;
    c.dp_size = (uint16_t)dp_size;
    c.ep_size = (uint16_t)ep_size;
    c.tp = (uint16_t)tp;
    c.pp = (uint16_t)pp;
    c.dp = (uint16_t)dp;
    c.ep = (uint16_t)ep;
    /* Under the lock, active cannot change and tracer_api.sm stays valid; the summariser is only
     * otherwise touched by this same (step-loop) thread. */
    pthread_mutex_lock(&tracer_api.lock);
    tracer_api.coords = c;
    if (atomic_load(&tracer_api.active))
        argus_summarizer_set_coords(tracer_api.sm, &c);
    pthread_mutex_unlock(&tracer_api.lock);
    return 0;
}

/* 1 when a GPU collector takes the mark (then the summariser is fed by its thread). */
static int gpu_mark(int kind, uint64_t step, uint64_t t_ns, unsigned phase)
{
    argus_gpu_mark_fn f = atomic_load_explicit(&tracer_api.gpu_mark, memory_order_acquire);

    if (!f)
        return 0;
    f(kind, step, now_or(t_ns), phase);
    return 1;
}

ARGUS_EXPORT void argus_step_begin(uint64_t step, uint64_t t_ns)
{
    atomic_store_explicit(&tracer_api.api_seen, 1, memory_order_relaxed);
    act_note(0, step);
    if (gpu_mark(0, step, t_ns, 0)) {
        argus_tracer_deliver();
        return;
    }
    if (!enter())
        return;
    atomic_store_explicit(&tracer_api.api_step, step, memory_order_relaxed);
    argus_summarizer_step_begin(tracer_api.sm, step, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_step_end(uint64_t step, uint64_t t_ns)
{
    act_note(1, step);
    if (gpu_mark(1, step, t_ns, 0)) {
        argus_tracer_deliver();
        return;
    }
    if (!enter())
        return;
    argus_summarizer_step_end(tracer_api.sm, step, now_or(t_ns));
    leave();
    deliver();
}

ARGUS_EXPORT void argus_phase_push(const char *name, uint64_t t_ns)
{
    act_note(2, 0);
    if (gpu_mark(2, 0, t_ns, (unsigned)argus_phase_from_name(name)))
        return;
    if (!enter())
        return;
    argus_summarizer_phase_push(tracer_api.sm, name, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_phase_pop(uint64_t t_ns)
{
    act_note(2, 0);
    if (gpu_mark(3, 0, t_ns, 0))
        return;
    if (!enter())
        return;
    argus_summarizer_phase_pop(tracer_api.sm, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_kernel(const char *name, uint64_t start_ns, uint64_t end_ns,
                               uint32_t device, uint32_t stream, enum argus_kernel_class cls)
{
    if (atomic_load_explicit(&tracer_api.gpu_mark, memory_order_relaxed))
        return; /* the GPU is traced for real */
    act_note(2, 0);
    if (!enter())
        return;
    uint64_t t0 = now_or(start_ns), t1 = now_or(end_ns);
    argus_summarizer_kernel(tracer_api.sm, name, t0, t1, device, stream, (int)cls);
    if (tracer_api.api_ring)
        argus_ring_add_copy(
            tracer_api.api_ring,
            &(struct argus_ring_ev){
                .name = name,
                .step = atomic_load_explicit(&tracer_api.api_step, memory_order_relaxed),
                .start_ns = t0,
                .end_ns = t1,
                .device = device,
                .stream = stream,
                .corr = ++tracer_api.api_corr,
                .kclass = (uint8_t)((unsigned)cls < ARGUS_KC_COUNT ? cls : 0)});
    leave();
}

ARGUS_EXPORT uint64_t argus_now_ns(void)
{
    return argus_clock_realtime_ns();
}
