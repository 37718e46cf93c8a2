/* handoff.c — the application-thread → Argus-thread window ring (see handoff.h): the
 * window buffers, their states and the ready queue behind one mutex, with push / pop /
 * release and the dropped-summary count. Must never abort, exit or call MPI.
 */
#include "reduce/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "reduce/window.h"

#define NBUF HANDOFF_NBUF
/* A window buffer holds at most window x the largest summary plus this much for kernel
 * names and rank info: every ARGUS_WINDOW in the documented range fits, whatever it is. */
#define WIN_CAP_SLACK ((size_t)64 << 20)

enum { B_FREE = 0, B_FILL, B_READY, B_BUSY };

static struct {
    long window;              /* summaries per window */
    size_t cap_max;           /* a window buffer never holds more bytes than this */
    int rank;                 /* for log lines */
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* app -> consumer: a window is ready (or a kick) */
    struct argus_window bufs[NBUF];
    int bstate[NBUF];
    uint64_t bwin[NBUF], bfirst[NBUF];
    int bfinal[NBUF], bhas_first[NBUF];
    int fill;
    uint32_t steps_in_fill;
    uint64_t next_win;        /* id of the window being filled */
    int rq[NBUF], rq_n;       /* ready queue (window ids ascending) */
    struct argus_step_summary *scratch; /* for clock-offset stamping, app thread only */
    _Atomic uint64_t dropped; /* summaries dropped (buffer full / out of memory) */
    /* Without an Argus thread nothing is consumed before MPI_Finalize: windows that find
     * no free buffer go to a node-local, already unlinked file and are read back in
     * order by pop (argus_handoff_spill_to_file). */
    int spill_fd;             /* -1: off */
    uint64_t spill_wpos, spill_rpos;
    uint64_t spilled, unread; /* windows written; not yet popped */
    uint64_t spill_next;      /* id of the next unread spilled window */
    uint8_t *rbuf;            /* a spilled window read back (consumer) */
    size_t rcap;
} handoff;

#define SPILL_MAGIC 0x4c505341u /* "ASPL" */
struct spill_hdr {
    uint32_t magic, has_first;
    uint64_t len, window, first_step;
};

size_t argus_handoff_cap_max(long window)
{
    const size_t per = argus_summary_encoded_max(ARGUS_MAX_KMODES);
    const size_t w = window > 0 ? (size_t)window : 1;

    return w > (SIZE_MAX - WIN_CAP_SLACK) / per ? SIZE_MAX : w * per + WIN_CAP_SLACK;
}

int argus_handoff_init(long window, int rank, size_t reserve)
{
    memset(&handoff, 0, sizeof handoff);
    handoff.window = window;
    handoff.cap_max = argus_handoff_cap_max(window);
    handoff.rank = rank;
    pthread_mutex_init(&handoff.mu, NULL);
    pthread_cond_init(&handoff.cv, NULL);
    handoff.scratch = malloc(sizeof *handoff.scratch);
    if (!handoff.scratch)
        goto fail;
    for (int i = 0; i < NBUF; i++)
        if (argus_window_init(&handoff.bufs[i], i == 0 ? reserve : 4096) != 0)
            goto fail;
    handoff.fill = 0;
    handoff.bstate[0] = B_FILL;
    handoff.spill_fd = -1;
    return 0;
fail:
    argus_handoff_free();
    return -ENOMEM;
}

void argus_handoff_free(void)
{
    for (int i = 0; i < NBUF; i++)
        argus_window_free(&handoff.bufs[i]);
    free(handoff.scratch);
    free(handoff.rbuf);
    if (handoff.spill_fd >= 0)
        close(handoff.spill_fd);
    pthread_mutex_destroy(&handoff.mu);
    pthread_cond_destroy(&handoff.cv);
    memset(&handoff, 0, sizeof handoff);
}

/* ---- producer (application thread) ------------------------------------------------- */

static int find_free(void)
{
    for (int i = 0; i < NBUF; i++)
        if (handoff.bstate[i] == B_FREE)
            return i;
    return -1;
}

/* Move the filling window to the ready queue if a free buffer can take its place.
 * Caller holds mu. final: the last window of this rank (always handed over: if no
 * buffer is free it is marked final where it is and queued when one frees up). */
static int spill_write(const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(handoff.spill_fd, (const uint8_t *)p + done, n - done,
                           (off_t)(handoff.spill_wpos + done));
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    handoff.spill_wpos += n;
    return 0;
}

/* No buffer free and no thread to free one: write the filling window to the spill file
 * and start the next window in the same buffer. 0, or -1 (spilling is then off). */
