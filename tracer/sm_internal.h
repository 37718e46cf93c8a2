/* sm_internal.h — internal to tracer/summarizer.c and tracer/stepsum.c: the summariser's
 * state (all preallocated at create) and the step-end builder. Nothing else may include it.
 */
#ifndef ARGUS_TRACER_SM_INTERNAL_H
#define ARGUS_TRACER_SM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"
#include "tracer/modes.h"
#include "tracer/summarizer.h"

#define PHASE_DEPTH 16
#define MAX_SEGS 4096
#define NAME_NONE UINT32_MAX
#define MAX_NAMES_LIMIT (UINT32_C(1) << 24)
#define MAX_EVENTS_LIMIT (UINT32_C(1) << 30)
#define ARENA_PER_NAME 96 /* average bytes of name text kept per table entry */
#define CACHE_BITS 13
#define CACHE_SIZE (1u << CACHE_BITS)

#define OTHER_NAME "[other]"

struct name_slot {
    uint64_t hash;
    uint32_t idx1; /* name index + 1; 0 = empty */
};

/* Name pointer -> name index, valid only if the text still equals the kept copy; a
 * trusted entry was made for a name its caller declared immutable (the _static entry
 * point), so that caller need not compare the text again. */
struct name_cache {
    const char *ptr;
    uint32_t idx;
    uint32_t trusted;
};

/* From t on (until the next segment) kernels get this phase. */
struct phase_seg {
    uint64_t t;
    uint8_t phase;
};

/* One (kernel, mode) of the current step; sorted duration keys: pb[lo, lo+count) */
struct cand {
    uint64_t hash, sum, min, max;
    uint32_t lo, count;
    uint8_t mode, kclass, phase;
};

/* A stored event's duration key (argus_dkey: duration and phase), name index (NAME_NONE
 * when the table was full) and class. */
struct ev_key {
    uint64_t key;
    uint32_t idx;
    uint32_t kclass;
};

struct ev_span {
    uint64_t start, end;
};

/* Union of the stored intervals clipped below at the step begin, kept while their
 * (clipped) starts arrive in order: sum of closed runs + the open run [cs, ce). max_end:
 * the latest end seen (the part after the step end is taken off at the end). */
struct busy_run {
    uint64_t sum, cs, ce, max_end;
    int any, sorted;
};

struct argus_summarizer {
    struct argus_summarizer_opts o;
    struct argus_coords coords;
    int64_t clock_offset;

    /* Name table: open addressing on the hash, at most half full. */
    struct name_slot *slots;
    size_t slot_mask;
    size_t n_names;
    uint64_t *name_hash;  /* [max_names] */
    uint32_t *name_count; /* [max_names] events of this name in the step */
    uint32_t *name_off;   /* [max_names] group offsets while building */
    uint8_t *name_class;  /* [max_names] class of the name's first event in the step */
    uint32_t *name_text;  /* [max_names] offset + 1 of the kept copy in arena, 0 = none */
    char *arena;          /* [arena_cap] kept name copies, NUL-terminated */
    size_t arena_cap, arena_used;
    struct name_cache *cache; /* [CACHE_SIZE] */
    uint32_t *touched;    /* names seen in this step, in first-seen order */
    size_t n_touched, max_touched;
    int other_named;
    char namebuf[ARGUS_NAME_MAX + 1]; /* what on_name gets */
    char keybuf[ARGUS_NAME_MAX + 1];  /* a long name, truncated before hashing */

    /* Current step: stored events, in arrival order. */
    int in_step, have_last;
    uint64_t step, last_step, begin;
    struct ev_key *ek;  /* [max_events] duration key, name index, class */
    struct ev_span *es; /* [max_events] start/end, for busy time */
    size_t n_ev;
    struct busy_run busy; /* running union of the stored intervals */
    uint64_t step_kernels, step_dropped;
    uint32_t step_flags;
    unsigned ovf_classes; /* classes of stored events whose name did not fit */
    uint64_t class_ns[ARGUS_KC_COUNT];
    uint64_t phase_compute[ARGUS_PH_COUNT];
    uint64_t phase_wall[ARGUS_PH_COUNT];

    /* Phase ranges. */
    uint8_t stack[PHASE_DEPTH];
    unsigned depth;
    uint64_t ignored_pushes;
    uint64_t wall_t;
    struct phase_seg *segs; /* [MAX_SEGS] this step's timeline */
    size_t n_segs;
    size_t seg_cur; /* segment of the last lookup (kernels come mostly in time order) */
    int segs_full;

    /* Scratch for step end. */
    struct argus_sort_pair *pa, *pb; /* [max_events] each */
    double *ylog;                    /* [max_events] log durations for the KDE */
    struct cand *cands;              /* [max_cands] */
    struct argus_sort_pair *ord;     /* [2 * max_cands] */
    size_t max_cands;
    struct argus_step_summary sum;

    uint64_t total_dropped, total_kernels; /* read from other threads: relaxed atomics */
};

/* Build sm->sum for the open step ending at end (stepsum.c). */
void argus_sm_build_summary(struct argus_summarizer *sm, uint64_t step, uint64_t end);
/* Hand "[other]" to on_name the first time a fold record is made (summarizer.c). */
void argus_sm_emit_other_name(struct argus_summarizer *sm);

#endif /* ARGUS_TRACER_SM_INTERNAL_H */
