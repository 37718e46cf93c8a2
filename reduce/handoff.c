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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "reduce/window.h"

#define NBUF HANDOFF_NBUF
#define WIN_CAP_MAX (64u << 20)    /* a window buffer never grows past this */

enum { B_FREE = 0, B_FILL, B_READY, B_BUSY };

static struct {
    long window;              /* summaries per window */
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
} ho;

#define SPILL_MAGIC 0x4c505341u /* "ASPL" */
struct spill_hdr {
    uint32_t magic, has_first;
    uint64_t len, window, first_step;
};

int argus_handoff_init(long window, int rank, size_t reserve)
{
    memset(&ho, 0, sizeof ho);
    ho.window = window;
    ho.rank = rank;
    pthread_mutex_init(&ho.mu, NULL);
    pthread_cond_init(&ho.cv, NULL);
    ho.scratch = malloc(sizeof *ho.scratch);
    if (!ho.scratch)
        goto fail;
    for (int i = 0; i < NBUF; i++)
        if (argus_window_init(&ho.bufs[i], i == 0 ? reserve : 4096) != 0)
            goto fail;
    ho.fill = 0;
    ho.bstate[0] = B_FILL;
    ho.spill_fd = -1;
    return 0;
fail:
    argus_handoff_free();
    return -ENOMEM;
}

void argus_handoff_free(void)
{
    for (int i = 0; i < NBUF; i++)
        argus_window_free(&ho.bufs[i]);
    free(ho.scratch);
    free(ho.rbuf);
    if (ho.spill_fd >= 0)
        close(ho.spill_fd);
    pthread_mutex_destroy(&ho.mu);
    pthread_cond_destroy(&ho.cv);
    memset(&ho, 0, sizeof ho);
}

/* ---- producer (application thread) ------------------------------------------------- */

static int find_free(void)
{
    for (int i = 0; i < NBUF; i++)
        if (ho.bstate[i] == B_FREE)
            return i;
    return -1;
}

/* Move the filling window to the ready queue if a free buffer can take its place.
 * Caller holds mu. final: the last window of this rank (always handed over: if no
 * buffer is free it is marked final where it is and queued when one frees up). */
static int spill_write(const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(ho.spill_fd, (const uint8_t *)p + done, n - done,
                           (off_t)(ho.spill_wpos + done));
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    ho.spill_wpos += n;
    return 0;
}

/* No buffer free and no thread to free one: write the filling window to the spill file
 * and start the next window in the same buffer. 0, or -1 (spilling is then off). */
static int spill_locked(void)
{
    int f = ho.fill;
    struct spill_hdr h = {SPILL_MAGIC, (uint32_t)ho.bhas_first[f], ho.bufs[f].len,
                          ho.next_win, ho.bfirst[f]};
    uint64_t at = ho.spill_wpos;
    if (spill_write(&h, sizeof h) != 0 || spill_write(ho.bufs[f].buf, ho.bufs[f].len) != 0) {
        ho.spill_wpos = at;
        argus_log_once(ARGUS_LOG_WARN, "spill-fail", "rank %d: cannot write the node-local "
                       "window file (%s); windows wait in memory", ho.rank, strerror(errno));
        close(ho.spill_fd);
        ho.spill_fd = -1;
        return -1;
    }
    if (ho.unread++ == 0)
        ho.spill_next = ho.next_win;
    ho.spilled++;
    ho.next_win++;
    ho.steps_in_fill = 0;
    argus_window_reset(&ho.bufs[f]);
    ho.bhas_first[f] = 0;
    return 0;
}

static void handoff_locked(int final)
{
    int nf = find_free();

    if (nf < 0 && !final && ho.spill_fd >= 0 && spill_locked() == 0)
        return;      /* no thread: the window waits on disk, this buffer starts the next */
    if (nf < 0 && !final)
        return;      /* the thread is behind: keep filling this window */
    int f = ho.fill;
    ho.bstate[f] = B_READY;
    ho.bwin[f] = ho.next_win++;
    ho.bfinal[f] = final;
    ho.rq[ho.rq_n++] = f;
    ho.steps_in_fill = 0;
    if (nf >= 0) {
        ho.fill = nf;
        ho.bstate[nf] = B_FILL;
        argus_window_reset(&ho.bufs[nf]);
        ho.bhas_first[nf] = 0;
    } else {
        ho.fill = -1;
    }
    pthread_cond_broadcast(&ho.cv);
}

void argus_handoff_push_summary(const struct argus_step_summary *s, int64_t off)
{
    pthread_mutex_lock(&ho.mu);
    if (ho.fill < 0) {
        pthread_mutex_unlock(&ho.mu);
        return;
    }
    struct argus_window *w = &ho.bufs[ho.fill];
    if (ho.scratch && off != s->clock_offset_ns) {
        size_t n = offsetof(struct argus_step_summary, kmodes) +
                   (size_t)s->n_kmodes * sizeof s->kmodes[0];
        memcpy(ho.scratch, s, n);
        ho.scratch->clock_offset_ns = off;
        s = ho.scratch;
    }
    if (w->cap > WIN_CAP_MAX || argus_window_add_summary(w, s) != 0) {
        atomic_fetch_add(&ho.dropped, 1);
        argus_log_once(ARGUS_LOG_WARN, "win-full", "rank %d: window buffer full or out of "
                       "memory; step summaries are dropped", ho.rank);
    } else if (!ho.bhas_first[ho.fill]) {
        ho.bhas_first[ho.fill] = 1;
        ho.bfirst[ho.fill] = s->step;
    }
    if (++ho.steps_in_fill >= (uint32_t)ho.window)
        handoff_locked(0);
    pthread_mutex_unlock(&ho.mu);
}

