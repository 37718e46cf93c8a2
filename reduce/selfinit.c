/* selfinit.c — Argus initialises MPI itself for programs that never do (selfinit.h).
 *
 * States (selfinit.lock): WAITING (the thread watches for the program's MPI_Init and for
 * something to trace) -> APP (the program initialised MPI: the thread is gone) or
 * STARTING -> SELF (MPI and Argus run on the thread) or FAILED; SELF -> DONE after the
 * thread finalized Argus and MPI, asked by atexit or by the program's MPI_Finalize.
 */
#include "reduce/selfinit.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "reduce/runtime.h"
#include "tracer/tracer.h"

#define POLL_MS 50

enum si_state { SI_IDLE, SI_WAITING, SI_APP, SI_STARTING, SI_SELF, SI_FAILED, SI_DONE };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    enum si_state state;
    int provided;
    int fin_req;  /* finalize Argus and MPI now */
    pid_t pid;    /* the process that owns the thread (children never finalize) */
    long wait_ms; /* ARGUS_MPI_SELF_INIT_MS */
    long bound_ms; /* longest exit waits for the thread: ARGUS_FINALIZE_MS + 20 s */
    uint64_t t0;  /* CLOCK_MONOTONIC at load */
    char claim[4096]; /* the rank's claim file, "" when none */
    int started;      /* the thread was started (set once, at load) */
} selfinit = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The launcher's idea of this process's rank (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
 * SLURM_PROCID, RANK, in that order) or -1; for the cross-check against MPI's rank. */
static int launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID", "RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (!v || !*v)
            continue;
        long r = strtol(v, &end, 10);
        if (*end == '\0' && r >= 0 && r < (1L << 30))
            return (int)r;
    }
    return -1;
}

/* Started by an MPI launcher that will wire this process into a world. */
static int launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

static int env_is_one_or_unset(const char *name)
{
    const char *v = getenv(name);
    return !v || !*v || strcmp(v, "1") == 0;
}

/* A lone process (`argus-run python train.py`): no launcher and nothing saying it is one
 * of several (torchrun's WORLD_SIZE, Slurm's task count). MPI then starts as a singleton,
 * a world of one, and the process gets its own report. */
static int lone_process(void)
{
    return !launched_by_mpi() && env_is_one_or_unset("WORLD_SIZE") &&
           env_is_one_or_unset("SLURM_NTASKS") && env_is_one_or_unset("SLURM_STEP_NUM_TASKS");
}

/* One process per rank initialises MPI: a CUDA program's exec'd or spawned children that
 * trace too (they inherit LD_PRELOAD and the launcher's rank variables) must not. The
 * first claims $TMPDIR/argus-mpi-<job>-<rank> (O_EXCL, holding its pid); a later one
 * stands down while that pid lives. 1: claimed (or no job id to claim with). */
static int rank_claim(char *path, size_t len)
{
    const char *ns = getenv("OMPI_MCA_ess_base_jobid");
    const char *tmp = getenv("TMPDIR");
    char job[128];
    int rank = launcher_rank();

    if (!ns)
        ns = getenv("PMIX_NAMESPACE");
    if (!ns)
        ns = getenv("SLURM_JOB_ID");
    path[0] = '\0';
    if (lone_process()) { /* one per session: the program, not the helpers it starts */
        snprintf(job, sizeof job, "sid%ld", (long)getsid(0));
        rank = 0;
    } else if (!ns || rank < 0) {
        return 1;
    } else {
        snprintf(job, sizeof job, "%s", ns);
    }
    for (char *p = job; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    snprintf(path, len, "%s/argus-mpi-%s-%d", tmp && *tmp ? tmp : "/tmp", job, rank);
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            char pid[32];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            ssize_t w = write(fd, pid, (size_t)n);
            close(fd);
            return w == n;
        }
        char buf[32] = "";
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 0;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        long holder = r > 0 ? atol(buf) : 0;
        if (holder > 0 && (kill((pid_t)holder, 0) == 0 || errno == EPERM))
            return 0; /* a live process of this rank holds it */
        unlink(path); /* left by a dead process: take it over */
    }
    return 0;
}

