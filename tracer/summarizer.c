/* summarizer.c — the per-rank step summariser of summarizer.h. One step's kernels go into
 * a preallocated event buffer; at step end the summary (phases, busy/host gap, class
 * totals, per-(kernel, mode) statistics) is built by stepsum.c with preallocated scratch
 * arrays and handed to on_summary. This file: create/free, name interning, phase ranges,
 * events, step marks. Must not allocate after create, must not block, must not log per
 * event.
 *
 * Rules chosen here (see also summarizer.h):
 * - Phase wall time: between two phase marks (push/pop) inside a step, the time goes to
 *   the phase of the innermost open range; time with no range open goes nowhere. Only
 *   FORWARD/BACKWARD/OPTIMIZER/OTHER walls are reported; ranges that map to COMM or HOST
 *   are measured by kernel time and host gap instead.
 * - A kernel's phase is the innermost open range's phase at its start time (looked up in
 *   the step's phase timeline from the last lookup's segment; OTHER when no range was
 *   open).
 * - Hot path per kernel: no hashing, no sort, no call in the common case (a known name
 *   pointer through the _static entry); the duration goes into its name's block of a
 *   preallocated pool and the busy-time union is kept as kernels come (while their starts
 *   are in order), so the step end sorts nothing: it splits each kernel's durations by a
 *   fine-bin histogram and the split kept from earlier steps (stepsum.c, modes.c).
 * - kernel_count and the class/phase kernel totals include events dropped for lack of
 *   buffer space; busy_ns, idle_long_ns and the kmodes cover stored events only
 *   (PARTIAL then set). Kernels outside a step count only in the running dropped total.
 * - Names are truncated to ARGUS_NAME_MAX bytes, then hashed (argus_name_hash), so the
 *   hash always matches the name handed to on_name. The table keeps each name's hash
 *   and, while its fixed arena has room, a copy of names shorter than ARGUS_NAME_MAX: a
 *   small cache keyed by the caller's name pointer, verified with strcmp against that
 *   copy, then skips re-hashing (hashing a 150-byte mangled name costs ~10x the compare);
 *   for names declared immutable (argus_summarizer_kernel_static: CUPTI's) the compare
 *   is done once per pointer. Names beyond max_names and the records
 *   beyond ARGUS_MAX_KMODES fold into one record per class named "[other]" whose mode
 *   field is the class, so (name_hash, mode) stays unique.
 */
#include "tracer/summarizer.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/sm_internal.h"

