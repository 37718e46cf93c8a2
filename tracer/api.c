/* api.c — the process-wide tracer behind argus.h and tracer.h: one static state that
 * forwards the application's marks and kernels to the step summariser while started.
 * Must stay a cheap no-op when not started, must never block the application thread for
 * long, never allocate per call, never exit.
 *
 * Threads: argus_tracer_start/stop (MPI_Init/Finalize thread) publish and retire the
 * summariser; argus.h calls (the step-loop thread) enter through a busy counter so that
 * stop can wait for a call in flight before freeing (a Dekker-style pair of seq_cst
 * accesses: a caller either sees active == 0 or stop sees its busy mark).
 * Summaries are delivered through opts.on_summary synchronously from argus_step_end, on
 * the application thread; a later issue moves the step-end work to an Argus thread.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "tracer/argus.h"
#include "tracer/tracer.h"

#define TRACER_MAX_NAMES 65536
#define TRACER_DEFAULT_EVENTS 131072
#define STOP_WAIT_NS 1000000000ull /* longest stop waits for a call in flight */

static struct {
    atomic_int active;
    atomic_uint busy;
    struct argus_summarizer *sm; /* valid while active (and until stop has waited) */
    pthread_mutex_t lock;        /* start/stop, coords */
    struct argus_coords coords;
    _Atomic uint64_t final_dropped, final_kernels; /* totals of the last stopped run */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Enter a call on the summariser; 0 when the tracer is off (then do nothing). */
static int enter(void)
{
    if (!atomic_load_explicit(&g.active, memory_order_relaxed))
        return 0;
    atomic_fetch_add(&g.busy, 1);
    if (!atomic_load(&g.active)) {
        atomic_fetch_sub_explicit(&g.busy, 1, memory_order_release);
        return 0;
    }
    return 1;
}

static void leave(void)
{
    atomic_fetch_sub_explicit(&g.busy, 1, memory_order_release);
}

static uint64_t now_or(uint64_t t_ns)
{
    return t_ns ? t_ns : argus_clock_realtime_ns();
}

ARGUS_EXPORT int argus_tracer_start(const struct argus_tracer_opts *o)
{
    struct argus_summarizer_opts so;
    struct argus_summarizer *sm = NULL;
    int rc;

    if (!o)
        return -EINVAL;
    pthread_mutex_lock(&g.lock);
    if (atomic_load(&g.active)) {
        rc = -EALREADY;
        goto out;
    }
    memset(&so, 0, sizeof so);
    so.rank = o->rank;
    so.max_events = o->max_events ? o->max_events : TRACER_DEFAULT_EVENTS;
    so.max_names = TRACER_MAX_NAMES;
    so.on_summary = o->on_summary;
    so.on_name = o->on_name;
    so.ctx = o->ctx;
    rc = argus_summarizer_create(&so, &sm);
    if (rc < 0)
        goto out;
    argus_summarizer_set_coords(sm, &g.coords);
    g.sm = sm;
    atomic_store(&g.active, 1); /* publishes g.sm */
out:
    pthread_mutex_unlock(&g.lock);
    return rc;
}

ARGUS_EXPORT void argus_tracer_stop(void)
{
    const struct timespec nap = {0, 50000};
    uint64_t deadline;

    pthread_mutex_lock(&g.lock);
    if (!atomic_load(&g.active))
        goto out;
    atomic_store(&g.active, 0);
    deadline = argus_clock_monotonic_ns() + STOP_WAIT_NS;
    while (atomic_load(&g.busy) != 0 && argus_clock_monotonic_ns() < deadline)
        nanosleep(&nap, NULL);
    atomic_store(&g.final_dropped, argus_summarizer_dropped(g.sm));
    atomic_store(&g.final_kernels, argus_summarizer_kernels(g.sm));
    if (atomic_load(&g.busy) != 0) {
        /* A call is stuck inside (e.g. stop from within on_summary): leak, never crash. */
        argus_log_once(ARGUS_LOG_WARN, "tracer-stop-busy",
                       "tracer stopped while a call was in flight; its memory is kept");
    } else {
        argus_summarizer_free(g.sm);
    }
    g.sm = NULL;
out:
    pthread_mutex_unlock(&g.lock);
}

ARGUS_EXPORT void argus_tracer_coords(struct argus_coords *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&g.lock);
    *out = g.coords;
    pthread_mutex_unlock(&g.lock);
}

ARGUS_EXPORT uint64_t argus_tracer_dropped(void)
{
    uint64_t v;

    if (!enter())
        return atomic_load(&g.final_dropped);
    v = argus_summarizer_dropped(g.sm);
    leave();
    return v;
}

ARGUS_EXPORT uint64_t argus_tracer_kernels(void)
{
    uint64_t v;

    if (!enter())
        return atomic_load(&g.final_kernels);
    v = argus_summarizer_kernels(g.sm);
    leave();
    return v;
}

ARGUS_EXPORT int argus_active(void)
{
    return atomic_load_explicit(&g.active, memory_order_relaxed) ? 1 : 0;
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
    /* Under the lock, active cannot change and g.sm stays valid; the summariser is only
     * otherwise touched by this same (step-loop) thread. */
    pthread_mutex_lock(&g.lock);
    g.coords = c;
    if (atomic_load(&g.active))
        argus_summarizer_set_coords(g.sm, &c);
    pthread_mutex_unlock(&g.lock);
    return 0;
}

ARGUS_EXPORT void argus_step_begin(uint64_t step, uint64_t t_ns)
{
    if (!enter())
        return;
    argus_summarizer_step_begin(g.sm, step, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_step_end(uint64_t step, uint64_t t_ns)
{
    if (!enter())
        return;
    argus_summarizer_step_end(g.sm, step, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_phase_push(const char *name, uint64_t t_ns)
{
    if (!enter())
        return;
    argus_summarizer_phase_push(g.sm, name, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_phase_pop(uint64_t t_ns)
{
    if (!enter())
        return;
    argus_summarizer_phase_pop(g.sm, now_or(t_ns));
    leave();
}

ARGUS_EXPORT void argus_kernel(const char *name, uint64_t start_ns, uint64_t end_ns,
                               uint32_t device, uint32_t stream, enum argus_kernel_class cls)
{
    if (!enter())
        return;
    argus_summarizer_kernel(g.sm, name, now_or(start_ns), now_or(end_ns), device, stream,
                            (int)cls);
    leave();
}

ARGUS_EXPORT uint64_t argus_now_ns(void)
{
    return argus_clock_realtime_ns();
}
