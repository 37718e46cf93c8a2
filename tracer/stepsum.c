/* stepsum.c — the step-end builder of the summariser: busy time (union of kernel
 * intervals) and the longest GPU idle interval (the union's longest gap, where it ends),
 * the record budget over the (kernel, mode) candidates that stepsplit.c makes (every
 * collective/p2p mode kept, the others by time up to the coverage, the rest folded into
 * one "[other]" record per class; "[other]" records get no last end) and the summary
 * header. Nothing is sorted but the candidates when the budget folds some.
 * Works only in the arrays preallocated by argus_summarizer_create; must not allocate,
 * block or log. Rules: summarizer.c's header.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/sm_internal.h"

/* The longest GPU idle interval of a step: its length and end (ns after the step begin). */
struct idle_long {
    uint64_t len, end;
};

/* Length of the union of pa[0..n) ([key, val) intervals inside [0, wall]) and its longest
 * gap, the ones before the first and after the last interval included (the earliest of
 * equally long gaps); sorts pa. */
static uint64_t union_gaps(struct argus_sort_pair *pa, struct argus_sort_pair *pb, size_t n,
                           uint64_t wall, struct idle_long *idle)
{
    uint64_t busy = 0, cs = 0, ce = 0;

    *idle = (struct idle_long){0, 0};
    argus_sort_pairs(pa, pb, n);
    for (size_t i = 0; i < n; i++) {
        if (pa[i].key > ce) {
            busy += ce - cs;
            if (pa[i].key - ce > idle->len)
                *idle = (struct idle_long){pa[i].key - ce, pa[i].key};
            cs = pa[i].key;
            ce = pa[i].val;
        } else if (pa[i].val > ce) {
            ce = pa[i].val;
        }
    }
    if (wall - ce > idle->len)
        *idle = (struct idle_long){wall - ce, wall};
    return busy + (ce - cs);
}

/* Length of the union of the stored kernels' intervals clipped to [begin, end], and its
 * longest gap (*idle). When the (begin-clipped) starts came in order, the running union
 * (sm->busy) holds the busy time up to the part after end, which is measured from the few
 * kernels that end after it, and the longest gap unless that one ends after end (only
 * kernels that start after the step end make one: the collector and the importers give a
 * step none); otherwise the intervals are sorted here. */
static uint64_t busy_time(struct argus_summarizer *sm, uint64_t begin, uint64_t end,
                          struct idle_long *idle)
{
    const struct busy_run *b = &sm->busy;
    size_t n = 0;

    if (b->sorted && (b->ce <= end || b->gap_end <= end)) {
        uint64_t busy = b->sum + (b->ce - b->cs);
        *idle = (struct idle_long){b->gap, b->gap ? b->gap_end - begin : 0};
        if (b->ce <= end) {
            if (end - b->ce > idle->len)
                *idle = (struct idle_long){end - b->ce, end - begin};
            return busy;
        }
        /* The gap cut by end, if any, is no longer than it was: b->gap still wins. The
         * union's part after end, from its runs (es: the closed ones, disjoint and in
         * order; then the open one). */
        uint64_t after = b->ce - (b->cs > end ? b->cs : end);
        for (size_t i = sm->n_es; i-- > 0 && sm->es[i].end > end;)
            after += sm->es[i].end - (sm->es[i].start > end ? sm->es[i].start : end);
        return busy - after;
    }
    size_t n_es = sm->n_es;
    if (b->sorted) /* es holds the closed runs: the open one completes the union */
        sm->es[n_es++] = (struct ev_span){b->cs, b->ce};
    for (size_t i = 0; i < n_es; i++) {
        uint64_t s = sm->es[i].start > begin ? sm->es[i].start : begin;
        uint64_t e = sm->es[i].end < end ? sm->es[i].end : end;
        if (e > s) {
            sm->pa[n].key = s - begin;
            sm->pa[n].val = e - begin;
            n++;
        }
    }
    return union_gaps(sm->pa, sm->pb, n, end - begin, idle);
}

struct fold {
    struct argus_kmode_stats st;
    uint64_t w[ARGUS_PH_COUNT];
    int used;
};