static void total_inc(uint64_t *v)
{
    __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

int argus_summarizer_create(const struct argus_summarizer_opts *o, struct argus_summarizer **out)
{
    struct argus_summarizer *sm;
    size_t nslots = 2;

    if (!o || !out || o->max_events == 0 || o->max_names == 0 ||
        o->max_events > MAX_EVENTS_LIMIT || o->max_names > MAX_NAMES_LIMIT)
        return -EINVAL;
    *out = NULL;
    sm = calloc(1, sizeof *sm);
    if (!sm)
        return -ENOMEM;
    sm->o = *o;
    while (nslots < 2 * o->max_names)
        nslots <<= 1;
    sm->slot_mask = nslots - 1;
    sm->max_touched = o->max_names < o->max_events ? o->max_names : o->max_events;
    sm->max_cands = o->max_events;
    if (sm->max_cands > (size_t)ARGUS_MODES_MAX * o->max_names)
        sm->max_cands = (size_t)ARGUS_MODES_MAX * o->max_names;

    sm->slots = calloc(nslots, sizeof *sm->slots);
    sm->name_hash = calloc(o->max_names, sizeof *sm->name_hash);
    sm->nst = calloc(o->max_names, sizeof *sm->nst);
    sm->name_first = calloc(o->max_names, sizeof *sm->name_first);
    sm->pool_blocks = o->max_events / SM_BLK + sm->max_touched + 1;
    sm->pool = calloc(sm->pool_blocks * SM_BLK, sizeof *sm->pool);
    sm->blk_next = calloc(sm->pool_blocks, sizeof *sm->blk_next);
    sm->name_class = calloc(o->max_names, sizeof *sm->name_class);
    sm->name_last_end = calloc(o->max_names, sizeof *sm->name_last_end);
    sm->name_text = calloc(o->max_names, sizeof *sm->name_text);
    sm->arena_cap = o->max_names * ARENA_PER_NAME;
    sm->arena = malloc(sm->arena_cap);
    sm->cache = calloc(CACHE_SIZE, sizeof *sm->cache);
    sm->touched = calloc(sm->max_touched, sizeof *sm->touched);
    sm->ek = calloc(o->max_events, sizeof *sm->ek);
    sm->es = calloc(o->max_events, sizeof *sm->es);
    sm->segs = calloc(MAX_SEGS, sizeof *sm->segs);
    sm->pa = calloc(o->max_events, sizeof *sm->pa);
    sm->pb = calloc(o->max_events, sizeof *sm->pb);
    sm->cands = calloc(sm->max_cands, sizeof *sm->cands);
    sm->ord = calloc(2 * sm->max_cands, sizeof *sm->ord);
    sm->hist = calloc(ARGUS_FBIN_COUNT, sizeof *sm->hist);
    sm->hicnt = calloc(ARGUS_FBIN_COUNT, sizeof *sm->hicnt);
    sm->qlo = calloc(ARGUS_FBIN_COUNT, sizeof *sm->qlo);
    sm->qthr = calloc(ARGUS_FBIN_COUNT, sizeof *sm->qthr);
    sm->bsc.y = calloc(ARGUS_FBIN_COUNT, sizeof *sm->bsc.y);
    sm->bsc.cum = calloc(ARGUS_FBIN_COUNT, sizeof *sm->bsc.cum);
    sm->bsc.bin = calloc(ARGUS_FBIN_COUNT, sizeof *sm->bsc.bin);
    sm->memo = calloc(o->max_names, sizeof *sm->memo);
    if (!sm->slots || !sm->name_hash || !sm->nst || !sm->name_first || !sm->name_class ||
        !sm->name_last_end ||
        !sm->pool || !sm->blk_next || !sm->name_text || !sm->arena ||
        !sm->cache || !sm->touched || !sm->ek || !sm->es || !sm->segs || !sm->pa || !sm->pb ||
        !sm->cands || !sm->ord || !sm->hist || !sm->hicnt || !sm->qlo || !sm->qthr ||
        !sm->bsc.y || !sm->bsc.cum || !sm->bsc.bin || !sm->memo) {
        argus_summarizer_free(sm);
        return -ENOMEM;
    }
    *out = sm;
    return 0;
}

void argus_summarizer_free(struct argus_summarizer *sm)
{
    if (!sm)
        return;
    free(sm->slots);
    free(sm->name_hash);
    free(sm->nst);
    free(sm->name_first);
    free(sm->pool);
    free(sm->blk_next);
    free(sm->name_class);
    free(sm->name_last_end);
    free(sm->name_text);
    free(sm->arena);
    free(sm->cache);
    free(sm->touched);
    free(sm->ek);
    free(sm->es);
    free(sm->segs);
    free(sm->pa);
    free(sm->pb);
    free(sm->cands);
    free(sm->ord);
    free(sm->hist);
    free(sm->hicnt);
    free(sm->qlo);
    free(sm->qthr);
    free(sm->bsc.y);
    free(sm->bsc.cum);
    free(sm->bsc.bin);
    free(sm->memo);
    free(sm);
}

void argus_summarizer_set_coords(struct argus_summarizer *sm, const struct argus_coords *c)
{
    if (sm && c)
        sm->coords = *c;
}

uint64_t argus_summarizer_dropped(const struct argus_summarizer *sm)
{
    return sm ? __atomic_load_n(&sm->total_dropped, __ATOMIC_RELAXED) : 0;
}

uint64_t argus_summarizer_kernels(const struct argus_summarizer *sm)
{
    return sm ? __atomic_load_n(&sm->total_kernels, __ATOMIC_RELAXED) : 0;
}

/* ---- names ------------------------------------------------------------------------- */

static void emit_name(struct argus_summarizer *sm, uint64_t hash, const char *name)
{
    size_t len;

    if (!sm->o.on_name)
        return;
    len = strnlen(name, ARGUS_NAME_MAX);
    memcpy(sm->namebuf, name, len);
    sm->namebuf[len] = '\0';
    sm->o.on_name(sm->o.ctx, hash, sm->namebuf);
}

void argus_sm_emit_other_name(struct argus_summarizer *sm)
{
    if (sm->other_named)
        return;
    sm->other_named = 1;
    emit_name(sm, argus_name_hash(OTHER_NAME), OTHER_NAME);
}

/* Index of the name with this hash, interning it (and telling on_name) when new;
 * NAME_NONE when the table is full. */
static uint32_t intern(struct argus_summarizer *sm, const char *name, uint64_t hash)
{
    size_t i = (size_t)hash & sm->slot_mask;
    struct name_slot *slot;

    for (;;) {
        slot = &sm->slots[i];
        if (!slot->idx1)
            break;
        if (slot->hash == hash)
            return slot->idx1 - 1;
        i = (i + 1) & sm->slot_mask;
    }
    if (sm->n_names >= sm->o.max_names)
        return NAME_NONE;
    uint32_t idx = (uint32_t)sm->n_names++;
    slot->hash = hash;
    slot->idx1 = idx + 1;
    sm->name_hash[idx] = hash;
    size_t len = strnlen(name, ARGUS_NAME_MAX);
    if (len < ARGUS_NAME_MAX && sm->arena_cap - sm->arena_used > len) {
        memcpy(sm->arena + sm->arena_used, name, len + 1);
        sm->name_text[idx] = (uint32_t)sm->arena_used + 1;
        sm->arena_used += len + 1;
    }
    emit_name(sm, hash, name);
    return idx;
}

/* lookup_name's miss path: hash (a long name truncated first), intern, cache. */
static __attribute__((noinline)) uint32_t lookup_miss(struct argus_summarizer *sm,
                                                      struct name_cache *c, const char *name,
                                                      int trusted)
{
    uint32_t idx;

    if (strnlen(name, ARGUS_NAME_MAX + 1) > ARGUS_NAME_MAX) {
        memcpy(sm->keybuf, name, ARGUS_NAME_MAX);
        sm->keybuf[ARGUS_NAME_MAX] = '\0';
        name = sm->keybuf; /* never cached: its text differs from the caller's */
    }
    idx = intern(sm, name, argus_name_hash(name));
    if (idx != NAME_NONE && sm->name_text[idx]) {
        c->ptr = name;
        c->idx = idx;
        c->trusted = (uint32_t)trusted;
    }
    return idx;
}

/* Index (or NAME_NONE) of a name; the pointer cache avoids re-hashing. trusted: the
 * caller promises the text at name never changes (then a trusted entry is used without
 * comparing the text, and a matching entry becomes trusted). */
static inline __attribute__((always_inline)) uint32_t
lookup_name(struct argus_summarizer *sm, const char *name, int trusted)
{
    uint64_t p = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
    struct name_cache *c = &sm->cache[p >> (64 - CACHE_BITS)];

    if (c->ptr == name) {
        if (trusted && c->trusted)
            return c->idx;
        if (strcmp(name, sm->arena + sm->name_text[c->idx] - 1) == 0) {
            c->trusted |= (uint32_t)trusted;
            return c->idx;
        }
    }
    return lookup_miss(sm, c, name, trusted);
}

/* ---- phases ------------------------------------------------------------------------ */

static uint8_t cur_phase(const struct argus_summarizer *sm)
{
    return sm->depth ? sm->stack[sm->depth - 1] : (uint8_t)ARGUS_PH_OTHER;
}

/* Attribute wall time up to t to the innermost open range (inside a step only). */
static void phase_advance(struct argus_summarizer *sm, uint64_t t)
{
    if (!sm->in_step || t <= sm->wall_t)
        return;
    if (sm->depth)
        sm->phase_wall[sm->stack[sm->depth - 1]] += t - sm->wall_t;
    sm->wall_t = t;
}

/* Record in the step's timeline that kernels from t on get the current phase. */
static void phase_mark(struct argus_summarizer *sm, uint64_t t)
{
    struct phase_seg *last;

    if (!sm->in_step)
        return;
    last = &sm->segs[sm->n_segs - 1];
    /* Kernels from the newest segment's start on get the current phase (what phase_at
     * answers there, full timeline or not). */
    sm->ph_cur = cur_phase(sm);
    if (t <= last->t) {
        /* Same instant (or out of order): the newest state wins from last->t on. */
        last->phase = cur_phase(sm);
        return;
    }
    if (sm->n_segs >= MAX_SEGS) {
        sm->segs_full = 1;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        return;
    }
    sm->segs[sm->n_segs].t = t;
    sm->segs[sm->n_segs].phase = cur_phase(sm);
    sm->n_segs++;
    sm->ph_t = t;
}

/* Phase of a kernel starting at t: the segment with the largest start <= t (the first one
 * before it; the open state once the timeline is full). Kernels come mostly in time
 * order, so the segment of the last lookup (or the next one) usually answers. */
static uint8_t phase_at(struct argus_summarizer *sm, uint64_t t)
{
    size_t lo = sm->seg_cur, hi = sm->n_segs;

    if (lo + 1 == hi && t >= sm->segs[lo].t) /* the newest segment: the common case */
        return sm->segs_full ? cur_phase(sm) : sm->segs[lo].phase;
    if (lo >= hi || t < sm->segs[lo].t) {
        if (t < sm->segs[0].t)
            return sm->segs[0].phase;
        lo = 0;
    } else if (lo + 1 < hi && t >= sm->segs[lo + 1].t) {
        lo++;
        if (lo + 1 < hi && t >= sm->segs[lo + 1].t)
            lo++;
        else
            hi = lo + 1;
    } else {
        hi = lo + 1;
    }
    /* Largest i in [lo, hi) with segs[i].t <= t (segs[lo].t <= t holds). */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (sm->segs[mid].t <= t)
            lo = mid;
        else
            hi = mid;
    }
    sm->seg_cur = lo;
    if (lo == sm->n_segs - 1 && sm->segs_full)
        return cur_phase(sm);
    return sm->segs[lo].phase;
}

