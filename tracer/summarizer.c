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
 * - Hot path per kernel: no hashing, no sort; the busy-time union is kept as kernels come
 *   (while their starts are in order) so the step end sorts only the durations.
 * - kernel_count and the class/phase kernel totals include events dropped for lack of
 *   buffer space; busy_ns and the kmodes cover stored events only (PARTIAL then set).
 *   Kernels outside a step count only in the running dropped total.
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
    sm->name_count = calloc(o->max_names, sizeof *sm->name_count);
    sm->name_off = calloc(o->max_names, sizeof *sm->name_off);
    sm->name_class = calloc(o->max_names, sizeof *sm->name_class);
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
    sm->ylog = calloc(o->max_events, sizeof *sm->ylog);
    sm->cands = calloc(sm->max_cands, sizeof *sm->cands);
    sm->ord = calloc(2 * sm->max_cands, sizeof *sm->ord);
    if (!sm->slots || !sm->name_hash || !sm->name_count || !sm->name_off || !sm->name_class ||
        !sm->name_text || !sm->arena || !sm->cache || !sm->touched || !sm->ek || !sm->es ||
        !sm->segs || !sm->pa || !sm->pb || !sm->ylog || !sm->cands || !sm->ord) {
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
    free(sm->name_count);
    free(sm->name_off);
    free(sm->name_class);
    free(sm->name_text);
    free(sm->arena);
    free(sm->cache);
    free(sm->touched);
    free(sm->ek);
    free(sm->es);
    free(sm->segs);
    free(sm->pa);
    free(sm->pb);
    free(sm->ylog);
    free(sm->cands);
    free(sm->ord);
    free(sm);
}

void argus_summarizer_set_coords(struct argus_summarizer *sm, const struct argus_coords *c)
{
    if (sm && c)
        sm->coords = *c;
}

void argus_summarizer_set_clock_offset(struct argus_summarizer *sm, int64_t offset_ns)
{
    if (sm)
        sm->clock_offset = offset_ns;
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

/* Index (or NAME_NONE) of a name; the pointer cache avoids re-hashing. trusted: the
 * caller promises the text at name never changes (then a trusted entry is used without
 * comparing the text, and a matching entry becomes trusted). */
static inline uint32_t lookup_name(struct argus_summarizer *sm, const char *name, int trusted)
{
    uint64_t p = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
    struct name_cache *c = &sm->cache[p >> (64 - CACHE_BITS)];
    uint32_t idx;

    if (c->ptr == name) {
        if (trusted && c->trusted)
            return c->idx;
        if (strcmp(name, sm->arena + sm->name_text[c->idx] - 1) == 0) {
            c->trusted |= (uint32_t)trusted;
            return c->idx;
        }
    }
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

/* Add [s, e) (s already clipped to the step begin) to the running union while starts
 * come in order; the first start out of order leaves busy time to the step end. */
static void busy_add(struct busy_run *b, uint64_t s, uint64_t e)
{
    if (e > b->max_end)
        b->max_end = e;
    if (!b->any) {
        b->any = 1;
        b->cs = s;
        b->ce = e;
    } else if (s < b->cs) {
        b->sorted = 0;
    } else if (s > b->ce) {
        b->sum += b->ce - b->cs;
        b->cs = s;
        b->ce = e;
    } else if (e > b->ce) {
        b->ce = e;
    }
}

static inline void kernel_add(struct argus_summarizer *sm, const char *name,
                              uint64_t start_ns, uint64_t end_ns, int kclass, int trusted)
{
    uint64_t dur, s;
    uint32_t idx;
    uint8_t ph;

    if (!sm)
        return;
    total_inc(&sm->total_kernels);
    if (!sm->in_step || kclass < 0 || kclass >= ARGUS_KC_COUNT) {
        total_inc(&sm->total_dropped);
        return;
    }
    if (end_ns < start_ns)
        end_ns = start_ns;
    dur = end_ns - start_ns;
    ph = phase_at(sm, start_ns);
    sm->step_kernels++;
    sm->class_ns[kclass] += dur;
    if (kclass == ARGUS_KC_COMPUTE)
        sm->phase_compute[ph] += dur;
    if (sm->n_ev >= sm->o.max_events) {
        sm->step_dropped++;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        total_inc(&sm->total_dropped);
        return;
    }
    if (!name)
        name = "[unnamed]";
    idx = lookup_name(sm, name, trusted);
    if (idx == NAME_NONE) {
        sm->ovf_classes |= 1u << kclass;
        sm->step_flags |= ARGUS_SF_PARTIAL;
    } else if (sm->name_count[idx]++ == 0) {
        sm->touched[sm->n_touched++] = idx;
        sm->name_class[idx] = (uint8_t)kclass;
    }
    sm->ek[sm->n_ev] = (struct ev_key){argus_dkey(dur, ph), idx, (uint32_t)kclass};
    sm->es[sm->n_ev] = (struct ev_span){start_ns, end_ns};
    sm->n_ev++;
    s = start_ns > sm->begin ? start_ns : sm->begin;
    if (end_ns > s && sm->busy.sorted)
        busy_add(&sm->busy, s, end_ns);
}

void argus_summarizer_kernel(struct argus_summarizer *sm, const char *name, uint64_t start_ns,
                             uint64_t end_ns, uint32_t device, uint32_t stream, int kclass)
{
    (void)device, (void)stream;
    kernel_add(sm, name, start_ns, end_ns, kclass, 0);
}

void argus_summarizer_kernel_static(struct argus_summarizer *sm, const char *name,
                                    uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                    uint32_t stream, int kclass)
{
    (void)device, (void)stream;
    kernel_add(sm, name, start_ns, end_ns, kclass, 1);
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
    memset(&sm->busy, 0, sizeof sm->busy);
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
        sm->name_count[sm->touched[t]] = 0;
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

void argus_summarizer_add_flags(struct argus_summarizer *sm, uint32_t flags)
{
    if (sm && sm->in_step)
        sm->step_flags |= flags;
}
