/* stepsum.c — the step-end half of the summariser: busy time (union of kernel intervals),
 * per-(kernel, mode) records (group by name, sort, split into modes), the record budget
 * (fold into "[other]") and the summary header. Works only in the arrays preallocated by
 * argus_summarizer_create; must not allocate, block or log. Rules: summarizer.c's header.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/sm_internal.h"

/* Length of the union of pa[0..n) ([key, val) intervals); sorts pa. */
static uint64_t union_len(struct argus_sort_pair *pa, struct argus_sort_pair *pb, size_t n)
{
    uint64_t busy = 0, cs = 0, ce = 0;

    argus_sort_pairs(pa, pb, n);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || pa[i].key > ce) {
            busy += ce - cs;
            cs = pa[i].key;
            ce = pa[i].val;
        } else if (pa[i].val > ce) {
            ce = pa[i].val;
        }
    }
    return busy + (ce - cs);
}

/* Length of the union of the stored kernels' intervals clipped to [begin, end]. When the
 * (begin-clipped) starts came in order, the running union (sm->busy) holds the answer
 * up to the part after end, which is measured from the few kernels that end after it;
 * otherwise the intervals are sorted here. */
static uint64_t busy_time(struct argus_summarizer *sm, uint64_t begin, uint64_t end)
{
    const struct busy_run *b = &sm->busy;
    size_t n = 0;

    if (b->sorted) {
        if (!b->any)
            return 0;
        uint64_t busy = b->sum + (b->ce - b->cs);
        if (b->max_end <= end)
            return busy;
        for (size_t i = 0; i < sm->n_ev; i++) {
            const struct ev_span *e = &sm->es[i];
            if (e->end > end) {
                sm->pa[n].key = e->start > end ? e->start : end;
                sm->pa[n].val = e->end;
                n++;
            }
        }
        return busy - union_len(sm->pa, sm->pb, n);
    }
    for (size_t i = 0; i < sm->n_ev; i++) {
        uint64_t s = sm->es[i].start > begin ? sm->es[i].start : begin;
        uint64_t e = sm->es[i].end < end ? sm->es[i].end : end;
        if (e > s) {
            sm->pa[n].key = s - begin;
            sm->pa[n].val = e - begin;
            n++;
        }
    }
    return union_len(sm->pa, sm->pb, n);
}

static uint8_t phase_argmax(const uint64_t w[ARGUS_PH_COUNT])
{
    uint8_t best = 0;

    for (uint8_t p = 1; p < ARGUS_PH_COUNT; p++)
        if (w[p] > w[best])
            best = p;
    return best;
}

/* Group the stored durations by name (each group sorted) into pb and split each group
 * into modes. Returns the number of candidates. */
static size_t build_cands(struct argus_summarizer *sm)
{
    size_t m = 0, nc = 0;
    uint32_t off = 0;
    size_t bounds[ARGUS_MODES_MAX + 1];

    for (size_t t = 0; t < sm->n_touched; t++) {
        uint32_t idx = sm->touched[t];
        sm->name_off[idx] = off;
        off += sm->name_count[idx];
    }
    for (size_t i = 0; i < sm->n_ev; i++) {
        if (sm->ek[i].idx == NAME_NONE)
            continue;
        sm->pa[m].key = sm->ek[i].key;
        sm->pa[m].val = sm->ek[i].idx;
        m++;
    }
    argus_sort_pairs(sm->pa, sm->pb, m);
    for (size_t i = 0; i < m; i++)
        sm->pb[sm->name_off[sm->pa[i].val]++] = sm->pa[i]; /* stable: groups stay sorted */

    for (size_t t = 0; t < sm->n_touched; t++) {
        uint32_t idx = sm->touched[t];
        uint32_t lo = sm->name_off[idx] - sm->name_count[idx];
        unsigned nm = argus_modes_split(&sm->pb[lo], sm->name_count[idx], bounds,
                                         sm->ylog);
        for (unsigned k = 0; k < nm; k++) {
            struct cand *c = &sm->cands[nc++];
            uint64_t w[ARGUS_PH_COUNT] = {0};
            c->hash = sm->name_hash[idx];
            c->mode = (uint8_t)k;
            c->kclass = sm->name_class[idx];
            c->lo = lo + (uint32_t)bounds[k];
            c->count = (uint32_t)(bounds[k + 1] - bounds[k]);
            c->min = argus_dkey_dur(sm->pb[c->lo].key);
            c->max = argus_dkey_dur(sm->pb[c->lo + c->count - 1].key);
            c->sum = 0;
            for (uint32_t j = c->lo; j < c->lo + c->count; j++) {
                uint64_t d = argus_dkey_dur(sm->pb[j].key);
                c->sum += d;
                w[argus_dkey_phase(sm->pb[j].key)] += d + 1; /* +1: zero durations count */
            }
            c->phase = phase_argmax(w);
        }
    }
    return nc;
}

