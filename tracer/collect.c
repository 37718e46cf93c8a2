/* collect.c — the GPU-activity collector of collect.h: buffer pool and completed-buffer
 * queue (CUPTI callbacks), mark queue, drain thread, staging and the one-step-behind
 * replay into the summariser. Must not allocate after create, must not block the
 * application thread beyond one short mutex, must not log per event, never exits.
 *
 * Step assignment, by launch: when both marks of a step carry a CUPTI correlation id
 * (the adapter's one marker call per step mark), an activity belongs to the step whose
 * [begin, end) correlation interval holds its own correlation id, i.e. the step whose host
 * code launched it, however far the GPU runs behind (ids compared modulo 2^32). The
 * step's window is then its GPU span: it begins at wb = max(host begin, the previous
 * step's window end) and ends at max(wb + the host's step length, its last activity's
 * end), so consecutive windows tile the GPU's time; the step's phase marks move with it
 * by (wb - host begin). One pass over the staging per step. A
 * launch-assigned step is replayed once a later end has been seen and flushed and an
 * activity launched after its end has been walked (so its own have finished), or when
 * LAG_MAX finished steps wait, or the staging is half full, or at stop.
 * Fallback, by time (marks without a correlation id, inferred steps, activities without
 * one): an activity belongs to the step whose [begin, end) host-mark interval holds its
 * start time (both on the CUPTI timebase); the step is replayed once the end mark of a
 * later step has been seen and flushed, or at stop. Activities before the step being
 * replayed (launched or started before it) are counted in `outside`.
 */
#include "tracer/collect.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/clock.h"
#include "common/kclass.h"
#include "common/types.h"
#include "tracer/period.h"
#include "tracer/ring.h"

#define MARKS_MAX 4096
#define CLS_CACHE 4096
#define DRAIN_PERIOD_MS 200
#define LAG_MAX 64 /* finished launch-assigned steps waiting at most */

/* mark.lc: how the mark's correlation id counts. */
#define LC_NONE 0 /* no id: time-based */
#define LC_ID 1   /* corr is the marker's id */
#define LC_ALL 2  /* a synthesized end at stop: every activity launched so far */

struct mark {
    uint64_t step, t;
    uint32_t corr;
    uint8_t kind, phase, lc;
};

/* kclass: enum argus_kclass for memcpy/memset (by kind), KC_BY_NAME for kernels: the
 * summariser classes those by name (argus_summarizer_kernel_named) as it files them. */
struct staged {
    const char *name;
    uint64_t start, end, bytes;
    uint32_t device, stream, corr;
    uint8_t kclass;
};
#define KC_BY_NAME UINT8_MAX

struct full_buf {
    uint32_t idx;
    size_t valid;
};

struct cls_slot {
    const char *p;
    uint8_t cls;
};

struct argus_collect {
    struct argus_collect_opts o;
    uint8_t *mem;
    pthread_mutex_t lock; /* pool, full queue, mark queue, stats read */
    pthread_cond_t wake;
    uint32_t *free_idx;
    size_t n_free;
    struct full_buf *full; /* ring of n_bufs */
    size_t full_head, full_n;
    struct mark marks[MARKS_MAX]; /* queue from any thread */
    size_t marks_n;
    int end_seen; /* a step end was queued since the last flush */
    int stop, running;
    pthread_t thr;

    /* Drain-thread state. */
    struct mark pend[MARKS_MAX];
    size_t pend_n;
    int host_open;     /* a step begin without end in pend */
    uint64_t host_step;
    int saw_marks;     /* the program marks steps itself: no inference */
    struct staged *stage;
    size_t stage_off, stage_n; /* the staged activities: stage[stage_off, + stage_n) */
    struct cls_slot cls[CLS_CACHE];
    uint64_t last_dropped;
    uint64_t last_overhead_ns; /* st.act.overhead_ns at the last summarised step end */
    uint64_t gpu_end;          /* the end of the last launch-assigned step's window */
    uint32_t max_corr;         /* the newest correlation id walked (have_corr: any) */
    int have_corr;
    struct argus_collect_stats st;
};

/* A kernel's class where no summariser classes it: for period detection (before the
 * program marks steps) and for the ring of a step replayed without a summariser; cached
 * by name pointer (CUPTI's never change: act.h). */