static int spill_locked(void)
{
    int f = handoff.fill;
    struct spill_hdr h = {SPILL_MAGIC, (uint32_t)handoff.bhas_first[f], handoff.bufs[f].len,
                          handoff.next_win, handoff.bfirst[f]};
    uint64_t at = handoff.spill_wpos;
    if (spill_write(&h, sizeof h) != 0
        || spill_write(handoff.bufs[f].buf, handoff.bufs[f].len) != 0) {
        handoff.spill_wpos = at;
        argus_log_once(ARGUS_LOG_WARN, "spill-fail", "rank %d: cannot write the node-local "
                       "window file (%s); windows wait in memory", handoff.rank, strerror(errno));
        close(handoff.spill_fd);
        handoff.spill_fd = -1;
        return -1;
    }
    if (handoff.unread++ == 0)
        handoff.spill_next = handoff.next_win;
    handoff.spilled++;
    handoff.next_win++;
    handoff.steps_in_fill = 0;
    argus_window_reset(&handoff.bufs[f]);
    handoff.bhas_first[f] = 0;
    return 0;
}

static void handoff_locked(int final)
{
    int nf = find_free();

    if (nf < 0 && !final && handoff.spill_fd >= 0 && spill_locked() == 0)
        return;      /* no thread: the window waits on disk, this buffer starts the next */
    if (nf < 0 && !final)
        return;      /* the thread is behind: keep filling this window */
    int f = handoff.fill;
    handoff.bstate[f] = B_READY;
    handoff.bwin[f] = handoff.next_win++;
    handoff.bfinal[f] = final;
    handoff.rq[handoff.rq_n++] = f;
    handoff.steps_in_fill = 0;
    if (nf >= 0) {
        handoff.fill = nf;
        handoff.bstate[nf] = B_FILL;
        argus_window_reset(&handoff.bufs[nf]);
        handoff.bhas_first[nf] = 0;
    } else {
        handoff.fill = -1;
    }
    pthread_cond_broadcast(&handoff.cv);
}

void argus_handoff_push_summary(const struct argus_step_summary *s, int64_t off)
{
    pthread_mutex_lock(&handoff.mu);
    if (handoff.fill < 0) {
        pthread_mutex_unlock(&handoff.mu);
        return;
    }
    struct argus_window *w = &handoff.bufs[handoff.fill];
    if (handoff.scratch && off != s->clock_offset_ns) {
        size_t n = offsetof(struct argus_step_summary, kmodes) +
                   (size_t)s->n_kmodes * sizeof s->kmodes[0];
        memcpy(handoff.scratch, s, n);
        handoff.scratch->clock_offset_ns = off;
        s = handoff.scratch;
    }
    if (w->len + argus_summary_encoded_max(s->n_kmodes) > handoff.cap_max ||
        argus_window_add_summary(w, s) != 0) {
        atomic_fetch_add(&handoff.dropped, 1);
        argus_log_once(ARGUS_LOG_WARN, "win-full", "rank %d: window buffer full or out of "
                       "memory; step summaries are dropped", handoff.rank);
    } else if (!handoff.bhas_first[handoff.fill]) {
        handoff.bhas_first[handoff.fill] = 1;
        handoff.bfirst[handoff.fill] = s->step;
    }
    if (++handoff.steps_in_fill >= (uint32_t)handoff.window)
        handoff_locked(0);
    pthread_mutex_unlock(&handoff.mu);
}

void argus_handoff_push_name(uint64_t hash, const char *name)
{
    pthread_mutex_lock(&handoff.mu);
    if (handoff.fill >= 0 && argus_window_add_name(&handoff.bufs[handoff.fill], hash, name) != 0)
        argus_log_once(ARGUS_LOG_WARN, "name-oom", "rank %d: out of memory for kernel names",
                       handoff.rank);
    pthread_mutex_unlock(&handoff.mu);
}

void argus_handoff_push_rankinfo(const struct argus_rank_info *ri)
{
    pthread_mutex_lock(&handoff.mu);
    if (handoff.fill >= 0)
        argus_window_add_rankinfo(&handoff.bufs[handoff.fill], ri);
    pthread_mutex_unlock(&handoff.mu);
}

void argus_handoff_close(void)
{
    pthread_mutex_lock(&handoff.mu);
    if (handoff.fill >= 0)
        handoff_locked(1);
    else if (handoff.rq_n > 0) /* impossible: final already queued */
        handoff.bfinal[handoff.rq[handoff.rq_n - 1]] = 1;
    pthread_mutex_unlock(&handoff.mu);
}

