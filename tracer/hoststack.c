/* hoststack.c — host call stacks of the step-loop thread on demand (hoststack.h): the
 * signal handler (async-signal-safe only: libunwind's local unwinder, CPython's traceback
 * dumper into a pipe, atomics), the sampler that arms it and has the frames named
 * (tracer/hoststack_names.c), and the watcher thread that decides when a stall is in
 * progress.
 * Must not allocate after start, must never wait more than 100 ms for the training thread,
 * must never crash or deadlock it (the handler takes no lock, calls no malloc), never
 * exits; a failure turns the sampler off with one line.
 */
#define UNW_LOCAL_ONLY
#include "tracer/hoststack.h"
#include "tracer/hoststack_names.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "tracer/tracer.h"

#define HS_PYTEXT 16384     /* bytes of the dumper's text read per sample */
#define HS_POOL 64          /* finished samples waiting for the Argus thread */
#define HS_POLL_MS 10       /* the watcher's shortest sleep between looks at the step loop */
#define HS_IDLE_MS 200      /* ... its longest (= HS_MIN_STALL_MS: no stall is seen late) */
#define HS_MIN_STALL_MS 200 /* a stall: no mark for longer than this ... */
#define HS_STALL_X 2        /* ... and than this many median steps */
#define HS_HANG_X 10        /* a hang: the step open for this many median steps */
#define HS_PER_STALL 8      /* samples per stall */
#define HS_GAP_MS 40        /* between them */
#define HS_WAIT_MS 100      /* the longest wait for the handler */
#define HS_WARM 5           /* steps seen before a median is trusted */
#define HS_MED 32           /* step lengths the median is taken over */

enum { SLOT_FREE, SLOT_ARMED, SLOT_BUSY, SLOT_DONE };

typedef void *(*py_tstate_fn)(void);
typedef void (*py_dump_fn)(int fd, void *tstate);
typedef int (*py_init_fn)(void);
typedef const char *(*py_version_fn)(void);