void argus_summarizer_phase_push(struct argus_summarizer *sm, const char *name, uint64_t t_ns)
{
    if (!sm)
        return;
    if (sm->depth >= PHASE_DEPTH) {
        sm->ignored_pushes++;
        return;
    }
    phase_advance(sm, t_ns);
    sm->stack[sm->depth++] = (uint8_t)argus_phase_from_name(name);
    phase_mark(sm, t_ns);
}

void argus_summarizer_phase_pop(struct argus_summarizer *sm, uint64_t t_ns)
{
    if (!sm)
        return;
    if (sm->ignored_pushes) {
        sm->ignored_pushes--;
        return;
    }
    if (!sm->depth)
        return;
    phase_advance(sm, t_ns);
    sm->depth--;
    phase_mark(sm, t_ns);
}

/* ---- events ------------------------------------------------------------------------ */

/* A new block for name idx, which has c stored kernels (a multiple of SM_BLK). Blocks
 * come from the step's pool in order; a name's blocks are chained. */
static uint32_t new_block(struct argus_summarizer *sm, uint32_t idx, uint32_t c, int kclass)
{
    uint32_t b = sm->blk_used++;

    if (c == 0) {
        sm->touched[sm->n_touched++] = idx;
        sm->name_class[idx] = (uint8_t)kclass;
        sm->name_first[idx] = b;
        sm->name_last_end[idx] = 0;
    } else {
        sm->blk_next[sm->nst[idx].blk] = b;
    }
    sm->nst[idx].blk = b;
    return b;
}

