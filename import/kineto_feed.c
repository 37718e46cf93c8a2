/* kineto_feed.c — feeds a parsed Kineto trace (import/import_int.h tables) through the live
 * summariser (tracer/summarizer.c), one step at a time, so imported traces get exactly
 * the summaries, modes and phase attribution of a live run. Must not re-implement any
 * summary statistic: it only decides, per kernel, which step and which phase it belongs to.
 *
 * Rules:
 * - Steps: ProfilerStep#N keep their N. A GPU range (gpu_user_annotation) is the step's
 *   interval when present, else the CPU range. A kernel belongs to the step whose CPU
 *   range holds its launch (cuda_runtime event with the same correlation id); without a
 *   launch, to the step whose interval holds its start. No ProfilerStep at all: the whole
 *   trace is one step 0 flagged STEP_INFERRED.
 * - Phases: CPU annotations (user_annotation names through argus_phase_from_name, autograd
 *   engine evaluate_function ops = backward, Optimizer.* = optimizer) are flattened into
 *   one timeline (the latest-started open range wins). A kernel's phase is a GPU annotation
 *   covering its start if any, else the CPU phase at its launch (correlation), else at its
 *   start. The step's phase marks are then replayed in GPU time at the starts of the
 *   compute kernels where the phase changes, so the summariser's phase-at-start lookup
 *   gives each kernel its launch phase. A step without kernels (phase marks only: a CPU
 *   job, a trace without GPU activity) gets the CPU phase timeline itself, clipped to the
 *   step, so that its phase walls are the ranges' (the spilling path of
 *   import/kineto_stream.c does not do this yet).
 * - Step window: from the step range's start to the later of its end and its last kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_int.h"
#include "tracer/summarizer.h"

struct seg {
    uint64_t t;
    uint8_t phase;
};

struct bound {
    uint64_t t;
    int is_end;
    size_t idx;
};

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_launch(const void *a, const void *b)
{
    const struct kt_launch *x = a, *y = b;
    return x->corr != y->corr ? (x->corr < y->corr ? -1 : 1) : cmp_u64(x->ts, y->ts);
}

static int cmp_range_step(const void *a, const void *b)
{
    const struct kt_range *x = a, *y = b;
    return x->step != y->step ? cmp_u64(x->step, y->step) : cmp_u64(x->start, y->start);
}

static int cmp_bound(const void *a, const void *b)
{
    const struct bound *x = a, *y = b;
    if (x->t != y->t)
        return cmp_u64(x->t, y->t);
    return y->is_end - x->is_end; /* ends first */
}

static int cmp_kernel(const void *a, const void *b)
{
    const struct kt_kernel *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return cmp_u64(x->start, y->start);
}

/* Flatten the ranges with gpu == want into segments; *out malloc'd. */
static int flatten(const struct kt_range *r, size_t n, int want, struct seg **out, size_t *nout)
{
    struct bound *b;
    struct seg *s;
    size_t nb = 0, ns = 0, open[64], nopen = 0;
    uint8_t cur = ARGUS_PH_OTHER;

    *out = NULL;
    *nout = 0;
    b = malloc((2 * n + 1) * sizeof *b);
    s = malloc((2 * n + 1) * sizeof *s);
    if (!b || !s) {
        free(b);
        free(s);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (r[i].gpu != want)
            continue;
        b[nb++] = (struct bound){r[i].start, 0, i};
        b[nb++] = (struct bound){r[i].end, 1, i};
    }
    if (nb > 1)
        qsort(b, nb, sizeof *b, cmp_bound);
    for (size_t i = 0; i < nb; i++) {
        if (b[i].is_end) {
            for (size_t j = 0; j < nopen; j++)
                if (open[j] == b[i].idx) {
                    open[j] = open[--nopen];
                    break;
                }
        } else if (nopen < 64) {
            open[nopen++] = b[i].idx;
        }
        uint8_t ph = ARGUS_PH_OTHER;
        uint64_t best = 0;
        for (size_t j = 0; j < nopen; j++)
            if (r[open[j]].start >= best) {
                best = r[open[j]].start;
                ph = r[open[j]].phase;
            }
        if (ph != cur || ns == 0) {
            if (ns && s[ns - 1].t == b[i].t)
                s[ns - 1].phase = ph;
            else
                s[ns++] = (struct seg){b[i].t, ph};
            cur = ph;
        }
    }
    free(b);
    *out = s;
    *nout = ns;
    return 0;
}

static uint8_t phase_at(const struct seg *s, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;

    if (!n || t < s[0].t)
        return ARGUS_PH_OTHER;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].t <= t)
            lo = mid;
        else
            hi = mid;
    }
    return s[lo].phase;
}