uint64_t argus_handoff_dropped(void)
{
    return atomic_load(&handoff.dropped);
}

/* ---- consumer (Argus thread, or the finishing thread without one) ------------------ */

/* Read the next spilled window into rbuf (mu held). 1 done, 0 on a read error (the
 * remaining spilled windows are lost, said once). */
static int spill_pop_locked(struct argus_handoff_win *w)
{
    struct spill_hdr h;
    if (pread(handoff.spill_fd, &h, sizeof h, (off_t)handoff.spill_rpos) != (ssize_t)sizeof h ||
        h.magic != SPILL_MAGIC || h.window != handoff.spill_next || h.len > handoff.cap_max)
        goto bad;
    if (h.len > handoff.rcap) {
        uint8_t *p = realloc(handoff.rbuf, h.len);
        if (!p)
            goto bad;
        handoff.rbuf = p;
        handoff.rcap = h.len;
    }
    if (h.len
        && pread(handoff.spill_fd, handoff.rbuf, h.len, (off_t)(handoff.spill_rpos + sizeof h))
               != (ssize_t)h.len)
        goto bad;
    handoff.spill_rpos += sizeof h + h.len;
    handoff.unread--;
    handoff.spill_next++;
    *w = (struct argus_handoff_win){handoff.rbuf, h.len, h.window, h.first_step,
                                    (int)h.has_first, 0, -1};
    return 1;
bad:
    argus_log_once(ARGUS_LOG_WARN, "spill-read", "rank %d: cannot read back %llu windows "
                   "from the node-local file; they are lost", handoff.rank,
                   (unsigned long long)handoff.unread);
    atomic_fetch_add(&handoff.dropped, handoff.unread * (uint64_t)handoff.window);
    handoff.unread = 0;
    return 0;
}

int argus_handoff_pop(struct argus_handoff_win *w)
{
    pthread_mutex_lock(&handoff.mu);
    /* Spilled windows come between the queued ones before and after them: by id. */
    if (handoff.unread && (handoff.rq_n == 0 || handoff.spill_next < handoff.bwin[handoff.rq[0]]) &&
        spill_pop_locked(w)) {
        pthread_mutex_unlock(&handoff.mu);
        return 1;
    }
    if (handoff.rq_n == 0) {
        pthread_mutex_unlock(&handoff.mu);
        return 0;
    }
    int b = handoff.rq[0];
    memmove(&handoff.rq[0], &handoff.rq[1], (size_t)(--handoff.rq_n) * sizeof handoff.rq[0]);
    handoff.bstate[b] = B_BUSY;
    w->data = handoff.bufs[b].buf;
    w->len = handoff.bufs[b].len;
    w->window = handoff.bwin[b];
    w->first_step = handoff.bfirst[b];
    w->has_first = handoff.bhas_first[b];
    w->final = handoff.bfinal[b];
    w->slot = b;
    pthread_mutex_unlock(&handoff.mu);
    return 1;
}

void argus_handoff_release(const struct argus_handoff_win *w)
{
    int b = w->slot;

    if (b < 0) /* a spilled window: rbuf is reused by the next one */
        return;
    pthread_mutex_lock(&handoff.mu);
    argus_window_reset(&handoff.bufs[b]);
    handoff.bstate[b] = B_FREE;
    if (handoff.fill < 0) { /* a final window waited for a buffer */
        handoff.fill = b;
        handoff.bstate[b] = B_FILL;
        handoff.bhas_first[b] = 0;
    }
    pthread_mutex_unlock(&handoff.mu);
}

void argus_handoff_wait(long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec += ns % 1000000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&handoff.mu);
    if (handoff.rq_n == 0)
        pthread_cond_timedwait(&handoff.cv, &handoff.mu, &until);
    pthread_mutex_unlock(&handoff.mu);
}

void argus_handoff_kick(void)
{
    pthread_mutex_lock(&handoff.mu);
    pthread_cond_broadcast(&handoff.cv);
    pthread_mutex_unlock(&handoff.mu);
}

int argus_handoff_spill_to_file(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    int fd;

    snprintf(path, sizeof path, "%s/argus-windows-XXXXXX", dir && *dir ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return -errno;
    unlink(path); /* gone with the process, whatever happens */
    pthread_mutex_lock(&handoff.mu);
    handoff.spill_fd = fd;
    pthread_mutex_unlock(&handoff.mu);
    return 0;
}

uint64_t argus_handoff_spilled(void)
{
    pthread_mutex_lock(&handoff.mu);
    uint64_t n = handoff.spilled;
    pthread_mutex_unlock(&handoff.mu);
    return n;
}