/* Wait (lock held) until the state is not in [from, to]. */
static void wait_while(enum si_state from, enum si_state to)
{
    while (selfinit.state >= from && selfinit.state <= to)
        pthread_cond_wait(&selfinit.cv, &selfinit.lock);
}

/* The same, but at most selfinit.bound_ms: exit must never hang on MPI (an MPI_Init that never
 * returns, a finalize waiting on a dead peer). 0 when the wait timed out. */
static int wait_while_bounded(enum si_state from, enum si_state to)
{
    struct timespec until = argus_clock_abstime_in_ms(selfinit.bound_ms);
    while (selfinit.state >= from && selfinit.state <= to)
        if (pthread_cond_timedwait(&selfinit.cv, &selfinit.lock, &until) == ETIMEDOUT)
            return selfinit.state < from || selfinit.state > to;
    return 1;
}

static void check_rank(void)
{
    int mpi_rank = -1, env_rank = launcher_rank();

    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    if (env_rank >= 0 && env_rank != mpi_rank)
        argus_log_once(ARGUS_LOG_WARN, "selfinit-rank",
                       "MPI says rank %d but the launcher says %d; Argus uses MPI's", mpi_rank,
                       env_rank);
}

/* The thread: wait, maybe initialise, then serve the finalize request. */
static void *selfinit_main(void *arg)
{
    (void)arg;
    /* for ps, top, bench/overhead.py: the threads MPI starts from here inherit the name */
    pthread_setname_np(pthread_self(), "argus-selfinit");
    pthread_mutex_lock(&selfinit.lock);
    while (selfinit.state == SI_WAITING) {
        uint64_t waited_ms = (argus_clock_monotonic_ns() - selfinit.t0) / 1000000;
        if (waited_ms >= (uint64_t)selfinit.wait_ms && argus_tracer_wanted())
            break;
        struct timespec ts = argus_clock_abstime_in_ms(POLL_MS);
        pthread_cond_timedwait(&selfinit.cv, &selfinit.lock, &ts);
    }
    if (selfinit.state != SI_WAITING) { /* the program initialised MPI itself */
        pthread_mutex_unlock(&selfinit.lock);
        return NULL;
    }
    if (!rank_claim(selfinit.claim, sizeof selfinit.claim)) {
        selfinit.state = SI_IDLE; /* another process of this rank owns MPI */
        selfinit.claim[0] = '\0';
        pthread_mutex_unlock(&selfinit.lock);
        argus_log(ARGUS_LOG_INFO, "pid %ld: another process of this rank owns MPI; this one "
                  "stays out", (long)getpid());
        return NULL;
    }
    selfinit.state = SI_STARTING;
    pthread_mutex_unlock(&selfinit.lock);

    int provided = MPI_THREAD_SINGLE, initialized = 0;
    int rc = MPI_Initialized(&initialized) == MPI_SUCCESS && !initialized
                 ? PMPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided)
                 : MPI_ERR_OTHER;
    pthread_mutex_lock(&selfinit.lock);
    selfinit.state = rc == MPI_SUCCESS ? SI_SELF : SI_FAILED;
    selfinit.provided = provided;
    pthread_cond_broadcast(&selfinit.cv);
    pthread_mutex_unlock(&selfinit.lock);
    if (rc != MPI_SUCCESS) {
        if (selfinit.claim[0])
            unlink(selfinit.claim);
        argus_log_once(ARGUS_LOG_WARN, "selfinit", "the program never called MPI_Init and "
                       "Argus could not initialise MPI for it; no diagnosis for this rank");
        return NULL;
    }
    argus_log_once(ARGUS_LOG_INFO, "selfinit", "the program does not use MPI; Argus "
                   "initialised it on its own thread");
    check_rank();
    argus_runtime_init(provided);

    pthread_mutex_lock(&selfinit.lock);
    while (!selfinit.fin_req)
        pthread_cond_wait(&selfinit.cv, &selfinit.lock);
    pthread_mutex_unlock(&selfinit.lock);
    argus_runtime_finalize();
    PMPI_Finalize();
    if (selfinit.claim[0])
        unlink(selfinit.claim);
    pthread_mutex_lock(&selfinit.lock);
    selfinit.state = SI_DONE;
    pthread_cond_broadcast(&selfinit.cv);
    pthread_mutex_unlock(&selfinit.lock);
    return NULL;
}