static int kclass_cached(struct argus_collect *c, const char *name)
{
    uint64_t h = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
    struct cls_slot *s = &c->cls[h >> 52]; /* 12 bits */
    if (s->p != name) {
        s->p = name;
        s->cls = (uint8_t)argus_kclass_from_name(name);
    }
    return s->cls;
}

/* Correlation ids grow by one per API call and wrap at 2^32: a before b. */
static inline int corr_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

int argus_collect_create(const struct argus_collect_opts *o, struct argus_collect **out)
{
    struct argus_collect *c;

    if (!o || !out || !o->walk || o->buf_size < 4096 || o->buf_size % 8 || o->n_bufs < 2 ||
        o->n_bufs > UINT32_MAX || o->max_stage == 0)
        return -EINVAL;
    *out = NULL;
    c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->o = *o;
    c->mem = aligned_alloc(64, o->n_bufs * o->buf_size);
    c->free_idx = calloc(o->n_bufs, sizeof *c->free_idx);
    c->full = calloc(o->n_bufs, sizeof *c->full);
    c->stage = calloc(o->max_stage, sizeof *c->stage);
    if (!c->mem || !c->free_idx || !c->full || !c->stage) {
        free(c->mem);
        free(c->free_idx);
        free(c->full);
        free(c->stage);
        free(c);
        return -ENOMEM;
    }
    for (size_t i = 0; i < o->n_bufs; i++)
        c->free_idx[c->n_free++] = (uint32_t)(o->n_bufs - 1 - i);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    *out = c;
    return 0;
}

void argus_collect_free(struct argus_collect *c)
{
    if (!c)
        return;
    argus_collect_stop(c);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    free(c->mem);
    free(c->free_idx);
    free(c->full);
    free(c->stage);
    free(c);
}

/* ---- CUPTI-facing (application threads) ------------------------------------------- */

int argus_collect_buf_get(struct argus_collect *c, uint8_t **buf, size_t *size)
{
    int rc = -ENOBUFS;

    *buf = NULL;
    *size = 0;
    if (!c)
        return rc;
    pthread_mutex_lock(&c->lock);
    c->st.buf_requests++;
    if (c->n_free) {
        uint32_t i = c->free_idx[--c->n_free];
        *buf = c->mem + (size_t)i * c->o.buf_size;
        *size = c->o.buf_size;
        rc = 0;
    } else {
        c->st.buf_empty++;
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void argus_collect_buf_done(struct argus_collect *c, uint8_t *buf, size_t valid)
{
    size_t off;

    if (!c || !buf || buf < c->mem)
        return;
    off = (size_t)(buf - c->mem);
    if (off >= c->o.n_bufs * c->o.buf_size || off % c->o.buf_size)
        return; /* not ours */
    if (valid > c->o.buf_size)
        valid = c->o.buf_size;
    pthread_mutex_lock(&c->lock);
    c->full[(c->full_head + c->full_n) % c->o.n_bufs] =
        (struct full_buf){(uint32_t)(off / c->o.buf_size), valid};
    c->full_n++; /* at most n_bufs: every buffer is either free, lent or full */
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
}

void argus_collect_mark_corr(struct argus_collect *c, enum argus_mark_kind kind,
                             uint64_t step, uint64_t t_ns, unsigned phase, uint32_t corr)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->marks_n < MARKS_MAX) {
        c->marks[c->marks_n++] = (struct mark){step, t_ns, corr, (uint8_t)kind, (uint8_t)phase,
                                               corr ? LC_ID : LC_NONE};
        if (kind == ARGUS_MARK_STEP_END || kind == ARGUS_MARK_STEP_BEGIN) {
            c->end_seen = 1;
            pthread_cond_signal(&c->wake);
        }
    } else {
        c->st.marks_lost++;
    }
    pthread_mutex_unlock(&c->lock);
}

void argus_collect_mark(struct argus_collect *c, enum argus_mark_kind kind, uint64_t step,
                        uint64_t t_ns, unsigned phase)
{
    argus_collect_mark_corr(c, kind, step, t_ns, phase, 0);
}

/* ---- drain thread ------------------------------------------------------------------- */