/* Bucket index of a duration > 0 in a qsketch: the base of a fresh sketch holding only it
 * (so the index is the sketch's own arithmetic, not a copy of it). */
static int32_t bucket_of(uint64_t d)
{
    struct argus_qsketch t;

    argus_qsketch_init(&t);
    argus_qsketch_add(&t, d);
    return t.base;
}

/* Add sorted duration keys to a sketch; optionally accumulate per-phase time. A sketch
 * keeps bucket counts only, so each run of durations in one bucket goes in at once
 * (found by galloping over the sorted keys: a few bucket lookups per run instead of one
 * per distinct duration); the result is the sketch of adding them one by one. */
static void sketch_keys(struct argus_qsketch *sk, const struct argus_sort_pair *v, size_t n,
                        uint64_t *w)
{
    size_t i = 0;

    if (w)
        for (size_t k = 0; k < n; k++)
            w[argus_dkey_phase(v[k].key)] += argus_dkey_dur(v[k].key) + 1;
    while (i < n && argus_dkey_dur(v[i].key) == 0)
        i++;
    if (i)
        argus_qsketch_add_n(sk, 0, (uint32_t)i);
    while (i < n) {
        int32_t b = bucket_of(argus_dkey_dur(v[i].key));
        size_t lo = i, hi = n, step = 1; /* v[lo] is in b; v[hi] (if < n) is not */
        while (lo + step < n) {
            if (bucket_of(argus_dkey_dur(v[lo + step].key)) != b) {
                hi = lo + step;
                break;
            }
            lo += step;
            step *= 2;
        }
        if (hi == n && lo + 1 < n && bucket_of(argus_dkey_dur(v[n - 1].key)) == b)
            lo = n - 1;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (bucket_of(argus_dkey_dur(v[mid].key)) == b)
                lo = mid;
            else
                hi = mid;
        }
        argus_qsketch_add_n(sk, argus_dkey_dur(v[i].key), (uint32_t)(hi - i));
        i = hi;
    }
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

/* Number of candidates to keep (in ord order) so that kept + one fold record per
 * remaining class fit in ARGUS_MAX_KMODES. */
static size_t select_keep(struct argus_summarizer *sm, size_t nc)
{
    size_t keep;

    if (nc + (size_t)__builtin_popcount(sm->ovf_classes) <= ARGUS_MAX_KMODES)
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
    size_t nc = build_cands(sm);
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
            argus_qsketch_init(&k->sketch);
            sketch_keys(&k->sketch, &sm->pb[c->lo], c->count, NULL);
        } else {
            struct fold *f = &fold[c->kclass];
            if (!f->used || c->min < f->st.min_ns)
                f->st.min_ns = c->min;
            if (!f->used || c->max > f->st.max_ns)
                f->st.max_ns = c->max;
            f->used = 1;
            f->st.count += c->count;
            f->st.sum_ns += c->sum;
            sketch_keys(&f->st.sketch, &sm->pb[c->lo], c->count, f->w);
        }
    }
    if (sm->ovf_classes) {
        for (size_t i = 0; i < sm->n_ev; i++) {
            const struct ev_key *e = &sm->ek[i];
            if (e->idx == NAME_NONE)
                fold_add(&fold[e->kclass], argus_dkey_dur(e->key),
                         (uint8_t)argus_dkey_phase(e->key));
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
        o->phase = phase_argmax(fold[k].w);
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
    s->clock_offset_ns = sm->clock_offset;
    s->coords = sm->coords;
    s->phase_wall_ns[ARGUS_PH_FORWARD] = sm->phase_wall[ARGUS_PH_FORWARD];
    s->phase_wall_ns[ARGUS_PH_BACKWARD] = sm->phase_wall[ARGUS_PH_BACKWARD];
    s->phase_wall_ns[ARGUS_PH_OPTIMIZER] = sm->phase_wall[ARGUS_PH_OPTIMIZER];
    s->phase_wall_ns[ARGUS_PH_OTHER] = sm->phase_wall[ARGUS_PH_OTHER];
    s->compute_ns = sm->class_ns[ARGUS_KC_COMPUTE];
    s->collective_ns = sm->class_ns[ARGUS_KC_COLLECTIVE];
    s->p2p_ns = sm->class_ns[ARGUS_KC_P2P];
    s->memcpy_ns = sm->class_ns[ARGUS_KC_MEMCPY] + sm->class_ns[ARGUS_KC_MEMSET];
    s->phase_wall_ns[ARGUS_PH_COMM] = s->collective_ns + s->p2p_ns;
    memcpy(s->phase_compute_ns, sm->phase_compute, sizeof s->phase_compute_ns);
    s->busy_ns = busy_time(sm, sm->begin, end);
    s->host_gap_ns = (end - sm->begin) - s->busy_ns;
    s->phase_wall_ns[ARGUS_PH_HOST] = s->host_gap_ns;
    s->kernel_count = sm->step_kernels;
    s->dropped = sm->step_dropped;
    build_kmodes(sm, s);
}
