/* pystacks.c — host call stacks from Kineto python_function events (pystacks.h). Long
 * spans are kept in one growing table (bounded), one trace at a time at its end: sorted
 * by thread and start, nested with a stack of open spans (a parent index per span), the
 * innermost long span inside one step found as a stall, and the innermost span covering
 * the middle of each step of the main thread kept for the peers. Stacks are written from
 * the parent chain only when the samples are made (argus_pystacks_fill).
 */
#include "import/pystacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define NONE UINT32_MAX
#define NAME_MAX_B 256                /* bytes of one frame's text kept */
#define ARENA_MAX ((size_t)4 << 20)   /* bytes of frame text in all */
#define STALLS_MAX 1024               /* the report's set holds no more (argus_analyze.c) */
#define DEPTH_MAX 128                 /* frames of one stack */

struct span {
    uint64_t start, end;
    int64_t tid;
    uint32_t name;   /* offset in the arena */
    uint32_t parent; /* index of the covering span, NONE at the top */
};

struct stall {
    uint64_t step, mid_ns, dur_ns;
    uint32_t leaf, rank;
};

struct mid { /* the main thread's innermost span at the middle of a step */
    uint64_t step, mid_ns;
    uint32_t leaf; /* NONE: no long span covers it */
};

struct trace {
    uint32_t rank;
    int have_coords;
    struct argus_coords c;
    size_t mid0, nmid;
};

struct argus_pystacks {
    uint64_t min_ns;
    struct span *sp;
    size_t nsp, capsp;
    char *arena;
    size_t used, caparena;
    struct stall *st;
    size_t nst, capst;
    struct mid *md;
    size_t nmd, capmd;
    struct trace *tr;
    size_t ntr, captr;
    size_t p_sp, p_st, p_md, p_arena; /* where the trace being read began */
    uint64_t dropped;
};

struct argus_pystacks *argus_pystacks_new(uint32_t min_ms)
{
    struct argus_pystacks *ps = calloc(1, sizeof *ps);
    if (ps)
        ps->min_ns = (uint64_t)(min_ms ? min_ms : 1) * 1000000u;
    return ps;
}

void argus_pystacks_free(struct argus_pystacks *ps)
{
    if (!ps)
        return;
    free(ps->sp);
    free(ps->arena);
    free(ps->st);
    free(ps->md);
    free(ps->tr);
    free(ps);
}

/* "path/file.py(123): func" as "func (path/file.py:123)"; any other name as it is. At
 * most cap bytes with the NUL. */
static void frame_text(const char *name, char *out, size_t cap)
{
    const char *sep = strstr(name, "): ");
    const char *open = NULL;
    if (sep)
        for (const char *q = sep - 1; q >= name && *q >= '0' && *q <= '9'; q--)
            open = q - 1;
    if (sep && open && open >= name && *open == '(' && open + 1 < sep)
        snprintf(out, cap, "%s (%.*s:%.*s)", sep + 3, (int)(open - name), name,
                 (int)(sep - open - 1), open + 1);
    else
        snprintf(out, cap, "%s", name);
    for (char *c = out; *c; c++)
        if (*c == ';' || *c == '\n')
            *c = ','; /* ';' separates the frames of a folded stack */
}

int argus_pystacks_span(struct argus_pystacks *ps, uint64_t start_ns, uint64_t dur_ns,
                        int64_t tid, const char *name)
{
    char txt[NAME_MAX_B];

    if (dur_ns < ps->min_ns)
        return 0;
    frame_text(name, txt, sizeof txt);
    const size_t len = strlen(txt) + 1;
    if (ps->nsp >= ARGUS_PYSTACKS_MAX_SPANS || ps->used + len > ARENA_MAX ||
        argus_grow(&ps->sp, &ps->capsp, ps->nsp + 1, sizeof *ps->sp, 256) != 0 ||
        argus_grow(&ps->arena, &ps->caparena, ps->used + len, 1, 16384) != 0) {
        ps->dropped++;
        return -ENOSPC;
    }
    memcpy(ps->arena + ps->used, txt, len);
    ps->sp[ps->nsp++] = (struct span){start_ns, start_ns + dur_ns, tid, (uint32_t)ps->used,
                                      NONE};
    ps->used += len;
    return 0;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the longer (outer) first */
}

