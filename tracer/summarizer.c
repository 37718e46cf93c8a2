/* summarizer.c — the per-rank step summariser of summarizer.h. One step's kernels go into
 * a preallocated event buffer; at step end the summary (phases, busy/host gap, class
 * totals, per-(kernel, mode) statistics) is built by stepsum.c and stepsplit.c with
 * preallocated scratch arrays and handed to on_summary; phase ranges are smphase.c's.
 * This file: create/free, name interning, events, step marks. Must not allocate after
 * create, must not block, must not log per event.
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
 *   pointer through the _static or _named entry; _named takes the class from the
 *   pointer's cache entry); the duration goes into its name's block of a
 *   preallocated pool and the busy-time union is kept as kernels come (while their starts
 *   are in order), so the step end sorts nothing: it splits each kernel's durations by a
 *   fine-bin histogram and the split kept from earlier steps (stepsplit.c, modes.c).
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

#include "common/kclass.h"
#include "tracer/sm_internal.h"

static void total_inc(uint64_t *v)
{
    __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

_Static_assert(((uint64_t)MAX_EVENTS_LIMIT / SM_BLK + MAX_NAMES_LIMIT + 1) * SM_BLK <= UINT32_MAX,
               "a pool index must fit name_step's pos");

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
    sm->name_text = calloc(o->max_names, sizeof *sm->name_text);
    sm->arena_cap = o->max_names * ARENA_PER_NAME;
    sm->arena = malloc(sm->arena_cap);
    sm->cache = aligned_alloc(64, CACHE_SIZE * sizeof *sm->cache); /* a set in one line */
    if (sm->cache)
        for (size_t i = 0; i < CACHE_SIZE; i++)
            sm->cache[i] = (struct name_cache){NULL, CACHE_UNTRUSTED, 0};
    sm->touched = calloc(sm->max_touched, sizeof *sm->touched);
    sm->ek = calloc(o->max_events, sizeof *sm->ek);
    sm->es = calloc(o->max_events + 2, sizeof *sm->es);
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

/* The pointer cache's set of a name pointer: CACHE_WAYS entries side by side (one cache
 * line), so that names whose pointers hash alike do not evict each other. */
static inline __attribute__((always_inline)) struct name_cache *
cache_set(const struct argus_summarizer *sm, const char *name)
{
    uint64_t p = (uint64_t)(uintptr_t)name * UINT64_C(0x9e3779b97f4a7c15);
    return &sm->cache[(p >> (64 - CACHE_SET_BITS)) * CACHE_WAYS];
}

/* lookup_name's miss path: hash (a long name truncated first), intern, cache (in way w of
 * the set when the pointer is there already, else in way 0, the others moving down). */
static __attribute__((noinline)) uint32_t lookup_miss(struct argus_summarizer *sm,
                                                      struct name_cache *set, int w,
                                                      const char *name, int trusted)
{
    uint32_t idx;

    if (strnlen(name, ARGUS_NAME_MAX + 1) > ARGUS_NAME_MAX) {
        memcpy(sm->keybuf, name, ARGUS_NAME_MAX);
        sm->keybuf[ARGUS_NAME_MAX] = '\0';
        name = sm->keybuf; /* never cached: its text differs from the caller's */
    }
    idx = intern(sm, name, argus_name_hash(name));
    if (idx != NAME_NONE && sm->name_text[idx]) {
        if (w < 0) {
            memmove(set + 1, set, (CACHE_WAYS - 1) * sizeof *set);
            w = 0;
        }
        set[w] = (struct name_cache){name, idx | (trusted ? 0 : CACHE_UNTRUSTED),
                                     (uint8_t)(trusted ? argus_kclass_from_name(name) : 0)};
    }
    return idx;
}

/* Index (or NAME_NONE) of a name; the pointer cache avoids re-hashing. trusted: the
 * caller promises the text at name never changes (then a trusted entry is used without
 * comparing the text, and a matching entry becomes trusted). */
static inline __attribute__((always_inline)) uint32_t
lookup_name(struct argus_summarizer *sm, const char *name, int trusted)
{
    struct name_cache *set = cache_set(sm, name);

    for (int w = 0; w < CACHE_WAYS; w++) {
        struct name_cache *c = &set[w];
        uint32_t idx = c->tidx & ~CACHE_UNTRUSTED;
        if (c->ptr != name)
            continue;
        if (trusted && !(c->tidx & CACHE_UNTRUSTED))
            return idx;
        if (strcmp(name, sm->arena + sm->name_text[idx] - 1) == 0) {
            if (trusted) { /* the text is fixed from now on: its class too */
                c->tidx = idx;
                c->kc = (uint8_t)argus_kclass_from_name(name);
            }
            return idx;
        }
        return lookup_miss(sm, set, w, name, trusted);
    }
    return lookup_miss(sm, set, -1, name, trusted);
}

/* ---- events ------------------------------------------------------------------------ */