void argus_handoff_push_name(uint64_t hash, const char *name)
{
    pthread_mutex_lock(&ho.mu);
    if (ho.fill >= 0 && argus_window_add_name(&ho.bufs[ho.fill], hash, name) != 0)
        argus_log_once(ARGUS_LOG_WARN, "name-oom", "rank %d: out of memory for kernel names",
                       ho.rank);
    pthread_mutex_unlock(&ho.mu);
}

void argus_handoff_push_rankinfo(const struct argus_rank_info *ri)
{
    pthread_mutex_lock(&ho.mu);
    if (ho.fill >= 0)
        argus_window_add_rankinfo(&ho.bufs[ho.fill], ri);
    pthread_mutex_unlock(&ho.mu);
}

void argus_handoff_close(void)
{
    pthread_mutex_lock(&ho.mu);
    if (ho.fill >= 0)
        handoff_locked(1);
    else if (ho.rq_n > 0) /* impossible: final already queued */
        ho.bfinal[ho.rq[ho.rq_n - 1]] = 1;
    pthread_mutex_unlock(&ho.mu);
}

uint64_t argus_handoff_dropped(void)
{
    return atomic_load(&ho.dropped);
}

/* ---- consumer (Argus thread, or the finishing thread without one) ------------------ */

/* Read the next spilled window into rbuf (mu held). 1 done, 0 on a read error (the
 * remaining spilled windows are lost, said once). */
static int spill_pop_locked(struct argus_handoff_win *w)
{
    struct spill_hdr h;
    if (pread(ho.spill_fd, &h, sizeof h, (off_t)ho.spill_rpos) != (ssize_t)sizeof h ||
        h.magic != SPILL_MAGIC || h.window != ho.spill_next || h.len > WIN_CAP_MAX)
        goto bad;
    if (h.len > ho.rcap) {
        uint8_t *p = realloc(ho.rbuf, h.len);
        if (!p)
            goto bad;
        ho.rbuf = p;
        ho.rcap = h.len;
    }
    if (h.len && pread(ho.spill_fd, ho.rbuf, h.len, (off_t)(ho.spill_rpos + sizeof h)) !=
                     (ssize_t)h.len)
        goto bad;
    ho.spill_rpos += sizeof h + h.len;
    ho.unread--;
    ho.spill_next++;
    *w = (struct argus_handoff_win){ho.rbuf, h.len, h.window, h.first_step,
                                    (int)h.has_first, 0, -1};
    return 1;
bad:
    argus_log_once(ARGUS_LOG_WARN, "spill-read", "rank %d: cannot read back %llu windows "
                   "from the node-local file; they are lost", ho.rank,
                   (unsigned long long)ho.unread);
    atomic_fetch_add(&ho.dropped, ho.unread * (uint64_t)ho.window);
    ho.unread = 0;
    return 0;
}

int argus_handoff_pop(struct argus_handoff_win *w)
{
    pthread_mutex_lock(&ho.mu);
    /* Spilled windows come between the queued ones before and after them: by id. */
    if (ho.unread && (ho.rq_n == 0 || ho.spill_next < ho.bwin[ho.rq[0]]) &&
        spill_pop_locked(w)) {
        pthread_mutex_unlock(&ho.mu);
        return 1;
    }
    if (ho.rq_n == 0) {
        pthread_mutex_unlock(&ho.mu);
        return 0;
    }
    int b = ho.rq[0];
    memmove(&ho.rq[0], &ho.rq[1], (size_t)(--ho.rq_n) * sizeof ho.rq[0]);
    ho.bstate[b] = B_BUSY;
    w->data = ho.bufs[b].buf;
    w->len = ho.bufs[b].len;
    w->window = ho.bwin[b];
    w->first_step = ho.bfirst[b];
    w->has_first = ho.bhas_first[b];
    w->final = ho.bfinal[b];
    w->slot = b;
    pthread_mutex_unlock(&ho.mu);
    return 1;
}

void argus_handoff_release(const struct argus_handoff_win *w)
{
    int b = w->slot;

    if (b < 0) /* a spilled window: rbuf is reused by the next one */
        return;
    pthread_mutex_lock(&ho.mu);
    argus_window_reset(&ho.bufs[b]);
    ho.bstate[b] = B_FREE;
    if (ho.fill < 0) { /* a final window waited for a buffer */
        ho.fill = b;
        ho.bstate[b] = B_FILL;
        ho.bhas_first[b] = 0;
    }
    pthread_mutex_unlock(&ho.mu);
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
    pthread_mutex_lock(&ho.mu);
    if (ho.rq_n == 0)
        pthread_cond_timedwait(&ho.cv, &ho.mu, &until);
    pthread_mutex_unlock(&ho.mu);
}

void argus_handoff_kick(void)
{
    pthread_mutex_lock(&ho.mu);
    pthread_cond_broadcast(&ho.cv);
    pthread_mutex_unlock(&ho.mu);
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
    pthread_mutex_lock(&ho.mu);
    ho.spill_fd = fd;
    pthread_mutex_unlock(&ho.mu);
    return 0;
}

uint64_t argus_handoff_spilled(void)
{
    pthread_mutex_lock(&ho.mu);
    uint64_t n = ho.spilled;
    pthread_mutex_unlock(&ho.mu);
    return n;
}