static int cmp_step(const void *a, const void *b)
{
    const struct argus_pystacks_step *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Parent links of spans [b, e) (sorted): the innermost open span of the same thread. */
static void nest(struct span *sp, size_t b, size_t e)
{
    uint32_t stk[DEPTH_MAX];
    size_t d = 0;
    for (size_t i = b; i < e; i++) {
        while (d && (sp[stk[d - 1]].tid != sp[i].tid || sp[stk[d - 1]].end <= sp[i].start))
            d--;
        sp[i].parent = d ? stk[d - 1] : NONE;
        if (d < DEPTH_MAX)
            stk[d++] = (uint32_t)i;
    }
}

/* The step holding [s, e] whole (steps sorted by start), or NULL. */
static const struct argus_pystacks_step *step_holding(const struct argus_pystacks_step *st,
                                                      size_t n, uint64_t s, uint64_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first step starting after s */
        size_t m = lo + (hi - lo) / 2;
        if (st[m].start <= s)
            lo = m + 1;
        else
            hi = m;
    }
    return lo && e <= st[lo - 1].end ? &st[lo - 1] : NULL;
}

static void add_stall(struct argus_pystacks *ps, uint64_t step, uint32_t leaf)
{
    const struct span *s = &ps->sp[leaf];
    if (ps->nst >= STALLS_MAX ||
        argus_grow(&ps->st, &ps->capst, ps->nst + 1, sizeof *ps->st, 64) != 0) {
        ps->dropped++;
        return;
    }
    ps->st[ps->nst++] = (struct stall){step, s->start + (s->end - s->start) / 2,
                                       s->end - s->start, leaf, 0};
}

/* The main thread's innermost span at the middle of each step (steps sorted by start:
 * their middles ascend too, as steps do not overlap). */
static void mids(struct argus_pystacks *ps, const struct argus_pystacks_step *st, size_t n,
                 size_t b, size_t e)
{
    int64_t tid = 0;
    uint64_t longest = 0;
    for (size_t i = b; i < e; i++)
        if (ps->sp[i].end - ps->sp[i].start > longest)
            longest = ps->sp[i].end - ps->sp[i].start, tid = ps->sp[i].tid;
    size_t j = b, last = NONE;
    for (size_t k = 0; k < n; k++) {
        const uint64_t m = st[k].start + (st[k].end - st[k].start) / 2;
        for (; j < e && (ps->sp[j].tid < tid || (ps->sp[j].tid == tid && ps->sp[j].start <= m));
             j++)
            if (ps->sp[j].tid == tid)
                last = j;
        uint32_t in = (uint32_t)last;
        while (in != NONE && ps->sp[in].end <= m)
            in = ps->sp[in].parent;
        if (ps->nmd >= ARGUS_PYSTACKS_MAX_STEPS ||
            argus_grow(&ps->md, &ps->capmd, ps->nmd + 1, sizeof *ps->md, 256) != 0) {
            ps->dropped++;
            return;
        }
        ps->md[ps->nmd++] = (struct mid){st[k].n, m, in};
    }
}

static int cmp_mid(const void *a, const void *b)
{
    const struct mid *x = a, *y = b;
    return x->step < y->step ? -1 : x->step > y->step;
}