static struct {
    int sig, installed, pipe_r, pipe_w;
    uint32_t min_ms; /* the stall threshold's floor (ARGUS_STACKS_MIN_MS); 0: HS_MIN_STALL_MS */
    atomic_int lost; /* the program installed its own handler since: off for good */
    /* the one slot the handler fills */
    atomic_int state;
    _Atomic pid_t want_tid;
    atomic_int n_pc;
    uintptr_t pc[HS_MAX_PC];
    _Atomic uint64_t cost_ns;
    /* CPython, resolved by the sampler; the handler reads them after the arming store */
    _Atomic(py_tstate_fn) py_tstate;
    _Atomic(py_dump_fn) py_dump;
    atomic_int py_on;       /* this sample: CPython is up (set before arming) */
    py_init_fn py_up;       /* Py_IsInitialized, sampler only */
    int py_checked; /* sampler only: 1 looked and decided */
    /* finished samples */
    pthread_mutex_t mu;
    struct argus_hoststack_sample *pool;
    size_t head, n;
    char *pytext; /* [HS_PYTEXT + 1], sampler only */
    struct argus_hoststack_sample cur; /* sampler only: the sample being named */
    /* watcher */
    pthread_t th;
    int th_on;
    atomic_int stop;
    pthread_mutex_t wmu;       /* the watcher's sleep: woken by stop and by a request */
    pthread_cond_t wcv;        /* (CLOCK_MONOTONIC) */
    unsigned kicks;            /* under wmu */
    atomic_int req;            /* a peer request is waiting (req_rank, req_step) */
    _Atomic uint32_t req_rank;
    _Atomic uint64_t req_step;
    _Atomic uint64_t signals, samples, timeouts, dropped, cost_sum, cost_max;
} hoststack = {.pipe_r = -1, .pipe_w = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- the handler (async-signal-safe only) ------------------------------------------- */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    const int saved = errno;
    (void)sig;

    if (si->si_code != SI_TKILL || si->si_pid != getpid() ||
        (pid_t)syscall(SYS_gettid) != atomic_load(&hoststack.want_tid))
        goto out;
    int armed = SLOT_ARMED;
    if (!atomic_compare_exchange_strong(&hoststack.state, &armed, SLOT_BUSY))
        goto out; /* late (the sampler gave up on it) or not ours */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unw_cursor_t cur;
    int n = 0;
    if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
                break;
            hoststack.pc[n++] = (uintptr_t)ip;
        } while (n < HS_MAX_PC && unw_step(&cur) > 0);
    }
    atomic_store(&hoststack.n_pc, n);
    py_tstate_fn ts = atomic_load(&hoststack.py_tstate);
    py_dump_fn dump = atomic_load(&hoststack.py_dump);
    if (ts && dump && atomic_load(&hoststack.py_on)) {
        void *tstate = ts();
        if (tstate)
            dump(hoststack.pipe_w, tstate);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_store(&hoststack.cost_ns, (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
                                         (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec);
    atomic_store(&hoststack.state, SLOT_DONE);
out:
    errno = saved;
}

static void push(const struct argus_hoststack_sample *s)
{
    pthread_mutex_lock(&hoststack.mu);
    if (hoststack.n == HS_POOL) { /* drop the oldest */
        hoststack.head = (hoststack.head + 1) % HS_POOL;
        hoststack.n--;
        atomic_fetch_add(&hoststack.dropped, 1);
    }
    hoststack.pool[(hoststack.head + hoststack.n) % HS_POOL] = *s;
    hoststack.n++;
    pthread_mutex_unlock(&hoststack.mu);
    atomic_fetch_add(&hoststack.samples, 1);
}

/* Find CPython once it is up; refuse free-threaded builds (no stop-the-world here). */
static void python_check(void)
{
    if (hoststack.py_checked)
        return;
    py_init_fn up = (py_init_fn)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!up) {
        hoststack.py_checked = 1; /* not a Python process */
        return;
    }
    if (!up())
        return; /* look again at the next sample */
    hoststack.py_checked = 1;
    py_version_fn ver = (py_version_fn)dlsym(RTLD_DEFAULT, "Py_GetVersion");
    const char *v = ver ? ver() : "";
    if (strstr(v, "free-threading")) {
        argus_log_once(ARGUS_LOG_WARN, "hoststack-ft", "host stacks: no Python frames in a "
                       "free-threaded CPython (its frames cannot be read safely); native only");
        return;
    }
    py_tstate_fn ts = (py_tstate_fn)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    py_dump_fn dump = (py_dump_fn)dlsym(RTLD_DEFAULT, "_Py_DumpTraceback");
    if (!ts || !dump) {
        argus_log_once(ARGUS_LOG_WARN, "hoststack-py", "host stacks: this CPython has no "
                       "traceback dumper; native frames only");
        return;
    }
    hoststack.py_up = up;
    atomic_store(&hoststack.py_tstate, ts);
    atomic_store(&hoststack.py_dump, dump);
}

static void drain_pipe(char *buf, size_t cap, size_t *got)
{
    size_t n = 0;
    char junk[512];
    for (;;) {
        char *dst = buf && n < cap ? buf + n : junk;
        size_t room = buf && n < cap ? cap - n : sizeof junk;
        ssize_t r = read(hoststack.pipe_r, dst, room);
        if (r <= 0)
            break;
        if (dst != junk)
            n += (size_t)r;
    }
    if (got)
        *got = n;
}

static int sample_for(pid_t tid, uint64_t step, uint32_t stalled_ms, int why, int timeout_ms,
                      uint32_t for_rank, uint64_t for_step);

int argus_hoststack_sample_tid(pid_t tid, uint64_t step, uint32_t stalled_ms, int why,
                               int timeout_ms)
{
    return sample_for(tid, step, stalled_ms, why, timeout_ms, 0, 0);
}

static int sample_for(pid_t tid, uint64_t step, uint32_t stalled_ms, int why, int timeout_ms,
                      uint32_t for_rank, uint64_t for_step)
{
    if (!hoststack.installed || atomic_load(&hoststack.lost))
        return -ENOTCONN;
    struct sigaction cur;
    if (sigaction(hoststack.sig, NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) ||
        cur.sa_sigaction != on_signal) { /* the program took the signal over since */
        argus_log_once(ARGUS_LOG_WARN, "hoststack-lost", "host stacks off: the program "
                       "installed its own handler of signal %d (SIGRTMAX-3)", hoststack.sig);
        atomic_store(&hoststack.lost, 1);
        return -ENOTCONN;
    }
    int st = atomic_load(&hoststack.state);
    if (st == SLOT_BUSY)
        return -ETIMEDOUT; /* an earlier handler is still running */
    if (st == SLOT_DONE)
        atomic_store(&hoststack.state, SLOT_FREE); /* finished after its sampler gave up */
    python_check();
    /* never read the frames of an interpreter that is finalizing or gone */
    atomic_store(&hoststack.py_on, hoststack.py_up && hoststack.py_up());
    drain_pipe(NULL, 0, NULL);
    atomic_store(&hoststack.want_tid, tid);
    atomic_store(&hoststack.state, SLOT_ARMED);
    atomic_fetch_add(&hoststack.signals, 1);
    if (syscall(SYS_tgkill, getpid(), tid, hoststack.sig) != 0) {
        const int e = errno;
        atomic_store(&hoststack.state, SLOT_FREE);
        return -e;
    }
    const uint64_t until = argus_clock_monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;
    const struct timespec nap = {0, 100000};
    while (atomic_load(&hoststack.state) != SLOT_DONE) {
        if (argus_clock_monotonic_ns() >= until) {
            int armed = SLOT_ARMED;
            if (atomic_compare_exchange_strong(&hoststack.state, &armed, SLOT_FREE) ||
                atomic_load(&hoststack.state) != SLOT_DONE) {
                atomic_fetch_add(&hoststack.timeouts, 1);
                return -ETIMEDOUT;
            }
            break;
        }
        nanosleep(&nap, NULL);
    }
    const uint64_t cost = atomic_load(&hoststack.cost_ns);
    atomic_fetch_add(&hoststack.cost_sum, cost);
    if (cost > atomic_load(&hoststack.cost_max))
        atomic_store(&hoststack.cost_max, cost);
    struct argus_hoststack_sample *const sp = &hoststack.cur;
    memset(sp, 0, offsetof(struct argus_hoststack_sample, folded));
    sp->step = step;
    sp->t_ns = argus_clock_realtime_ns();
    sp->stalled_ms = stalled_ms;
    sp->cost_ns = (uint32_t)(cost > UINT32_MAX ? UINT32_MAX : cost);
    sp->why = (uint8_t)why;
    sp->for_rank = for_rank;
    sp->for_step = for_step;
    size_t got = 0;
    drain_pipe(hoststack.pytext, HS_PYTEXT, &got);
    hoststack.pytext[got] = '\0';
    if (got && argus_hoststack_name_python(sp, hoststack.pytext))
        push(sp);
    argus_hoststack_name_native(sp, hoststack.pc, atomic_load(&hoststack.n_pc));
    push(sp);
    atomic_store(&hoststack.state, SLOT_FREE);
    return 0;
}

/* ---- the watcher -------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The watcher's sleep: until monotonic `until` (cut to [HS_POLL_MS, HS_IDLE_MS] from
 * now), a stop or a peer request. */
static void watch_sleep(uint64_t until)
{
    const uint64_t now = argus_clock_monotonic_ns();
    const uint64_t idle_ms = hoststack.min_ms && hoststack.min_ms < HS_IDLE_MS
                                 ? hoststack.min_ms : HS_IDLE_MS; /* never later than a stall */
    const uint64_t lo = now + HS_POLL_MS * 1000000ull, hi = now + idle_ms * 1000000ull;
    until = until < lo ? lo : until > hi ? hi : until;
    struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
    pthread_mutex_lock(&hoststack.wmu);
    const unsigned k = hoststack.kicks;
    while (!atomic_load(&hoststack.stop) && hoststack.kicks == k &&
           pthread_cond_timedwait(&hoststack.wcv, &hoststack.wmu, &ts) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&hoststack.wmu);
}

static void watch_kick(void)
{
    pthread_mutex_lock(&hoststack.wmu);
    hoststack.kicks++;
    pthread_cond_broadcast(&hoststack.wcv);
    pthread_mutex_unlock(&hoststack.wmu);
}

/* Looks at the step loop when something may be due: a stall (no mark for thr), a hang, the
 * next sample of a stall, a peer's request; else every HS_IDLE_MS (a step that began
 * meanwhile cannot have stalled yet: thr >= HS_MIN_STALL_MS). */
static void *watch_main(void *arg)
{
    (void)arg;
    uint64_t lens[HS_MED], sorted[HS_MED], seen_done = 0, median = 0;
    uint64_t stall_mark = 0, stall_step = UINT64_MAX, next_at = 0, hang_step = UINT64_MAX;
    size_t nlen = 0, taken = 0;
    uint64_t wake_at = 0; /* monotonic ns of the next look */
    uint64_t ndone = 0;   /* steps completed since the watcher started */

    while (!atomic_load(&hoststack.stop)) {
        watch_sleep(wake_at);
        wake_at = UINT64_MAX;
        struct argus_tracer_activity a;
        argus_tracer_activity(&a);
        if (a.done != seen_done) { /* one length per look: steps between looks are unseen */
            ndone += a.done - seen_done;
            seen_done = a.done;
            lens[nlen % HS_MED] = a.last_ns;
            nlen++;
            const size_t m = nlen < HS_MED ? nlen : HS_MED;
            memcpy(sorted, lens, m * sizeof *lens);
            qsort(sorted, m, sizeof *sorted, cmp_u64);
            median = sorted[m / 2];
        }
        if (a.tid > 0 && atomic_exchange(&hoststack.req, 0)) { /* a healthy peer's view */
            const uint32_t fr = atomic_load(&hoststack.req_rank);
            const uint64_t fs = atomic_load(&hoststack.req_step);
            sample_for(a.tid, a.step, 0, ARGUS_HOSTSTACK_PEER, HS_WAIT_MS, fr, fs);
        }
        if (!a.open || a.tid <= 0 || ndone < HS_WARM)
            continue;
        const uint64_t now = argus_clock_monotonic_ns();
        const uint64_t last = a.mark_ns > a.begin_ns ? a.mark_ns : a.begin_ns;
        const uint64_t idle = now > last ? now - last : 0;
        uint64_t thr = HS_STALL_X * median;
        const uint64_t floor_ns = (hoststack.min_ms ? hoststack.min_ms : HS_MIN_STALL_MS) *
                                  1000000ull;
        if (thr < floor_ns)
            thr = floor_ns;
        if (hang_step != a.step) { /* next look: when this step would be a hang */
            const uint64_t h = a.begin_ns + (HS_HANG_X * median > thr ? HS_HANG_X * median : thr);
            wake_at = h < wake_at ? h + 1 : wake_at;
        }
        if (stall_step != a.step || stall_mark != last || taken < HS_PER_STALL) {
            const uint64_t st = idle <= thr ? last + thr + 1 : next_at;
            wake_at = st < wake_at ? st : wake_at; /* ... a stall or its next sample */
        }
        if (now > a.begin_ns && now - a.begin_ns > HS_HANG_X * median &&
            now - a.begin_ns > thr && hang_step != a.step) {
            hang_step = a.step;
            argus_hoststack_sample_tid(a.tid, a.step, (uint32_t)(idle / 1000000ull),
                                       ARGUS_HOSTSTACK_HANG, HS_WAIT_MS);
            continue;
        }
        if (idle <= thr)
            continue;
        if (stall_step != a.step || stall_mark != last) { /* a new stall */
            stall_step = a.step;
            stall_mark = last;
            taken = 0;
            next_at = 0;
        }
        if (taken >= HS_PER_STALL || now < next_at)
            continue;
        taken++;
        next_at = now + HS_GAP_MS * 1000000ull;
        wake_at = taken < HS_PER_STALL && next_at < wake_at ? next_at : wake_at;
        argus_hoststack_sample_tid(a.tid, a.step, (uint32_t)(idle / 1000000ull),
                                   ARGUS_HOSTSTACK_STALL, HS_WAIT_MS);
    }
    return NULL;
}

/* ---- start, stop, pool -------------------------------------------------------------- */

void argus_hoststack_set_min_ms(uint32_t ms)
{
    if (!hoststack.installed)
        hoststack.min_ms = ms;
}

int argus_hoststack_start(int watch)
{
    struct sigaction sa, old;
    int fds[2], rc;

    if (hoststack.installed)
        return 0;
    hoststack.sig = SIGRTMAX - 3;
    if (sigaction(hoststack.sig, NULL, &old) != 0)
        return -errno;
    if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
                                    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
        argus_log_once(ARGUS_LOG_WARN, "hoststack-sig", "host stacks off: signal %d "
                       "(SIGRTMAX-3) has another handler", hoststack.sig);
        return -EBUSY;
    }
    hoststack.pool = calloc(HS_POOL, sizeof *hoststack.pool);
    hoststack.pytext = malloc(HS_PYTEXT + 1);
    if (!hoststack.pool || !hoststack.pytext || pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
        rc = hoststack.pool && hoststack.pytext ? -errno : -ENOMEM;
        goto fail;
    }
    hoststack.pipe_r = fds[0];
    hoststack.pipe_w = fds[1];
    /* a per-thread cache (thread-local memory, no lock in a handler); the first unwind
     * may set up libunwind's tables: do it here, not in a handler */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    void *warm[4];
    (void)unw_backtrace(warm, 4);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(hoststack.sig, &sa, NULL) != 0) {
        rc = -errno;
        goto fail;
    }
    hoststack.installed = 1;
    atomic_store(&hoststack.stop, 0);
    if (watch) {
        sigset_t all, prev;
        sigfillset(&all);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_mutex_init(&hoststack.wmu, NULL);
        pthread_cond_init(&hoststack.wcv, &ca);
        pthread_condattr_destroy(&ca);
        pthread_sigmask(SIG_SETMASK, &all, &prev); /* the watcher takes no signal */
        rc = -pthread_create(&hoststack.th, NULL, watch_main, NULL);
        pthread_sigmask(SIG_SETMASK, &prev, NULL);
        if (rc) {
            argus_log_once(ARGUS_LOG_WARN, "hoststack-thread", "host stacks off: no "
                           "watcher thread (%s)", strerror(-rc));
            return rc; /* the handler stays: harmless without an armed slot */
        }
        hoststack.th_on = 1;
        pthread_setname_np(hoststack.th, "argus-stacks");
    }
    return 0;