static void pend_add(struct argus_collect *c, struct mark m)
{
    if (c->pend_n >= MARKS_MAX) {
        c->st.marks_lost++;
        return;
    }
    c->pend[c->pend_n++] = m;
}

/* Normalise a step mark into pend: a begin while open first ends the open step. */
static void pend_step(struct argus_collect *c, const struct mark *m)
{
    if (m->kind == ARGUS_MARK_STEP_BEGIN) {
        if (c->host_open) /* the new begin's marker ends the open step as well */
            pend_add(c, (struct mark){c->host_step, m->t, m->corr, ARGUS_MARK_STEP_END, 0,
                                      m->lc});
        c->host_open = 1;
        c->host_step = m->step;
        pend_add(c, *m);
    } else if (c->host_open && m->step == c->host_step) {
        c->host_open = 0;
        pend_add(c, *m);
    }
}

static void on_act(void *ctx, const struct argus_act *a)
{
    struct argus_collect *c = ctx;
    int cls = a->kind == ARGUS_ACT_MEMCPY   ? ARGUS_KC_MEMCPY
              : a->kind == ARGUS_ACT_MEMSET ? ARGUS_KC_MEMSET
                                            : KC_BY_NAME;

    if (!c->saw_marks && c->o.period && a->kind == ARGUS_ACT_KERNEL) {
        uint64_t id = (uint64_t)(uintptr_t)a->name;
        int coll = kclass_cached(c, a->name) == ARGUS_KC_COLLECTIVE;
        if (argus_period_push(c->o.period, id, coll) == 1) {
            c->st.inferred_steps++;
            uint64_t n = c->host_open ? c->host_step + 1 : 1;
            pend_step(c, &(struct mark){n, a->start_ns, 0, ARGUS_MARK_STEP_BEGIN, 0,
                                        LC_NONE});
        }
    }
    if (a->corr && (!c->have_corr || corr_before(c->max_corr, a->corr))) {
        c->max_corr = a->corr;
        c->have_corr = 1;
    }
    if (c->stage_off + c->stage_n >= c->o.max_stage) {
        if (c->stage_n >= c->o.max_stage) {
            c->st.stage_full++;
            return;
        }
        memmove(c->stage, c->stage + c->stage_off, c->stage_n * sizeof *c->stage);
        c->stage_off = 0; /* each entry moves at most once per pass over the array */
    }
    c->stage[c->stage_off + c->stage_n++] = (struct staged){a->name, a->start_ns, a->end_ns, a->bytes,
                                             a->device, a->stream, a->corr, (uint8_t)cls};
}

static void walk_full(struct argus_collect *c, int final)
{
    for (;;) {
        struct full_buf fb;
        pthread_mutex_lock(&c->lock);
        if (!c->full_n) {
            pthread_mutex_unlock(&c->lock);
            break;
        }
        fb = c->full[c->full_head];
        c->full_head = (c->full_head + 1) % c->o.n_bufs;
        c->full_n--;
        pthread_mutex_unlock(&c->lock);
        c->o.walk(c->mem + (size_t)fb.idx * c->o.buf_size, fb.valid, &c->st.act, on_act, c);
        pthread_mutex_lock(&c->lock);
        c->free_idx[c->n_free++] = fb.idx;
        pthread_mutex_unlock(&c->lock);
    }
    (void)final;
}

/* Where a staged activity goes when the step [pend[bi], pend[ei]] is replayed. */
enum { GO_KEEP, GO_STEP, GO_OUTSIDE };

/* The step's bounds, copied out of pend so that the loop over the staging keeps them in
 * registers (its stores into the staging could otherwise alias them). */
struct bounds {
    uint64_t tb, te;  /* host marks */
    uint32_t cb, ce;  /* correlation ids (by launch) */
    int by_launch, open_end; /* open_end: the end takes every later id (LC_ALL) */
};

static inline int place(const struct staged *s, struct bounds k)
{
    if (k.by_launch && s->corr) {
        if (!k.open_end && !corr_before(s->corr, k.ce))
            return GO_KEEP;
        return corr_before(s->corr, k.cb) ? GO_OUTSIDE : GO_STEP;
    }
    if (s->start >= k.te)
        return GO_KEEP;
    return s->start < k.tb ? GO_OUTSIDE : GO_STEP;
}