void argus_pystacks_steps(struct argus_pystacks *ps, const struct argus_pystacks_step *in,
                          size_t n)
{
    const size_t b = ps->p_sp, e = ps->nsp;
    struct argus_pystacks_step *st = n ? malloc(n * sizeof *st) : NULL;
    if (!st || b == e) {
        free(st);
        return;
    }
    memcpy(st, in, n * sizeof *st);
    qsort(st, n, sizeof *st, cmp_step);
    qsort(ps->sp + b, e - b, sizeof *ps->sp, cmp_span);
    nest(ps->sp, b, e);
    for (size_t i = b; i < e; i++) {
        const struct span *s = &ps->sp[i];
        if (i + 1 < e && ps->sp[i + 1].tid == s->tid && ps->sp[i + 1].start < s->end)
            continue; /* calls something that long: not the innermost */
        const struct argus_pystacks_step *h = step_holding(st, n, s->start, s->end);
        if (h)
            add_stall(ps, h->n, (uint32_t)i);
    }
    const size_t m0 = ps->nmd;
    mids(ps, st, n, b, e);
    if (ps->nmd > m0 + 1)
        qsort(ps->md + m0, ps->nmd - m0, sizeof *ps->md, cmp_mid);
    free(st);
}

void argus_pystacks_commit(struct argus_pystacks *ps, uint32_t rank, int have_coords,
                           const struct argus_coords *c)
{
    if (argus_grow(&ps->tr, &ps->captr, ps->ntr + 1, sizeof *ps->tr, 16) != 0) {
        ps->dropped += ps->nst - ps->p_st;
        argus_pystacks_discard(ps);
        return;
    }
    struct trace *t = &ps->tr[ps->ntr++];
    memset(t, 0, sizeof *t);
    t->rank = rank;
    t->have_coords = have_coords && c;
    if (t->have_coords)
        t->c = *c;
    t->mid0 = ps->p_md;
    t->nmid = ps->nmd - ps->p_md;
    for (size_t i = ps->p_st; i < ps->nst; i++)
        ps->st[i].rank = rank;
    ps->p_sp = ps->nsp, ps->p_st = ps->nst, ps->p_md = ps->nmd, ps->p_arena = ps->used;
}

void argus_pystacks_discard(struct argus_pystacks *ps)
{
    ps->nsp = ps->p_sp, ps->nst = ps->p_st, ps->nmd = ps->p_md, ps->used = ps->p_arena;
}

/* The stack ending at leaf, outermost first, into r (folded, nframes). */
static void fold(const struct argus_pystacks *ps, uint32_t leaf, struct argus_stackrec *r)
{
    uint32_t chain[DEPTH_MAX];
    size_t n = 0, off = 0;
    for (uint32_t i = leaf; i != NONE && n < DEPTH_MAX; i = ps->sp[i].parent)
        chain[n++] = i;
    r->folded[0] = '\0';
    r->nframes = 0;
    while (n--) {
        const char *f = ps->arena + ps->sp[chain[n]].name;
        const size_t len = strlen(f), need = len + (off ? 1 : 0);
        if (off + need + 1 > sizeof r->folded)
            break; /* whole frames only */
        if (off)
            r->folded[off++] = ';';
        memcpy(r->folded + off, f, len + 1);
        off += len;
        r->nframes++;
    }
}

/* The stalls' (rank, step) keys, sorted, each with the first stall that has it. */
struct key {
    uint64_t step;
    uint32_t rank, first;
};

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The first key of (rank, step) in k[0..n), or NULL. */
static const struct key *find_key(const struct key *k, size_t n, uint32_t rank, uint64_t step)
{
    size_t lo = 0, hi = n;
    const struct key want = {step, rank, 0};
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (cmp_key(&k[m], &want) < 0)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && k[lo].rank == rank && k[lo].step == step ? &k[lo] : NULL;
}

/* Same peer class: the same TP, PP and EP position, another DP replica. */
static int same_class(const struct trace *a, const struct trace *b)
{
    return a->have_coords && b->have_coords && a->c.tp == b->c.tp && a->c.pp == b->c.pp &&
           a->c.ep == b->c.ep && a->c.tp_size == b->c.tp_size && a->c.pp_size == b->c.pp_size;
}