static void fold_add(struct fold *f, uint64_t d, uint8_t phase)
{
    if (!f->used || d < f->st.min_ns)
        f->st.min_ns = d;
    if (!f->used || d > f->st.max_ns)
        f->st.max_ns = d;
    f->used = 1;
    f->st.count++;
    f->st.sum_ns += d;
    argus_qsketch_add(&f->st.sketch, d);
    f->w[phase] += d + 1;
}

static int cmp_kmode(const void *a, const void *b)
{
    const struct argus_kmode_stats *x = a, *y = b;

    if (x->name_hash != y->name_hash)
        return x->name_hash < y->name_hash ? -1 : 1;
    return (int)x->mode - (int)y->mode;
}

/* Number of candidates to keep (in ord order): the budget (opts.coverage: every
 * collective/p2p mode, then the others by descending time until they cover that share of
 * all kernel time), and so that kept + one fold record per remaining class fit in
 * ARGUS_MAX_KMODES. */
static size_t select_keep(struct argus_summarizer *sm, size_t nc)
{
    size_t keep;
    const double cov = sm->o.coverage;
    const int budget = cov > 0 && cov < 1;

    if (!budget && nc + (size_t)__builtin_popcount(sm->ovf_classes) <= ARGUS_MAX_KMODES)
        return nc;
    /* Collective/p2p first, then by descending time; stable, so ties keep step order. */
    for (size_t i = 0; i < nc; i++) {
        const struct cand *c = &sm->cands[i];
        uint64_t comm = c->kclass == ARGUS_KC_COLLECTIVE || c->kclass == ARGUS_KC_P2P;
        uint64_t s = c->sum > (UINT64_MAX >> 1) ? (UINT64_MAX >> 1) : c->sum;
        sm->ord[i].key = (comm ? 0 : UINT64_C(1) << 63) | ((UINT64_MAX >> 1) - s);
        sm->ord[i].val = i;
    }
    argus_sort_pairs(sm->ord, sm->ord + sm->max_cands, nc);
    keep = nc < ARGUS_MAX_KMODES ? nc : ARGUS_MAX_KMODES;
    if (budget) {
        double total = 0, kept = 0;
        for (size_t i = 0; i < nc; i++)
            total += (double)sm->cands[i].sum;
        size_t k = 0;
        for (; k < keep; k++) {
            const struct cand *c = &sm->cands[sm->ord[k].val];
            int comm = c->kclass == ARGUS_KC_COLLECTIVE || c->kclass == ARGUS_KC_P2P;
            if (!comm && kept >= cov * total)
                break;
            kept += (double)c->sum;
        }
        if (k + 1 >= nc) /* folding one mode into "[other]" saves nothing */
            k = nc < ARGUS_MAX_KMODES ? nc : keep;
        keep = k;
        if (keep == nc && nc + (size_t)__builtin_popcount(sm->ovf_classes) <= ARGUS_MAX_KMODES)
            return nc;
    }
    for (;;) {
        unsigned cls = sm->ovf_classes;
        for (size_t i = keep; i < nc; i++)
            cls |= 1u << sm->cands[sm->ord[i].val].kclass;
        size_t want = ARGUS_MAX_KMODES - (size_t)__builtin_popcount(cls);
        if (want > nc)
            want = nc;
        if (want >= keep)
            return keep;
        keep = want;
    }
}