/* The time totals of a kernel in the step (stored or not). */
static inline __attribute__((always_inline)) void
kernel_totals(struct argus_summarizer *sm, uint64_t dur, int kclass, uint8_t ph)
{
    sm->class_ns[kclass] += dur;
    if (kclass == ARGUS_KC_COMPUTE)
        sm->phase_compute[ph] += dur;
}

/* Store a kernel's interval: for busy time at the step end, and the running union of the
 * intervals clipped to the step begin while their starts come in order (cs: the open
 * run's start, at the step begin at first), with its longest gap; a start before the
 * open run leaves busy and idle time to the step end. */
static inline __attribute__((always_inline)) void
kernel_span(struct argus_summarizer *sm, uint64_t start_ns, uint64_t end_ns)
{
    uint64_t s = start_ns > sm->begin ? start_ns : sm->begin;

    sm->es[sm->n_ev++] = (struct ev_span){start_ns, end_ns};
    if (end_ns > s) {
        struct busy_run *r = &sm->busy;
        if (s > r->ce) {
            r->sum += r->ce - r->cs;
            if (s - r->ce > r->gap) {
                r->gap = s - r->ce;
                r->gap_end = s;
            }
            r->cs = s;
        } else if (s < r->cs) {
            r->sorted = 0;
        }
        r->ce = end_ns > r->ce ? end_ns : r->ce;
    }
}