/* Finalize through the thread when it owns MPI; 1 when it did. */
static int finalize_on_thread(void)
{
    int owned;

    pthread_mutex_lock(&selfinit.lock);
    if (!wait_while_bounded(SI_STARTING, SI_STARTING)) {
        pthread_mutex_unlock(&selfinit.lock);
        argus_log_once(ARGUS_LOG_WARN, "selfinit-stuck", "MPI_Init on Argus's thread did "
                       "not return in %ld ms; the program exits without it", selfinit.bound_ms);
        return 0;
    }
    owned = selfinit.state == SI_SELF || selfinit.state == SI_DONE;
    if (selfinit.state == SI_SELF) {
        selfinit.fin_req = 1;
        pthread_cond_broadcast(&selfinit.cv);
        if (!wait_while_bounded(SI_SELF, SI_SELF))
            argus_log_once(ARGUS_LOG_WARN, "selfinit-fin",
                           "Argus's MPI_Finalize did not "
                           "return in %ld ms; the program exits without waiting",
                           selfinit.bound_ms);
    }
    pthread_mutex_unlock(&selfinit.lock);
    return owned;
}

static void selfinit_atexit(void)
{
    if (getpid() != selfinit.pid) /* a forked child: MPI belongs to the parent */
        return;
    pthread_mutex_lock(&selfinit.lock);
    if (selfinit.state == SI_WAITING) { /* nothing was initialised: let the thread go */
        selfinit.state = SI_IDLE;
        pthread_cond_broadcast(&selfinit.cv);
    }
    pthread_mutex_unlock(&selfinit.lock);
    finalize_on_thread();
}

int argus_selfinit_claim(int *provided)
{
    int mine = 0;

    if (!selfinit.started || getpid() != selfinit.pid) /* no thread here, or a fork (whose copy of
                                              the lock may have been held at fork time) */
        return 0;
    pthread_mutex_lock(&selfinit.lock);
    if (selfinit.state == SI_WAITING || selfinit.state == SI_IDLE) {
        selfinit.state = SI_APP;
        pthread_cond_broadcast(&selfinit.cv);
    } else {
        wait_while(SI_STARTING, SI_STARTING);
        if (selfinit.state == SI_SELF) {
            mine = 1;
            if (provided)
                *provided = selfinit.provided;
        }
    }
    pthread_mutex_unlock(&selfinit.lock);
    return mine;
}

int argus_selfinit_finalize(void)
{
    if (!selfinit.started || getpid() != selfinit.pid)
        return 0;
    return finalize_on_thread();
}

__attribute__((constructor)) static void selfinit_load(void)
{
    const char *m = getenv("ARGUS_MODE");
    struct argus_config c;
    char err[256];
    pthread_t thr;
    sigset_t all, old;

    if (!m || strcasecmp(m, "on") != 0 || !(launched_by_mpi() || lone_process()))
        return;
    argus_config_defaults(&c);
    (void)argus_config_load(&c, getenv, err, sizeof err); /* runtime.c reports bad values */
    if (!c.mpi_self_init)
        return;
    argus_log_set_level((enum argus_log_level)c.log);
    selfinit.pid = getpid();
    selfinit.wait_ms = c.mpi_self_init_ms;
    selfinit.bound_ms = c.finalize_ms + 20000;
    selfinit.t0 = argus_clock_monotonic_ns();
    selfinit.state = SI_WAITING;
    /* Signals stay with the program's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&thr, NULL, selfinit_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        selfinit.state = SI_IDLE;
        return;
    }
    pthread_detach(thr);
    selfinit.started = 1;
    atexit(selfinit_atexit);
}