fail:
    argus_log_once(ARGUS_LOG_WARN, "hoststack-init", "host stacks off: %s", strerror(-rc));
    if (hoststack.pipe_r >= 0) {
        close(hoststack.pipe_r);
        close(hoststack.pipe_w);
    }
    hoststack.pipe_r = hoststack.pipe_w = -1;
    free(hoststack.pool);
    free(hoststack.pytext);
    hoststack.pool = NULL;
    hoststack.pytext = NULL;
    return rc;
}

void argus_hoststack_stop(void)
{
    if (!hoststack.th_on)
        return;
    atomic_store(&hoststack.stop, 1);
    watch_kick();
    pthread_join(hoststack.th, NULL);
    hoststack.th_on = 0;
    argus_hoststack_names_end(); /* the sampler has ended: nobody names frames now */
}

void argus_hoststack_request(uint32_t for_rank, uint64_t for_step)
{
    atomic_store(&hoststack.req_rank, for_rank);
    atomic_store(&hoststack.req_step, for_step);
    atomic_store(&hoststack.req, 1);
    if (hoststack.th_on)
        watch_kick();
}

int argus_hoststack_take(struct argus_hoststack_sample *out)
{
    int got = 0;
    pthread_mutex_lock(&hoststack.mu);
    if (hoststack.n) {
        *out = hoststack.pool[hoststack.head];
        hoststack.head = (hoststack.head + 1) % HS_POOL;
        hoststack.n--;
        got = 1;
    }
    pthread_mutex_unlock(&hoststack.mu);
    return got;
}

void argus_hoststack_get_stats(struct argus_hoststack_stats *st)
{
    st->signals = atomic_load(&hoststack.signals);
    st->samples = atomic_load(&hoststack.samples);
    st->timeouts = atomic_load(&hoststack.timeouts);
    st->dropped = atomic_load(&hoststack.dropped);
    st->cost_ns_sum = atomic_load(&hoststack.cost_sum);
    st->cost_ns_max = atomic_load(&hoststack.cost_max);
    st->python = atomic_load(&hoststack.py_dump) != NULL;
}
