/* kineto_stream.c — bounded memory for Kineto traces of any size, part 2: summarising the
 * spilled runs (import/kineto_spill.c) as one stream in time order, step by step, holding only
 * the open phase ranges, launches not yet matched to a kernel (a ring, oldest dropped) and
 * the kernels of the step after the one being summarised. The open step is closed when a
 * kernel of a step two further on starts (kernels come in start order), when the kernels
 * held for the next step pass an eighth of the limit, or at the end. Same rules as
 * import/kineto_feed.c (steps, launch correlation, phases), applied on the fly; it differs only
 * where a trace breaks time order: a kernel that starts before its launch, or after a
 * kernel two steps later has started, counts as outside. Must not print.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "import/import_int.h"
#include "tracer/summarizer.h"

#define MAX_OPEN 64

struct open_range {
    uint64_t start, end;
    uint8_t phase;
};

struct pend {
    uint64_t ts;
    uint32_t corr, step; /* corr 0: consumed */
    uint8_t phase;
};

struct stream {
    struct kt_trace *t;
    struct argus_summarizer *sm;
    struct kt_step *st;
    size_t nst, *by_start[2];   /* step indices sorted by GPU/CPU interval start */
    int disjoint[2], inferred, cpu_steps;
    struct open_range open[2][MAX_OPEN];
    size_t nopen[2];
    struct pend *ring;          /* launches waiting for their kernel, by time */
    size_t ring_cap, head, tail;
    uint64_t *slot;             /* hash corr -> ring sequence + 1 */
    size_t slot_mask, slot_used;
    struct kt_kernel *later;    /* kernels of steps after cur, in start order */
    size_t n_later, cap_later, max_later;
    size_t cur;                 /* step being summarised (index into st) */
    int opened, pushed;
    uint8_t cur_phase;
    uint64_t end;               /* running end of the open step */
    int have_device;
};

static uint8_t phase_now(struct stream *s, int gpu, uint64_t t)
{
    struct open_range *o = s->open[gpu];
    uint8_t ph = ARGUS_PH_OTHER;
    uint64_t best = 0;

    for (size_t j = 0; j < s->nopen[gpu];) {
        if (o[j].end <= t) {
            o[j] = o[--s->nopen[gpu]];
            continue;
        }
        if (o[j].start >= best) {
            best = o[j].start;
            ph = o[j].phase;
        }
        j++;
    }
    return ph;
}

