/* smphase.c — the summariser's phase ranges (summarizer.h, argus_summarizer_phase_push /
 * _pop): the open ranges' stack, the wall time of the innermost open range inside a step,
 * and the step's phase timeline from which a kernel gets the phase of the innermost range
 * open at its start. Rules: summarizer.c's header. Works in the arrays preallocated by
 * argus_summarizer_create; must not allocate, block or log.
 */
#include "tracer/summarizer.h"

#include "tracer/sm_internal.h"

uint8_t argus_sm_cur_phase(const struct argus_summarizer *sm)
{
    return sm->depth ? sm->stack[sm->depth - 1] : (uint8_t)ARGUS_PH_OTHER;
}

/* Attribute wall time up to t to the innermost open range (inside a step only). */
void argus_sm_phase_advance(struct argus_summarizer *sm, uint64_t t)
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
    /* Kernels from the newest segment's start on get the current phase (what
     * argus_sm_phase_at answers there, full timeline or not). */
    argus_sm_flush_compute(sm);
    argus_sm_mask_phase(sm);
    sm->ph_cur = argus_sm_cur_phase(sm);
    if (t <= last->t) {
        /* Same instant (or out of order): the newest state wins from last->t on. */
        last->phase = argus_sm_cur_phase(sm);
        return;
    }
    if (sm->n_segs >= MAX_SEGS) {
        sm->segs_full = 1;
        sm->step_flags |= ARGUS_SF_PARTIAL;
        return;
    }
    sm->segs[sm->n_segs].t = t;
    sm->segs[sm->n_segs].phase = argus_sm_cur_phase(sm);
    sm->n_segs++;
    sm->ph_t = t;
}

/* Phase of a kernel starting at t: the segment with the largest start <= t (the first one
 * before it; the open state once the timeline is full). Kernels come mostly in time
 * order, so the segment of the last lookup (or the next one) usually answers. */
uint8_t argus_sm_phase_at(struct argus_summarizer *sm, uint64_t t)
{
    size_t lo = sm->seg_cur, hi = sm->n_segs;

    if (lo + 1 == hi && t >= sm->segs[lo].t) /* the newest segment: the common case */
        return sm->segs_full ? argus_sm_cur_phase(sm) : sm->segs[lo].phase;
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
        return argus_sm_cur_phase(sm);
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
    argus_sm_phase_advance(sm, t_ns);
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
    argus_sm_phase_advance(sm, t_ns);
    sm->depth--;
    phase_mark(sm, t_ns);
}