/* Index of the first segment starting after t (n when none). */
static size_t seg_after(const struct seg *s, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].t <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A step without kernels: the CPU phase segments inside [begin, end) as phase marks. */
static void feed_cpu_phases(struct argus_summarizer *sm, const struct seg *cs, size_t ncs,
                            uint64_t begin, uint64_t end)
{
    uint8_t cur = phase_at(cs, ncs, begin);

    if (cur != ARGUS_PH_OTHER)
        argus_summarizer_phase_push(sm, argus_phase_name(cur), begin);
    for (size_t i = seg_after(cs, ncs, begin); i < ncs && cs[i].t < end; i++) {
        if (cs[i].phase == cur)
            continue;
        if (cur != ARGUS_PH_OTHER)
            argus_summarizer_phase_pop(sm, cs[i].t);
        cur = cs[i].phase;
        if (cur != ARGUS_PH_OTHER)
            argus_summarizer_phase_push(sm, argus_phase_name(cur), cs[i].t);
    }
    if (cur != ARGUS_PH_OTHER)
        argus_summarizer_phase_pop(sm, end);
}

static const struct kt_launch *find_launch(const struct kt_launch *l, size_t n, uint32_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && l[lo].corr == corr ? &l[lo] : NULL;
}

/* Index of the step whose interval (cpu: CPU range) holds t; KT_NO_STEP if none. */
uint32_t kt_step_of(const struct kt_step *st, size_t n, uint64_t t, int cpu)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a = cpu ? st[i].cpu_start : st[i].start, b = cpu ? st[i].cpu_end : st[i].end;
        if ((!cpu || st[i].has_cpu) && t >= a && t < b)
            return (uint32_t)i;
    }
    return KT_NO_STEP;
}

/* Merge ProfilerStep ranges into one interval per N (GPU preferred). */
size_t kt_build_steps(struct kt_range *r, size_t n, struct kt_step *st)
{
    size_t ns = 0;

    if (n > 1)
        qsort(r, n, sizeof *r, cmp_range_step);
    for (size_t i = 0; i < n; i++) {
        struct kt_step *s = ns && st[ns - 1].n == r[i].step ? &st[ns - 1] : NULL;
        if (!s) {
            s = &st[ns++];
            memset(s, 0, sizeof *s);
            s->n = r[i].step;
            s->start = UINT64_MAX;
            s->cpu_start = UINT64_MAX;
        }
        if (r[i].gpu) {
            if (!s->has_gpu || r[i].start < s->start)
                s->start = r[i].start;
            if (!s->has_gpu || r[i].end > s->end)
                s->end = r[i].end;
            s->has_gpu = 1;
        } else {
            s->cpu_start = r[i].start < s->cpu_start ? r[i].start : s->cpu_start;
            s->cpu_end = r[i].end > s->cpu_end ? r[i].end : s->cpu_end;
            s->has_cpu = 1;
        }
    }
    for (size_t i = 0; i < ns; i++)
        if (!st[i].has_gpu) {
            st[i].start = st[i].cpu_start;
            st[i].end = st[i].cpu_end;
        }
    return ns;
}

void kt_feed_summary(void *ctx, const struct argus_step_summary *s)
{
    struct kt_feed_ctx *f = ctx;
    if (!f->info->steps || s->step < f->info->first_step)
        f->info->first_step = s->step;
    if (!f->info->steps || s->step > f->info->last_step)
        f->info->last_step = s->step;
    f->info->steps++;
    if (f->sink && f->sink->summary)
        f->sink->summary(f->sink->ctx, s);
}

void kt_feed_name(void *ctx, uint64_t hash, const char *name)
{
    struct kt_feed_ctx *f = ctx;
    if (f->sink && f->sink->name)
        f->sink->name(f->sink->ctx, hash, name);
}

/* Replay one step through the summariser: phase marks, then kernels (none: the CPU
 * phase segments cs). */
static void feed_step(struct argus_summarizer *sm, const struct kt_trace *t,
                      const struct kt_step *s, const struct kt_kernel *k, size_t nk, int inferred,
                      const struct seg *cs, size_t ncs)
{
    uint64_t begin = s->start, end = s->end;
    int pushed = 0;
    uint8_t cur = 0xff;

    for (size_t i = 0; i < nk; i++) {
        begin = k[i].start < begin ? k[i].start : begin;
        end = k[i].end > end ? k[i].end : end;
    }
    argus_summarizer_step_begin(sm, s->n, begin);
    if (inferred)
        argus_summarizer_add_flags(sm, ARGUS_SF_STEP_INFERRED);
    if (nk == 0 && end > begin)
        feed_cpu_phases(sm, cs, ncs, begin, end);
    for (size_t i = 0; i < nk; i++) {
        if (k[i].kclass == ARGUS_KC_COLLECTIVE || k[i].kclass == ARGUS_KC_P2P ||
            k[i].phase == cur)
            continue;
        if (pushed)
            argus_summarizer_phase_pop(sm, k[i].start);
        pushed = k[i].phase != ARGUS_PH_OTHER;
        if (pushed)
            argus_summarizer_phase_push(sm, argus_phase_name(k[i].phase), k[i].start);
        cur = k[i].phase;
    }
    if (pushed)
        argus_summarizer_phase_pop(sm, end);
    for (size_t i = 0; i < nk; i++)
        argus_summarizer_kernel(sm, t->arena + k[i].name, k[i].start, k[i].end, k[i].device,
                                k[i].stream, k[i].kclass);
    argus_summarizer_step_end(sm, s->n, end);
}