/* Like kt_step_of, by binary search when the intervals do not overlap. */
static uint32_t step_at(const struct stream *s, uint64_t t, int cpu)
{
    const size_t *ix = s->by_start[cpu];
    size_t lo = 0, hi = s->nst;

    if (!s->disjoint[cpu])
        return kt_step_of(s->st, s->nst, t, cpu);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct kt_step *p = &s->st[ix[mid]];
        if ((cpu ? p->cpu_start : p->start) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return KT_NO_STEP;
    const struct kt_step *p = &s->st[ix[lo - 1]];
    uint64_t a = cpu ? p->cpu_start : p->start, b = cpu ? p->cpu_end : p->end;
    return t >= a && t < b ? (uint32_t)ix[lo - 1] : KT_NO_STEP;
}

static const struct kt_step *cmp_steps;
static int cmp_start_gpu(const void *a, const void *b)
{
    const struct kt_step *x = &cmp_steps[*(const size_t *)a], *y = &cmp_steps[*(const size_t *)b];
    return x->start < y->start ? -1 : x->start > y->start;
}
static int cmp_start_cpu(const void *a, const void *b)
{
    const struct kt_step *x = &cmp_steps[*(const size_t *)a], *y = &cmp_steps[*(const size_t *)b];
    return x->cpu_start < y->cpu_start ? -1 : x->cpu_start > y->cpu_start;
}

static int index_steps(struct stream *s)
{
    for (int cpu = 0; cpu < 2; cpu++) {
        size_t *ix = malloc((s->nst + 1) * sizeof *ix), m = 0;
        if (!ix)
            return -ENOMEM;
        for (size_t i = 0; i < s->nst; i++)
            if (!cpu || s->st[i].has_cpu)
                ix[m++] = i;
        cmp_steps = s->st;
        if (m > 1)
            qsort(ix, m, sizeof *ix, cpu ? cmp_start_cpu : cmp_start_gpu);
        s->by_start[cpu] = ix;
        s->disjoint[cpu] = m == s->nst; /* a CPU-less step: keep the linear rule */
        for (size_t i = 1; i < m && s->disjoint[cpu]; i++) {
            const struct kt_step *a = &s->st[ix[i - 1]], *b = &s->st[ix[i]];
            s->disjoint[cpu] = cpu ? a->cpu_end <= b->cpu_start : a->end <= b->start;
        }
    }
    return 0;
}

static size_t slot_of(const struct stream *s, uint32_t corr)
{
    return (size_t)(corr * 0x9E3779B97F4A7C15ull >> 20) & s->slot_mask;
}

static void slots_rebuild(struct stream *s)
{
    memset(s->slot, 0, (s->slot_mask + 1) * sizeof *s->slot);
    s->slot_used = 0;
    for (size_t q = s->head; q < s->tail; q++) {
        if (!s->ring[q % s->ring_cap].corr)
            continue;
        size_t i = slot_of(s, s->ring[q % s->ring_cap].corr);
        while (s->slot[i])
            i = (i + 1) & s->slot_mask;
        s->slot[i] = q + 1;
        s->slot_used++;
    }
}

static void pend_add(struct stream *s, const struct pend *p)
{
    if (s->tail - s->head == s->ring_cap)
        s->head++; /* the oldest launch never met its kernel: forget it */
    if (2 * (s->slot_used + 1) > s->slot_mask + 1)
        slots_rebuild(s);
    size_t i = slot_of(s, p->corr);
    while (s->slot[i])
        i = (i + 1) & s->slot_mask;
    s->ring[s->tail % s->ring_cap] = *p;
    s->slot[i] = ++s->tail;
    s->slot_used++;
}

static struct pend *pend_find(struct stream *s, uint32_t corr)
{
    for (size_t i = slot_of(s, corr); s->slot[i]; i = (i + 1) & s->slot_mask) {
        size_t q = s->slot[i] - 1;
        struct pend *p = &s->ring[q % s->ring_cap];
        if (q >= s->head && p->corr == corr)
            return p;
    }
    return NULL;
}

/* The open step gets kernel k (in start order), as feed_step does for a whole step. */
static void step_kernel(struct stream *s, const struct kt_kernel *k)
{
    struct kt_trace *t = s->t;

    if (!s->opened) {
        const struct kt_step *p = &s->st[s->cur];
        uint64_t begin = k && k->start < p->start ? k->start : p->start;
        argus_summarizer_step_begin(s->sm, p->n, begin);
        if (s->inferred)
            argus_summarizer_add_flags(s->sm, ARGUS_SF_STEP_INFERRED);
        s->opened = 1;
        s->pushed = 0;
        s->cur_phase = 0xff;
        s->end = p->end;
    }
    if (!k)
        return;
    if (k->kclass != ARGUS_KC_COLLECTIVE && k->kclass != ARGUS_KC_P2P &&
        k->phase != s->cur_phase) {
        if (s->pushed)
            argus_summarizer_phase_pop(s->sm, k->start);
        s->pushed = k->phase != ARGUS_PH_OTHER;
        if (s->pushed)
            argus_summarizer_phase_push(s->sm, argus_phase_name(k->phase), k->start);
        s->cur_phase = k->phase;
    }
    argus_summarizer_kernel(s->sm, t->arena + k->name, k->start, k->end, k->device, k->stream,
                            k->kclass);
    s->end = k->end > s->end ? k->end : s->end;
    if ((k->kclass == ARGUS_KC_COLLECTIVE || k->kclass == ARGUS_KC_P2P) &&
        t->info->n_coll < ARGUS_KINETO_MAX_COLL)
        t->info->coll_end[t->info->n_coll++] = k->end;
    if (!s->have_device) {
        t->info->device = (int32_t)k->device;
        s->have_device = 1;
    }
}

/* Close the open step, open the next and give it the kernels kept for it. */
static void step_close(struct stream *s)
{
    size_t j = 0;

    step_kernel(s, NULL);
    if (s->pushed)
        argus_summarizer_phase_pop(s->sm, s->end);
    argus_summarizer_step_end(s->sm, s->st[s->cur].n, s->end);
    s->opened = 0;
    if (++s->cur >= s->nst)
        return;
    for (size_t i = 0; i < s->n_later; i++) {
        if (s->later[i].step == s->cur)
            step_kernel(s, &s->later[i]);
        else
            s->later[j++] = s->later[i];
    }
    s->n_later = j;
}

static int on_kernel(struct stream *s, const struct kt_srec *r)
{
    struct kt_kernel k = {r->t, r->end, r->name, r->corr, r->stream, r->device,
                          KT_NO_STEP, r->kclass, 0, r->flag, 0};
    struct pend *la = k.has_corr ? pend_find(s, k.corr) : NULL;
    uint32_t si = KT_NO_STEP;

    if (la && s->cpu_steps)
        si = la->step;
    if (si == KT_NO_STEP)
        si = step_at(s, k.start, 0);
    if (si == KT_NO_STEP && s->inferred)
        si = 0;
    uint8_t ph = phase_now(s, 1, k.start);
    uint8_t cph = phase_now(s, 0, k.start);
    k.phase = ph != ARGUS_PH_OTHER ? ph : la ? la->phase : cph;
    if (la)
        la->corr = 0; /* consumed */
    k.step = si;
    if (si == KT_NO_STEP || si < s->cur) {
        s->t->info->outside++;
        return 0;
    }
    while (si >= s->cur + 2)
        step_close(s); /* a kernel two steps on: the open step's work is over */
    if (si == s->cur) {
        step_kernel(s, &k);
        return 0;
    }
    while (s->n_later >= s->max_later && s->cur < s->nst && si > s->cur)
        step_close(s); /* too much held for later steps: the open one is done */
    if (si == s->cur) {
        step_kernel(s, &k);
        return 0;
    }
    if (argus_grow(&s->later, &s->cap_later, s->n_later + 1, sizeof *s->later, 1024) != 0)
        return -ENOMEM;
    s->later[s->n_later++] = k;
    return 0;
}

static int on_record(struct stream *s, const struct kt_srec *r)
{
    if (r->type == KT_R_RANGE) {
        int g = r->flag ? 1 : 0;
        (void)phase_now(s, g, r->t); /* drop ranges ended by now */
        if (s->nopen[g] < MAX_OPEN)
            s->open[g][s->nopen[g]++] = (struct open_range){r->t, r->end, r->phase};
        return 0;
    }
    if (r->type == KT_R_LAUNCH) {
        if (!r->corr)
            return 0;
        struct pend p = {r->t, r->corr, s->cpu_steps ? step_at(s, r->t, 1) : KT_NO_STEP,
                         phase_now(s, 0, r->t)};
        pend_add(s, &p);
        return 0;
    }
    return on_kernel(s, r);
}

static int merge_all(struct stream *s, struct kt_merge *m)
{
    const struct kt_srec *r;
    int rc = 0;

    while ((r = kt_merge_next(m, &rc)) != NULL)
        if ((rc = on_record(s, r)) != 0)
            return rc;
    if (rc)
        return rc;
    while (s->cur < s->nst)
        step_close(s);
    return 0;
}

int kt_feed_stream(struct kt_trace *t, const char *path, const struct argus_kineto_opts *o,
                   const struct argus_import_sink *sink, char *errbuf, size_t errlen)
{
    struct stream s;
    struct kt_merge *m = NULL;
    struct kt_feed_ctx fc = {sink, t->info};
    size_t budget = t->max_mem / 4, lim = o && o->max_events ? o->max_events : (size_t)1 << 20;
    int rc;

    memset(&s, 0, sizeof s);
    s.t = t;
    if ((rc = kt_spill(t)) != 0) {
        snprintf(errbuf, errlen, "%s: %s", path, t->spill_err);
        return rc;
    }
    rc = -ENOMEM;
    if (!(s.st = calloc(t->steps.n + 1, sizeof *s.st)))
        goto out;
    s.nst = kt_build_steps(t->steps.v, t->steps.n, s.st);
    if (s.nst == 0) {
        s.inferred = 1;
        s.nst = 1;
        s.st[0].start = UINT64_MAX; /* the step begins at its first kernel */
    }
    for (size_t i = 0; i < s.nst; i++)
        s.cpu_steps |= s.st[i].has_cpu;
    if (index_steps(&s) != 0)
        goto out;
    s.ring_cap = budget / 4 / sizeof(struct pend) + 1024;
    s.slot_mask = 1;
    while (s.slot_mask + 1 < 4 * s.ring_cap)
        s.slot_mask = 2 * s.slot_mask + 1;
    s.max_later = budget / 2 / sizeof(struct kt_kernel) + 256;
    s.ring = malloc(s.ring_cap * sizeof *s.ring);
    s.slot = calloc(s.slot_mask + 1, sizeof *s.slot);
    if (!s.ring || !s.slot)
        goto out;
    /* read buffers: up to 64 KB each, a quarter of the limit for all of them together */
    if ((rc = kt_merge_open(t, budget, &m)) != 0) {
        if (rc == -ENOMEM)
            goto out;
        goto io;
    }
    size_t ev = t->max_mem / 128 > 16384 ? t->max_mem / 128 : 16384;
    struct argus_summarizer_opts so = {
        .rank = (uint32_t)t->info->rank,
        .max_events = ev < lim ? ev : lim,
        .max_names = t->n_names + 8,
        .on_summary = kt_feed_summary,
        .on_name = kt_feed_name,
        .ctx = &fc,
    };
    if ((rc = argus_summarizer_create(&so, &s.sm)) != 0)
        goto out;
    if (t->info->pg_kinds)
        argus_summarizer_set_coords(s.sm, &t->info->coords);
    rc = merge_all(&s, m);
    if (rc == -ENOMEM)
        goto out;
io:
    if (rc)
        snprintf(errbuf, errlen, "%s: cannot read the spill file back: %s", path,
                 strerror(-rc));
    goto done;
out:
    snprintf(errbuf, errlen, "%s: out of memory while summarising", path);
    rc = -ENOMEM;
done:
    argus_summarizer_free(s.sm);
    kt_merge_free(m);
    free(s.st);
    free(s.by_start[0]);
    free(s.by_start[1]);
    free(s.ring);
    free(s.slot);
    free(s.later);
    return rc;
}