static const struct mid *mid_of(const struct argus_pystacks *ps, const struct trace *t,
                                uint64_t step)
{
    size_t lo = 0, hi = t->nmid;
    const struct mid *v = ps->md + t->mid0;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m].step < step)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < t->nmid && v[lo].step == step && v[lo].leaf != NONE ? &v[lo] : NULL;
}

/* Up to two healthy peers of the stall s: of its peer class when the layout says and
 * one exists, else the nearest other ranks; each must not stall at that step itself and
 * must have a stack at its middle. */
static size_t peers(const struct argus_pystacks *ps, const struct key *keys,
                    const struct stall *s, size_t *out)
{
    const struct trace *me = NULL;
    int any_class = 0;
    for (size_t i = 0; i < ps->ntr; i++)
        if (ps->tr[i].rank == s->rank)
            me = &ps->tr[i];
    for (size_t i = 0; me && i < ps->ntr; i++)
        any_class |= &ps->tr[i] != me && same_class(me, &ps->tr[i]);
    uint64_t best[2] = {UINT64_MAX, UINT64_MAX};
    size_t n = 0;
    for (size_t i = 0; i < ps->ntr; i++) {
        const struct trace *t = &ps->tr[i];
        const uint64_t d = t->rank > s->rank ? t->rank - s->rank : s->rank - t->rank;
        const size_t k = d < best[0] ? 0 : d < best[1] ? 1 : 2;
        if (k == 2 || t->rank == s->rank || (any_class && !same_class(me, t)) ||
            find_key(keys, ps->nst, t->rank, s->step) || !mid_of(ps, t, s->step))
            continue;
        if (k == 0)
            best[1] = best[0], out[1] = out[0];
        best[k] = d, out[k] = i;
        n += n < 2;
    }
    return n;
}

size_t argus_pystacks_fill(const struct argus_pystacks *ps, struct argus_stackset *set)
{
    struct argus_stackrec r;
    size_t added = 0;
    struct key *keys = ps->nst ? malloc(ps->nst * sizeof *keys) : NULL;

    if (!keys)
        return 0;
    for (size_t i = 0; i < ps->nst; i++)
        keys[i] = (struct key){ps->st[i].step, ps->st[i].rank, (uint32_t)i};
    qsort(keys, ps->nst, sizeof *keys, cmp_key);
    for (size_t i = 0; i < ps->nst; i++) {
        const struct stall *s = &ps->st[i];
        memset(&r, 0, sizeof r);
        r.rank = s->rank;
        r.step = s->step;
        r.t_ns = s->mid_ns;
        r.stalled_ms = (uint32_t)(s->dur_ns / 1000000u);
        r.why = ARGUS_STACK_WHY_STALL;
        r.lang = ARGUS_STACK_PYTHON;
        fold(ps, s->leaf, &r);
        added += (size_t)argus_stackset_add(set, &r);
        /* peers once per (rank, step): at its first stall */
        const int first = find_key(keys, ps->nst, s->rank, s->step)->first == i;
        size_t pi[2];
        const size_t np = first ? peers(ps, keys, s, pi) : 0;
        for (size_t k = 0; k < np; k++) {
            const struct trace *t = &ps->tr[pi[k]];
            const struct mid *m = mid_of(ps, t, s->step);
            memset(&r, 0, sizeof r);
            r.rank = t->rank;
            r.step = s->step;
            r.t_ns = m->mid_ns;
            r.why = ARGUS_STACK_WHY_PEER;
            r.lang = ARGUS_STACK_PYTHON;
            r.for_rank = s->rank;
            r.for_step = s->step;
            fold(ps, m->leaf, &r);
            added += (size_t)argus_stackset_add(set, &r);
        }
    }
    free(keys);
    return added;
}

uint64_t argus_pystacks_dropped(const struct argus_pystacks *ps)
{
    return ps->dropped;
}

size_t argus_pystacks_stalls(const struct argus_pystacks *ps)
{
    return ps->nst;
}