/* Replay the step whose begin is pend[bi] and end pend[ei], then drop consumed marks. */
static void replay(struct argus_collect *c, size_t bi, size_t ei)
{
    const struct mark *mb = &c->pend[bi], *me = &c->pend[ei];
    const int by_launch = mb->lc == LC_ID && me->lc != LC_NONE;
    const struct bounds k = {mb->t, me->t, mb->corr, me->corr, by_launch, me->lc != LC_ID};
    uint64_t we = 0; /* by launch: the latest end of the step's activities so far */
    uint64_t n_acts = 0;
    uint64_t b = mb->t, e = me->t, n = mb->step, shift = 0;
    struct argus_summarizer *sm = c->o.acquire ? c->o.acquire() : NULL;
    size_t keep = 0;

    if (e < b)
        e = b;
    if (by_launch) { /* the window's begin (file comment); its end comes with the kernels */
        uint64_t wb = b > c->gpu_end ? b : c->gpu_end;
        shift = wb - b;
        b = wb;
        e += shift; /* the host's step length at least */
        c->st.steps_by_launch++;
    } else {
        c->st.steps_by_time++;
    }
    for (size_t i = 0; i < ei; i++) {
        const struct mark *m = &c->pend[i];
        uint64_t t = m->t + shift;
        if (i == bi && sm)
            argus_summarizer_step_begin(sm, n, b);
        if (!sm || i == bi)
            continue;
        t = t < b ? b : t > e ? e : t;
        if (m->kind == ARGUS_MARK_PHASE_PUSH)
            argus_summarizer_phase_push(sm, argus_phase_name(m->phase), t);
        else if (m->kind == ARGUS_MARK_PHASE_POP)
            argus_summarizer_phase_pop(sm, t);
    }
    we = e;
    /* Kept activities stay where they are while no taken one lies between them (the
     * usual case: the step's own come first), and close up behind the first gap. */
    struct staged *const stage = c->stage;
    struct argus_ring *const ring = c->o.ring;
    const size_t i0 = c->stage_off, i1 = c->stage_off + c->stage_n;
    size_t first = SIZE_MAX; /* the first kept one; keep: where the next kept one goes */
    uint64_t outside = 0;
    for (size_t i = i0; i < i1; i++) {
        const struct staged *s = &stage[i];
        int go = place(s, k);
        if (go == GO_KEEP) {
            if (first == SIZE_MAX)
                first = keep = i;
            else if (keep != i)
                stage[keep] = *s;
            keep++;
            continue;
        }
        if (go == GO_OUTSIDE) {
            outside++;
            continue;
        }
        n_acts++;
        if (s->end > we)
            we = s->end; /* used by launch only */
        /* CUPTI kernel names and our literals never change (act.h): the _static and
         * _named entry points; a kernel's class is its name's, the summariser's */
        int cls = s->kclass;
        if (cls != KC_BY_NAME) {
            if (sm)
                argus_summarizer_kernel_static(sm, s->name, s->start, s->end, s->device,
                                               s->stream, cls);
        } else if (sm) {
            cls = argus_summarizer_kernel_named(sm, s->name, s->start, s->end, s->device,
                                                s->stream);
        } else if (ring) {
            cls = kclass_cached(c, s->name);
        }
        if (ring)
            argus_ring_add(ring, &(struct argus_ring_ev){s->name, n, s->start, s->end,
                                                        s->bytes, s->device, s->stream,
                                                        s->corr, (uint8_t)cls});
    }
    c->stage_off = first == SIZE_MAX ? 0 : first;
    c->stage_n = first == SIZE_MAX ? 0 : keep - first;
    c->st.outside += outside;
    if (!c->st.steps || n_acts < c->st.acts_min)
        c->st.acts_min = n_acts;
    if (n_acts > c->st.acts_max)
        c->st.acts_max = n_acts;
    if (by_launch)
        c->gpu_end = e = we;
    if (sm) {
        uint64_t d = c->o.dropped ? c->o.dropped() : 0;
        argus_summarizer_add_dropped(sm, d);
        c->st.act.dropped += d;
        /* CUPTI's overhead records walked since the last step end go to this step. */
        argus_summarizer_add_overhead(sm, c->st.act.overhead_ns - c->last_overhead_ns);
        c->last_overhead_ns = c->st.act.overhead_ns;
        if (!c->saw_marks)
            argus_summarizer_add_flags(sm, ARGUS_SF_STEP_INFERRED);
        argus_summarizer_step_end(sm, n, e);
        if (c->o.release)
            c->o.release();
    } else {
        c->st.unsummarised++;
    }
    c->st.steps++;
    memmove(c->pend, c->pend + ei + 1, (c->pend_n - ei - 1) * sizeof *c->pend);
    c->pend_n -= ei + 1;
}