static inline __attribute__((always_inline)) void
kernel_add(struct argus_summarizer *sm, const char *name, uint64_t start_ns, uint64_t end_ns,
           int kclass, int trusted)
{
    uint64_t dur, key;
    uint32_t idx;
    uint8_t ph;

    if (!sm)
        return;
    total_inc(&sm->total_kernels);
    if (!sm->in_step || (unsigned)kclass >= ARGUS_KC_COUNT) {
        total_inc(&sm->total_dropped);
        return;
    }
    if (end_ns < start_ns)
        end_ns = start_ns;
    dur = end_ns - start_ns;
    ph = start_ns >= sm->ph_t ? sm->ph_cur : phase_at(sm, start_ns);
    kernel_totals(sm, dur, kclass, ph);
    if (sm->n_ev >= sm->o.max_events) {
        sm->step_kernels++; /* the stored ones are counted by n_ev */
        sm->step_dropped++;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        total_inc(&sm->total_dropped);
        return;
    }
    if (!name)
        name = "[unnamed]";
    idx = lookup_name(sm, name, trusted);
    key = argus_dkey(dur, ph);
    if (idx != NAME_NONE) {
        uint32_t c = sm->nst[idx].count++, b = sm->nst[idx].blk;
        if ((c & (SM_BLK - 1)) == 0)
            b = new_block(sm, idx, c, kclass);
        sm->pool[(size_t)b * SM_BLK + (c & (SM_BLK - 1))] = key;
        if (kclass == ARGUS_KC_COLLECTIVE && end_ns > sm->name_last_end[idx])
            sm->name_last_end[idx] = end_ns;
    } else {
        sm->ovf_classes |= 1u << kclass;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        sm->ek[sm->n_ovf++] = (struct ev_key){key, NAME_NONE, (uint32_t)kclass};
    }
    kernel_span(sm, start_ns, end_ns);
}

/* kernel_add for a trusted name pointer, out of line: the fast path's way out. */
static __attribute__((noinline)) void kernel_add_static(struct argus_summarizer *sm,
                                                        const char *name, uint64_t start_ns,
                                                        uint64_t end_ns, int kclass)
{
    kernel_add(sm, name, start_ns, end_ns, kclass, 1);
}

void argus_summarizer_kernel(struct argus_summarizer *sm, const char *name, uint64_t start_ns,
                             uint64_t end_ns, uint32_t device, uint32_t stream, int kclass)
{
    (void)device, (void)stream;
    kernel_add(sm, name, start_ns, end_ns, kclass, 0);
}

/* The common case of a trusted name, as kernel_add does it, with every check made before
 * anything changes and every other case handed whole to kernel_add_static: the fast path
 * calls nothing, so it saves no registers. */