static void build_kmodes(struct argus_summarizer *sm, struct argus_step_summary *s)
{
    struct fold fold[ARGUS_KC_COUNT];
    size_t nc = argus_sm_build_cands(sm, s->step);
    size_t keep = select_keep(sm, nc);
    int ranked = keep < nc; /* select_keep ordered sm->ord only when something folds */
    int folded = 0;

    memset(fold, 0, sizeof fold);
    for (unsigned k = 0; k < ARGUS_KC_COUNT; k++)
        argus_qsketch_init(&fold[k].st.sketch);
    s->n_kmodes = 0;
    for (size_t i = 0; i < nc; i++) {
        const struct cand *c = &sm->cands[ranked ? sm->ord[i].val : i];
        if (i < keep) {
            struct argus_kmode_stats *k = &s->kmodes[s->n_kmodes++];
            memset(k, 0, sizeof *k);
            k->name_hash = c->hash;
            k->mode = c->mode;
            k->kclass = c->kclass;
            k->phase = c->phase;
            k->count = c->count;
            k->sum_ns = c->sum;
            k->min_ns = c->min;
            k->max_ns = c->max;
            k->last_end_ns = c->last_end;
            k->sketch = c->sketch;
        } else {
            struct fold *f = &fold[c->kclass];
            if (!f->used || c->min < f->st.min_ns)
                f->st.min_ns = c->min;
            if (!f->used || c->max > f->st.max_ns)
                f->st.max_ns = c->max;
            f->used = 1;
            f->st.count += c->count;
            f->st.sum_ns += c->sum;
            argus_qsketch_merge(&f->st.sketch, &c->sketch);
            for (unsigned p = 0; p < ARGUS_PH_COUNT; p++)
                f->w[p] += c->w[p];
        }
    }
    if (sm->ovf_classes) {
        for (size_t i = 0; i < sm->n_ovf; i++) {
            const struct ev_key *e = &sm->ek[i];
            fold_add(&fold[e->kclass], argus_dkey_dur(e->key), (uint8_t)argus_dkey_phase(e->key));
        }
    }
    for (unsigned k = 0; k < ARGUS_KC_COUNT; k++) {
        if (!fold[k].used)
            continue;
        struct argus_kmode_stats *o = &s->kmodes[s->n_kmodes++];
        *o = fold[k].st;
        o->name_hash = argus_name_hash(OTHER_NAME);
        o->mode = (uint8_t)k;
        o->kclass = (uint8_t)k;
        o->phase = argus_sm_phase_argmax(fold[k].w);
        folded = 1;
    }
    if (folded) {
        s->flags |= ARGUS_SF_PARTIAL;
        argus_sm_emit_other_name(sm);
    }
    qsort(s->kmodes, s->n_kmodes, sizeof s->kmodes[0], cmp_kmode);
}

void argus_sm_build_summary(struct argus_summarizer *sm, uint64_t step, uint64_t end)
{
    struct argus_step_summary *s = &sm->sum;

    memset(s, 0, offsetof(struct argus_step_summary, kmodes));
    s->step = step;
    s->rank = sm->o.rank;
    s->flags = sm->step_flags;
    s->start_ns = sm->begin;
    s->end_ns = end;
    s->coords = sm->coords;
    s->phase_wall_ns[ARGUS_PH_FORWARD] = sm->phase_wall[ARGUS_PH_FORWARD];
    s->phase_wall_ns[ARGUS_PH_BACKWARD] = sm->phase_wall[ARGUS_PH_BACKWARD];
    s->phase_wall_ns[ARGUS_PH_OPTIMIZER] = sm->phase_wall[ARGUS_PH_OPTIMIZER];
    s->phase_wall_ns[ARGUS_PH_OTHER] = sm->phase_wall[ARGUS_PH_OTHER];
    s->compute_ns = sm->class_ns[ARGUS_KC_COMPUTE];
    s->collective_ns = sm->class_ns[ARGUS_KC_COLLECTIVE];
    s->p2p_ns = sm->class_ns[ARGUS_KC_P2P];
    s->memcpy_ns = sm->class_ns[ARGUS_KC_MEMCPY] + sm->class_ns[ARGUS_KC_MEMSET];
    /* [COMM] is the communication kernels' time; a step without kernels (phase marks
     * only: a CPU job, CUPTI unavailable) keeps the marked communication ranges instead
     * (a blocking gloo all-reduce or receive), so that waiting has a phase */
    s->phase_wall_ns[ARGUS_PH_COMM] = sm->n_ev + sm->step_kernels
                                          ? s->collective_ns + s->p2p_ns
                                          : sm->phase_wall[ARGUS_PH_COMM];
    argus_sm_flush_compute(sm);
    memcpy(s->phase_compute_ns, sm->phase_compute, sizeof s->phase_compute_ns);
    struct idle_long idle;
    s->busy_ns = busy_time(sm, sm->begin, end, &idle);
    s->host_gap_ns = (end - sm->begin) - s->busy_ns;
    s->idle_long_ns = idle.len;
    s->idle_long_end_ns = idle.end;
    s->phase_wall_ns[ARGUS_PH_HOST] = s->host_gap_ns;
    s->kernel_count = sm->n_ev + sm->step_kernels;
    s->dropped = sm->step_dropped;
    s->overhead_ns = sm->step_overhead_ns;
    build_kmodes(sm, s);
}