/* A new block for name idx, which has c stored kernels (a multiple of SM_BLK): its first
 * pool index. Blocks come from the step's pool in order; a name's blocks are chained. */
static uint32_t new_block(struct argus_summarizer *sm, uint32_t idx, uint32_t c, int kclass)
{
    uint32_t b = sm->blk_used++;

    if (c == 0) {
        sm->touched[sm->n_touched++] = idx;
        sm->name_class[idx] = (uint8_t)kclass;
        sm->name_first[idx] = b;
        sm->nst[idx].last_end = 0;
    } else {
        sm->blk_next[(sm->nst[idx].pos - 1) / SM_BLK] = b;
    }
    return b * SM_BLK;
}

/* The time totals of a kernel in the step (stored or not) off the fast path: a compute
 * kernel's time goes to its phase at once, and past ph_compute_base so that
 * argus_sm_flush_compute does not count it again for ph_cur. */
static void kernel_totals(struct argus_summarizer *sm, uint64_t dur, int kclass, uint8_t ph)
{
    sm->class_ns[kclass] += dur;
    if (kclass == ARGUS_KC_COMPUTE) {
        sm->phase_compute[ph] += dur;
        sm->ph_compute_base += dur;
    }
}

/* A kernel's interval into the running union of the intervals clipped to the step begin,
 * kept while their starts come in order (cs: the open run's start, at the step begin at
 * first), with its longest gap. What busy time needs at the step end goes into es: while
 * the starts are in order only each run as it closes (back-to-back kernels store nothing);
 * at the first start before the open run, the open run, and from then on every interval
 * (the step end then takes the union of es). The union of es and the open run is always
 * the union of the intervals, so busy and idle time come out as if every interval had
 * been kept. Once the starts are out of order only es counts (the step end reads the run
 * only while sorted), and cs is then UINT64_MAX, so that the common case (a start inside
 * or at the end of the open run) is one test. */