/* Whether the oldest finished step (end mark me, finished: steps ending in pend, this
 * one included) may be replayed before stop: a later end was seen; for a step assigned
 * by launch also an activity launched after its end was walked, or too much waits. */
static int ready(const struct argus_collect *c, const struct mark *me, size_t finished)
{
    if (finished < 2)
        return 0;
    if (me->lc != LC_ID)
        return 1;
    return (c->have_corr && !corr_before(c->max_corr, me->corr)) || finished > LAG_MAX ||
           c->stage_n >= c->o.max_stage / 2;
}

/* Replay finished steps: all when final, else those ready() admits, oldest first. */
static void replay_ready(struct argus_collect *c, int final)
{
    for (;;) {
        size_t bi = SIZE_MAX, ei = SIZE_MAX, finished = 0;
        for (size_t i = 0; i < c->pend_n; i++) {
            if (c->pend[i].kind == ARGUS_MARK_STEP_BEGIN && bi == SIZE_MAX)
                bi = i;
            else if (c->pend[i].kind == ARGUS_MARK_STEP_END && bi != SIZE_MAX) {
                if (ei == SIZE_MAX)
                    ei = i;
                finished++;
            }
        }
        if (ei == SIZE_MAX || (!final && !ready(c, &c->pend[ei], finished)))
            break;
        replay(c, bi, ei);
    }
}

void argus_collect_pump(struct argus_collect *c, int final)
{
    struct mark q[MARKS_MAX];
    size_t nq;
    int flush;

    pthread_mutex_lock(&c->lock);
    nq = c->marks_n;
    memcpy(q, c->marks, nq * sizeof *q);
    c->marks_n = 0;
    flush = c->end_seen || final;
    c->end_seen = 0;
    pthread_mutex_unlock(&c->lock);

    if (flush && c->o.flush) {
        c->o.flush(final);
        c->st.flushes++;
    }
    walk_full(c, final); /* activities first: they precede the newly queued marks */
    for (size_t i = 0; i < nq; i++) {
        if (q[i].kind <= ARGUS_MARK_STEP_END) {
            c->saw_marks = 1;
            pend_step(c, &q[i]);
        } else {
            pend_add(c, q[i]);
        }
    }
    if (final && c->host_open) {
        uint64_t last = 0;
        for (size_t i = c->stage_off; i < c->stage_off + c->stage_n; i++)
            if (c->stage[i].end > last)
                last = c->stage[i].end;
        pend_step(c, &(struct mark){c->host_step, last + 1, 0, ARGUS_MARK_STEP_END, 0,
                                    LC_ALL});
    }
    replay_ready(c, final);
}

static void *drain_main(void *arg)
{
    struct argus_collect *c = arg;

    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        struct timespec ts = argus_clock_abstime_in_ms(DRAIN_PERIOD_MS);
        if (!c->end_seen && !c->full_n)
            pthread_cond_timedwait(&c->wake, &c->lock, &ts);
        if (c->stop)
            break;
        pthread_mutex_unlock(&c->lock);
        argus_collect_pump(c, 0);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int argus_collect_start(struct argus_collect *c)
{
    int rc;

    if (!c || c->running)
        return -EINVAL;
    c->stop = 0;
    rc = pthread_create(&c->thr, NULL, drain_main, c);
    if (rc)
        return -rc;
    c->running = 1;
    return 0;
}

void argus_collect_stop(struct argus_collect *c)
{
    if (!c)
        return;
    if (c->running) {
        pthread_mutex_lock(&c->lock);
        c->stop = 1;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thr, NULL);
        c->running = 0;
    }
    argus_collect_pump(c, 1);
}

void argus_collect_get_stats(struct argus_collect *c, struct argus_collect_stats *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}