void argus_summarizer_kernel_static(struct argus_summarizer *sm, const char *name,
                                    uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                    uint32_t stream, int kclass)
{
    (void)device, (void)stream;
    if (!sm || !name || !sm->in_step || (unsigned)kclass >= ARGUS_KC_COUNT ||
        start_ns < sm->ph_t || sm->n_ev >= sm->o.max_events)
        goto slow;
    uint64_t p = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
    const struct name_cache *c = &sm->cache[p >> (64 - CACHE_BITS)];
    if (c->ptr != name || !c->trusted)
        goto slow;
    struct name_step *ns = &sm->nst[c->idx];
    uint32_t n = ns->count;
    if (n == 0) /* the name's first kernel in the step */
        goto slow;
    total_inc(&sm->total_kernels);
    if (end_ns < start_ns)
        end_ns = start_ns;
    uint64_t dur = end_ns - start_ns;
    kernel_totals(sm, dur, kclass, sm->ph_cur);
    if ((n & (SM_BLK - 1)) == 0) { /* new_block's chaining case */
        uint32_t b = (uint32_t)sm->blk_used++;
        sm->blk_next[ns->blk] = b;
        ns->blk = b;
    }
    ns->count = n + 1;
    sm->pool[(size_t)ns->blk * SM_BLK + (n & (SM_BLK - 1))] =
        argus_dkey(dur, sm->ph_cur);
    if (kclass == ARGUS_KC_COLLECTIVE && end_ns > sm->name_last_end[c->idx])
        sm->name_last_end[c->idx] = end_ns;
    kernel_span(sm, start_ns, end_ns);
    return;
slow:
    kernel_add_static(sm, name, start_ns, end_ns, kclass);
}

void argus_summarizer_step_begin(struct argus_summarizer *sm, uint64_t step, uint64_t t_ns)
{
    if (!sm)
        return;
    if (sm->in_step) {
        if (step <= sm->step)
            return;
        /* A begin without an end: the open step ends where the new one begins. */
        argus_summarizer_step_end(sm, sm->step, t_ns);
    } else if (sm->have_last && step <= sm->last_step) {
        return;
    }
    sm->in_step = 1;
    sm->step = step;
    sm->begin = t_ns;
    sm->n_ev = 0;
    sm->step_kernels = 0;
    sm->step_dropped = 0;
    sm->step_overhead_ns = 0;
    sm->step_flags = 0;
    sm->ovf_classes = 0;
    memset(sm->class_ns, 0, sizeof sm->class_ns);
    memset(sm->phase_compute, 0, sizeof sm->phase_compute);
    memset(sm->phase_wall, 0, sizeof sm->phase_wall);
    sm->wall_t = t_ns;
    sm->segs[0].t = t_ns;
    sm->segs[0].phase = cur_phase(sm);
    sm->n_segs = 1;
    sm->seg_cur = 0;
    sm->segs_full = 0;
    sm->ph_t = t_ns;
    sm->ph_cur = cur_phase(sm);
    sm->n_ovf = 0;
    sm->blk_used = 0;
    memset(&sm->busy, 0, sizeof sm->busy);
    sm->busy.cs = sm->busy.ce = t_ns;
    sm->busy.sorted = 1;
}

void argus_summarizer_step_end(struct argus_summarizer *sm, uint64_t step, uint64_t t_ns)
{
    if (!sm || !sm->in_step || step != sm->step)
        return;
    if (t_ns < sm->begin)
        t_ns = sm->begin;
    phase_advance(sm, t_ns);
    argus_sm_build_summary(sm, step, t_ns);
    for (size_t t = 0; t < sm->n_touched; t++)
        sm->nst[sm->touched[t]].count = 0;
    sm->n_touched = 0;
    sm->n_ev = 0;
    sm->in_step = 0;
    sm->have_last = 1;
    sm->last_step = step;
    if (sm->o.on_summary)
        sm->o.on_summary(sm->o.ctx, &sm->sum);
}

void argus_summarizer_add_dropped(struct argus_summarizer *sm, uint64_t n)
{
    if (!sm || !sm->in_step || n == 0)
        return;
    sm->step_dropped += n;
    sm->step_flags |= ARGUS_SF_PARTIAL;
    __atomic_fetch_add(&sm->total_dropped, n, __ATOMIC_RELAXED);
}

void argus_summarizer_add_overhead(struct argus_summarizer *sm, uint64_t ns)
{
    if (sm && sm->in_step)
        sm->step_overhead_ns += ns;
}

void argus_summarizer_add_flags(struct argus_summarizer *sm, uint32_t flags)
{
    if (sm && sm->in_step)
        sm->step_flags |= flags;
}