static inline __attribute__((always_inline)) void
kernel_span(struct argus_summarizer *sm, uint64_t start_ns, uint64_t end_ns)
{
    uint64_t s = start_ns > sm->begin ? start_ns : sm->begin;
    struct busy_run *r = &sm->busy;

    if (end_ns <= s)
        return;
    if (__builtin_expect(s >= r->cs && s <= r->ce, 1)) {
        r->ce = end_ns > r->ce ? end_ns : r->ce;
        return;
    }
    if (!r->sorted) {
        sm->es[sm->n_es++] = (struct ev_span){s, end_ns};
        return;
    }
    sm->es[sm->n_es++] = (struct ev_span){r->cs, r->ce}; /* the open run closes */
    if (s > r->ce) {
        r->sum += r->ce - r->cs;
        if (s - r->ce > r->gap) {
            r->gap = s - r->ce;
            r->gap_end = s;
        }
        r->cs = s;
        r->ce = end_ns;
    } else { /* s < cs: from now on every interval */
        r->sorted = 0;
        r->cs = UINT64_MAX;
        sm->es[sm->n_es++] = (struct ev_span){s, end_ns};
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
    ph = start_ns >= sm->ph_t ? sm->ph_cur : argus_sm_phase_at(sm, start_ns);
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
    sm->ph_mask |= 1u << ph;
    if (idx != NAME_NONE) {
        uint32_t c = sm->nst[idx].count++, p = sm->nst[idx].pos;
        if ((c & (SM_BLK - 1)) == 0)
            p = new_block(sm, idx, c, kclass);
        sm->pool[p] = key;
        sm->nst[idx].pos = p + 1;
        if (kclass == ARGUS_KC_COLLECTIVE && end_ns > sm->nst[idx].last_end)
            sm->nst[idx].last_end = end_ns;
    } else {
        sm->ovf_classes |= 1u << kclass;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        sm->ek[sm->n_ovf++] = (struct ev_key){key, NAME_NONE, (uint32_t)kclass};
    }
    sm->n_ev++;
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
 * anything changes: the class used (named: the cache entry's, that of the name), or -1
 * when the case is not the common one and nothing changed (the caller then hands it
 * whole to kernel_add). The fast path calls nothing, so it saves no registers. */
_Static_assert(ARGUS_PH_COUNT <= 1u << ARGUS_DKEY_SHIFT, "a phase must fit a key's phase bits");

static inline __attribute__((always_inline)) int
kernel_fast(struct argus_summarizer *sm, const char *name, uint64_t start_ns, uint64_t end_ns,
            int kclass, int named)
{
    /* ev_cap: 0 outside a step; a NULL name never hits the cache (an empty entry's NULL
     * pointer is not trusted; kernel_add caches "[unnamed]" for it) */
    if (!sm || (!named && (unsigned)kclass >= ARGUS_KC_COUNT) || sm->n_ev >= sm->ev_cap ||
        start_ns < sm->ph_t)
        return -1;
    const struct name_cache *c = cache_set(sm, name);
    if (c->ptr != name && (++c)->ptr != name)
        return -1;
    uint32_t tidx = c->tidx;
    if (tidx & CACHE_UNTRUSTED)
        return -1;
    struct name_step *ns = &sm->nst[tidx];
    uint32_t n = ns->count;
    if (n == 0) /* the name's first kernel in the step */
        return -1;
    uint64_t dur = end_ns - start_ns;
    if (dur > ARGUS_DKEY_MAX_NS) /* an end before the start (wrapped), or too long a key */
        return -1;
    if (named) /* a trusted entry's class is its text's (sm_internal.h, name_cache) */
        kclass = c->kc;
    total_inc(&sm->total_kernels);
    /* the phase's compute time is class_ns[COMPUTE]'s growth while ph_cur holds
     * (argus_sm_flush_compute); without a branch on the class, which is data */
    sm->class_ns[kclass] += dur;
    /* the collectives' running last end, also without a branch on the class (here, so
     * that the class is no longer live below) */
    uint64_t lv = ns->last_end;
    ns->last_end = kclass == ARGUS_KC_COLLECTIVE && end_ns > lv ? end_ns : lv;
    uint32_t pos = ns->pos;
    if (pos % SM_BLK == 0) { /* new_block's chaining case (n > 0: the block is full) */
        uint32_t b = (uint32_t)sm->blk_used++;
        sm->blk_next[(pos - 1) / SM_BLK] = b;
        pos = b * SM_BLK;
    }
    ns->count = n + 1;
    ns->pos = pos + 1;
    /* argus_dkey without its clamp and mask: dur <= ARGUS_DKEY_MAX_NS was checked and
     * ph_cur < ARGUS_PH_COUNT fits the phase bits */
    sm->pool[pos] = dur << ARGUS_DKEY_SHIFT | sm->ph_cur;
    sm->n_ev++;
    /* kernel_span's common case without its clip: start_ns >= ph_t >= the step begin
     * here (ph_t only moves forward from it); a zero duration needs no test of its own:
     * inside the open run it changes nothing (end_ns = start_ns <= ce), outside it
     * kernel_span drops it */
    struct busy_run *r = &sm->busy;
    if (__builtin_expect(start_ns >= r->cs && start_ns <= r->ce, 1))
        r->ce = end_ns > r->ce ? end_ns : r->ce;
    else
        kernel_span(sm, start_ns, end_ns);
    return kclass;
}

void argus_summarizer_kernel_static(struct argus_summarizer *sm, const char *name,
                                    uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                    uint32_t stream, int kclass)
{
    (void)device, (void)stream;
    if (kernel_fast(sm, name, start_ns, end_ns, kclass, 0) < 0)
        kernel_add_static(sm, name, start_ns, end_ns, kclass);
}

/* The class of a trusted name (argus_kclass_from_name of its text): its trusted cache
 * entry's when it has one, else derived from the text. */
static int named_class(const struct argus_summarizer *sm, const char *name)
{
    if (sm && name) {
        const struct name_cache *c = cache_set(sm, name);
        for (int w = 0; w < CACHE_WAYS; w++)
            if (c[w].ptr == name && !(c[w].tidx & CACHE_UNTRUSTED))
                return c[w].kc;
    }
    return argus_kclass_from_name(name);
}

/* argus_summarizer_kernel_named's way out, as kernel_add_static's. */
static __attribute__((noinline)) int kernel_add_named(struct argus_summarizer *sm,
                                                      const char *name, uint64_t start_ns,
                                                      uint64_t end_ns)
{
    int kclass = named_class(sm, name);
    kernel_add(sm, name, start_ns, end_ns, kclass, 1);
    return kclass;
}

int argus_summarizer_kernel_named(struct argus_summarizer *sm, const char *name,
                                  uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                  uint32_t stream)
{
    (void)device, (void)stream;
    int kclass = kernel_fast(sm, name, start_ns, end_ns, 0, 1);
    return kclass >= 0 ? kclass : kernel_add_named(sm, name, start_ns, end_ns);
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
    sm->ev_cap = sm->o.max_events;
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
    sm->ph_compute_base = 0;
    memset(sm->phase_wall, 0, sizeof sm->phase_wall);
    sm->wall_t = t_ns;
    sm->segs[0].t = t_ns;
    sm->segs[0].phase = argus_sm_cur_phase(sm);
    sm->n_segs = 1;
    sm->seg_cur = 0;
    sm->segs_full = 0;
    sm->ph_t = t_ns;
    sm->ph_cur = argus_sm_cur_phase(sm);
    sm->ph_mask = 0;
    sm->ph_mask_n = 0;
    sm->n_ovf = 0;
    sm->n_es = 0;
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
    argus_sm_phase_advance(sm, t_ns);
    argus_sm_mask_phase(sm);
    argus_sm_build_summary(sm, step, t_ns);
    for (size_t t = 0; t < sm->n_touched; t++)
        sm->nst[sm->touched[t]].count = 0;
    sm->n_touched = 0;
    sm->n_ev = 0;
    sm->in_step = 0;
    sm->ev_cap = 0;
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