int kt_feed(struct kt_trace *t, const char *path, const struct argus_kineto_opts *o,
            const struct argus_import_sink *sink, char *errbuf, size_t errlen)
{
    struct kt_kernel *k = t->kernels.v;
    struct kt_launch *l = t->launches.v;
    struct kt_range *rg = t->ranges.v;
    size_t nk = t->kernels.n, nl = t->launches.n, nst, ncs = 0, ngs = 0;
    struct kt_step *st = NULL;
    struct seg *cs = NULL, *gs = NULL;
    struct argus_summarizer *sm = NULL;
    struct kt_feed_ctx fc = {sink, t->info};
    int rc = 0, inferred = 0, cpu_steps = 0;

    st = calloc(t->steps.n + 1, sizeof *st);
    if (!st)
        goto nomem;
    nst = kt_build_steps(t->steps.v, t->steps.n, st);
    if (nst == 0) {
        /* No ProfilerStep: the whole trace is one inferred step 0. */
        inferred = 1;
        nst = 1;
        st[0].start = UINT64_MAX;
        for (size_t i = 0; i < nk; i++) {
            st[0].start = k[i].start < st[0].start ? k[i].start : st[0].start;
            st[0].end = k[i].end > st[0].end ? k[i].end : st[0].end;
        }
    }
    for (size_t i = 0; i < nst; i++)
        cpu_steps |= st[i].has_cpu;
    if (flatten(rg, t->ranges.n, 0, &cs, &ncs) || flatten(rg, t->ranges.n, 1, &gs, &ngs))
        goto nomem;
    if (nl > 1)
        qsort(l, nl, sizeof *l, cmp_launch);
    for (size_t i = 0; i < nk; i++) {
        const struct kt_launch *la = k[i].has_corr ? find_launch(l, nl, k[i].corr) : NULL;
        uint32_t si = KT_NO_STEP;
        if (la && cpu_steps)
            si = kt_step_of(st, nst, la->ts, 1);
        if (si == KT_NO_STEP)
            si = kt_step_of(st, nst, k[i].start, 0);
        if (si == KT_NO_STEP && inferred)
            si = 0;
        k[i].step = si;
        uint8_t ph = phase_at(gs, ngs, k[i].start);
        if (ph == ARGUS_PH_OTHER)
            ph = phase_at(cs, ncs, la ? la->ts : k[i].start);
        k[i].phase = ph;
        if (si == KT_NO_STEP)
            t->info->outside++;
    }
    if (nk > 1)
        qsort(k, nk, sizeof *k, cmp_kernel);

    size_t maxk = 1;
    for (size_t a = 0, b; a < nk; a = b) {
        for (b = a; b < nk && k[b].step == k[a].step; b++)
            ;
        maxk = b - a > maxk ? b - a : maxk;
    }
    size_t lim = o && o->max_events ? o->max_events : (size_t)1 << 20;
    struct argus_summarizer_opts so = {
        .rank = (uint32_t)t->info->rank,
        .max_events = maxk < lim ? maxk : lim,
        .max_names = t->n_names + 8,
        .on_summary = kt_feed_summary,
        .on_name = kt_feed_name,
        .ctx = &fc,
    };
    if ((rc = argus_summarizer_create(&so, &sm)) != 0)
        goto nomem;
    if (t->info->pg_kinds)
        argus_summarizer_set_coords(sm, &t->info->coords);
    size_t ki = 0;
    for (size_t si = 0; si < nst; si++) {
        size_t a = ki;
        while (ki < nk && k[ki].step == si)
            ki++;
        feed_step(sm, t, &st[si], nk ? k + a : NULL, ki - a, inferred, cs, ncs);
    }
    for (size_t i = 0; i < nk && t->info->n_coll < ARGUS_KINETO_MAX_COLL; i++)
        if (k[i].step != KT_NO_STEP &&
            (k[i].kclass == ARGUS_KC_COLLECTIVE || k[i].kclass == ARGUS_KC_P2P))
            t->info->coll_end[t->info->n_coll++] = k[i].end;
    if (t->info->device < 0 && nk)
        t->info->device = (int32_t)k[0].device;
    goto out;
nomem:
    snprintf(errbuf, errlen, "%s: out of memory while summarising", path);
    rc = -ENOMEM;
out:
    argus_summarizer_free(sm);
    free(st);
    free(cs);
    free(gs);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t argus_kineto_align(const struct argus_kineto_info *a,
                           const struct argus_kineto_info *b)
{
    size_t n = a->n_coll < b->n_coll ? a->n_coll : b->n_coll;
    int64_t *d;

    if (n == 0 || !(d = malloc(n * sizeof *d)))
        return 0;
    for (size_t i = 0; i < n; i++)
        d[i] = (int64_t)(a->coll_end[i] - b->coll_end[i]);
    qsort(d, n, sizeof *d, cmp_i64);
    int64_t m = d[n / 2];
    free(d);
    return m;
}
