/* sm_internal.h — internal to tracer/summarizer.c, smphase.c, stepsum.c, stepsplit.c and
 * modes.c: the summariser's state (all preallocated at create), the phase ranges, the
 * step-end builder and the fine-bin mode split with its per-kernel memo (modes.c).
 * Nothing else may include it.
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
#define CACHE_SET_BITS 12 /* the name pointer cache: 2^12 sets of CACHE_WAYS entries */
#define CACHE_WAYS 2
#define CACHE_SIZE ((1u << CACHE_SET_BITS) * CACHE_WAYS)

#define OTHER_NAME ARGUS_OTHER_KERNEL
#define SM_BLK 16 /* durations per pool block (a power of 2) */

/* ---- fine log bins and the per-kernel mode memo (modes.c) ---------------------------
 * A duration d falls in fine bin argus_fbin(d): the octave (binary exponent) of d + 1 and
 * the top ARGUS_FBIN_SUB bits of its mantissa, so bins are 1/128 octave wide at most
 * (<= 1.1 %, below the KDE's bandwidth floor) and monotone in d; bin 0 holds only 0. At step end
 * each kernel's durations go into a histogram of fine bins (O(n), no sort); the KDE runs
 * on that histogram, and its cuts (bin boundaries) are kept per kernel and reused while
 * later steps still fit them (argus_memo_fits). */
#define ARGUS_FBIN_SUB 7
#define ARGUS_FBIN_COUNT (62u << ARGUS_FBIN_SUB) /* durations < 2^62 */
/* Full KDE at least every ARGUS_MODES_REFRESH steps per kernel (staggered by name hash). */
#define ARGUS_MODES_REFRESH 32
/* A reused split accepts points up to this many bins (1/8 octave) outside each mode's
 * range when its KDE ran. */
#define ARGUS_MEMO_MARGIN 16

static inline uint32_t argus_fbin(uint64_t d)
{
    union { double x; uint64_t u; } b;
    b.x = (double)(int64_t)(d + 1); /* d < 2^62: exact below 2^53, monotone above */
    return (uint32_t)(b.u >> (52 - ARGUS_FBIN_SUB)) - (UINT32_C(1023) << ARGUS_FBIN_SUB);
}

/* The mode split of one kernel kept from its last full KDE, in fine bins: mode k is
 * [cut[k-1], cut[k]) (cut[-1] = 0, cut[m-1] = infinity); lo/hi: the bins its points
 * occupied then (a cut lies halfway between hi[k-1] and lo[k]); pk: its median bin; w:
 * the count window half-width (the KDE's bandwidth in bins). m = 0: none yet. */
struct argus_mode_memo {
    uint16_t cut[ARGUS_MODES_MAX - 1];
    uint16_t lo[ARGUS_MODES_MAX], hi[ARGUS_MODES_MAX], pk[ARGUS_MODES_MAX];
    uint16_t w;
    uint8_t m;
};

/* Scratch of argus_modes_kde_bins: ARGUS_FBIN_COUNT entries each. */
struct argus_bin_scratch {
    double *y;
    uint32_t *cum, *bin;
};

/* The KDE of argus_modes_kde over the points of hist[flo..fhi] (each bin's points at its
 * centre, log2): fills memo (m, cuts, ranges). n = the points in hist. */
void argus_modes_kde_bins(const uint32_t *hist, uint32_t flo, uint32_t fhi, size_t n,
                          const struct argus_bin_scratch *sc, struct argus_mode_memo *memo);
/* The points of mode k of a split in a histogram: the fine bins of its least and greatest
 * duration (hist is zero outside them but for other modes' points) and how many (0: none,
 * lo and hi then unused). */
struct argus_mode_span {
    uint32_t lo, hi;
    uint64_t count;
};

/* Whether hist[flo..fhi] (n points) still fits memo: every point within
 * ARGUS_MEMO_MARGIN bins of its mode's old range (else a new mode or a drift), every
 * mode with >= max(2, n / 100) points (else a mode vanished), no empty run wider than
 * max(2w, 8) bins inside a mode with >= max(5, n / 20) points on each side (else it
 * split), and around every cut the valley test of the KDE's narrow passes (points
 * within +-w of the cut, plus 3 Poisson sigmas and 1, below half of those within +-w of
 * the smaller neighbour's median bin; else the valley filled in). A split inside a mode
 * without an empty run waits for the next full KDE (ARGUS_MODES_REFRESH). sp[k] for
 * k < memo->m: each mode's span under memo's cuts (argus_memo_mode), so that only the
 * bins that can hold points are read. */
int argus_memo_fits(const struct argus_mode_memo *memo, const uint32_t *hist, uint32_t flo,
                    uint32_t fhi, size_t n, const struct argus_mode_span *sp);
/* Mode of fine bin f under memo. */
static inline unsigned argus_memo_mode(const struct argus_mode_memo *memo, uint32_t f)
{
    unsigned k = 0;
    while (k + 1 < memo->m && f >= memo->cut[k])
        k++;
    return k;
}

/* A name's stored kernels in the current step, the pool index of its next duration (in
 * its current, last block; a multiple of SM_BLK once that block is full, so the full
 * block is (pos - 1) / SM_BLK) and the latest end of its collective-class kernels in the
 * step (0: none; touched by collectives only): side by side, so that a kernel touches
 * one line for all three. */
struct name_step {
    uint32_t count, pos;
    uint64_t last_end;
};

struct name_slot {
    uint64_t hash;
    uint32_t idx1; /* name index + 1; 0 = empty */
};

/* Name pointer -> name index, valid only if the text still equals the kept copy; a
 * trusted entry was made for a name its caller declared immutable (the _static and
 * _named entry points), so that caller need not compare the text again. tidx: the index,
 * with CACHE_UNTRUSTED set unless trusted (one load and one sign test on the fast path);
 * an empty entry is a NULL pointer, untrusted. kc: in a trusted entry,
 * argus_kclass_from_name of the text at ptr (set when the entry becomes trusted; that
 * text never changes after), the class argus_summarizer_kernel_named uses; 0 otherwise. */
struct name_cache {
    const char *ptr;
    uint32_t tidx;
    uint8_t kc;
};
#define CACHE_UNTRUSTED (UINT32_C(1) << 31) /* name indices are below MAX_NAMES_LIMIT */
_Static_assert(MAX_NAMES_LIMIT <= CACHE_UNTRUSTED, "a name index must leave the flag bit");
_Static_assert(CACHE_WAYS == 2, "the fast path (summarizer.c) probes two ways");

/* From t on (until the next segment) kernels get this phase. */
struct phase_seg {
    uint64_t t;
    uint8_t phase;
};

/* One (kernel, mode) of the current step: its statistics, sketch and time per phase
 * (duration + 1 per kernel, so zero durations count). */
struct cand {
    uint64_t hash, sum, min, max;
    uint64_t last_end; /* collectives: the name's last end in the step (nst last_end) */
    uint32_t count;
    uint8_t mode, kclass, phase;
    uint64_t w[ARGUS_PH_COUNT];
    struct argus_qsketch sketch;
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

/* Union of the stored intervals clipped below at the step begin (es holds its closed
 * runs, summarizer.c kernel_span), kept while their
 * (clipped) starts arrive in order: sum of closed runs + the open run [cs, ce) (at first
 * the empty run at the step begin); ce is then the latest end seen (the part after the
 * step end is taken off at the end). gap, gap_end: the longest gap closed so far (the
 * earliest of equal ones; from the step begin to the first kernel included) and its end
 * (absolute; gap 0: none yet). */
struct busy_run {
    uint64_t sum, cs, ce;
    uint64_t gap, gap_end;
    int sorted;
};

struct argus_summarizer {
    struct argus_summarizer_opts o;
    struct argus_coords coords;

    /* Name table: open addressing on the hash, at most half full. */
    struct name_slot *slots;
    size_t slot_mask;
    size_t n_names;
    uint64_t *name_hash;  /* [max_names] */
    struct name_step *nst; /* [max_names] stored events of the name in the step, block,
                            * collectives' last end */
    uint32_t *name_first; /* [max_names] first pool block of the name in the step */
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
    /* Stored durations (argus_dkey) by name: blocks of SM_BLK from the pool, taken in
     * order; a name's blocks chained by blk_next, its count in nst. At most
     * max_events / SM_BLK + max_touched blocks are ever needed in a step. */
    uint64_t *pool;     /* [pool_blocks * SM_BLK] */
    uint32_t *blk_next; /* [pool_blocks] */
    size_t pool_blocks, blk_used;
    struct ev_key *ek;  /* [max_events] the stored events whose name did not fit */
    size_t n_ovf;
    size_t n_ev;        /* stored events */
    struct ev_span *es; /* [max_events + 2] the runs and intervals busy time needs
                         * (summarizer.c, kernel_span) */
    size_t n_es;
    size_t ev_cap;      /* in a step max_events, else 0 (the fast path's one check) */
    struct busy_run busy; /* running union of the stored intervals */
    uint64_t step_kernels, step_dropped; /* step_kernels: those not stored (no room) */
    uint64_t step_overhead_ns; /* CUPTI overhead records in this step */
    uint32_t step_flags;
    unsigned ovf_classes; /* classes of stored events whose name did not fit */
    uint64_t class_ns[ARGUS_KC_COUNT];
    /* Compute time per phase, but for the kernels that got ph_cur since it last changed:
     * the fast path adds only to class_ns, and those kernels' compute time is
     * class_ns[COMPUTE] - ph_compute_base (argus_sm_flush_compute moves it here when
     * ph_cur changes and at the step end; the others add to both). */
    uint64_t phase_compute[ARGUS_PH_COUNT];
    uint64_t ph_compute_base;
    uint64_t phase_wall[ARGUS_PH_COUNT];

    /* Phase ranges. */
    uint8_t stack[PHASE_DEPTH];
    unsigned depth;
    uint64_t ignored_pushes;
    uint64_t wall_t;
    struct phase_seg *segs; /* [MAX_SEGS] this step's timeline */
    size_t n_segs;
    size_t seg_cur; /* segment of the last lookup (kernels come mostly in time order) */
    uint64_t ph_t;  /* the newest segment's start: from it on kernels get ph_cur */
    uint8_t ph_cur;
    int segs_full;
    /* Bit p set when a stored duration key of this step may carry phase p: the slow
     * path's ph, and ph_cur's bit when it stops holding if events were stored while it
     * held (n_ev grew past ph_mask_n, n_ev when it began to hold); argus_sm_mask_phase
     * adds the holding one. One bit set means every key has that phase, and the step end
     * then takes the phase time from the sums (stepsplit.c, mode_pass). */
    unsigned ph_mask;
    size_t ph_mask_n;

    /* Scratch for step end. */
    struct argus_sort_pair *pa, *pb; /* [max_events] each */
    struct cand *cands;              /* [max_cands] */
    uint32_t *hist, *hicnt;          /* [ARGUS_FBIN_COUNT] one kernel's fine-bin histogram
                                      * and its points in the bin's upper sketch bucket;
                                      * all zero between kernels */
    /* Per fine bin, filled when first occupied (after the histogram pass that finds it:
     * stepsplit.c, hicnt_fix): the sketch bucket of its lowest durations (-1: zero) and
     * the first duration in the next bucket (UINT64_MAX: none; 0: not filled yet). A bin
     * is narrower than a sketch bucket, so it spans at most two. */
    int32_t *qlo;                    /* [ARGUS_FBIN_COUNT] */
    uint64_t *qthr;                  /* [ARGUS_FBIN_COUNT] */
    struct argus_bin_scratch bsc;
    struct argus_mode_memo *memo;    /* [max_names] each kernel's kept mode split */
    struct argus_sort_pair *ord;     /* [2 * max_cands] */
    size_t max_cands;
    struct argus_step_summary sum;

    uint64_t total_dropped, total_kernels; /* read from other threads: relaxed atomics */
};

/* Move the compute time of the kernels that got ph_cur since the last call into
 * phase_compute[ph_cur]: before ph_cur changes and before the step end reads it. */
static inline void argus_sm_flush_compute(struct argus_summarizer *sm)
{
    sm->phase_compute[sm->ph_cur] += sm->class_ns[ARGUS_KC_COMPUTE] - sm->ph_compute_base;
    sm->ph_compute_base = sm->class_ns[ARGUS_KC_COMPUTE];
}

/* ph_cur is about to change (or the step end reads the mask): its bit joins ph_mask if
 * events were stored while it held. */
static inline void argus_sm_mask_phase(struct argus_summarizer *sm)
{
    if (sm->n_ev != sm->ph_mask_n)
        sm->ph_mask |= 1u << sm->ph_cur;
    sm->ph_mask_n = sm->n_ev;
}

/* Phase ranges (smphase.c): the innermost open range's phase (OTHER when none); wall
 * time up to t to that range (inside a step only); the phase of a kernel starting at t in
 * the step's timeline (kernels come mostly in time order: starts at the last lookup). */
uint8_t argus_sm_cur_phase(const struct argus_summarizer *sm);
void argus_sm_phase_advance(struct argus_summarizer *sm, uint64_t t);
uint8_t argus_sm_phase_at(struct argus_summarizer *sm, uint64_t t);
/* Split each touched kernel's stored durations (by name in the pool) into (kernel, mode)
 * candidates in sm->cands; returns their number (stepsplit.c). */
size_t argus_sm_build_cands(struct argus_summarizer *sm, uint64_t step);
/* The phase with the most time in w (the first of equal ones; stepsplit.c). */
uint8_t argus_sm_phase_argmax(const uint64_t w[ARGUS_PH_COUNT]);
/* Build sm->sum for the open step ending at end (stepsum.c). */
void argus_sm_build_summary(struct argus_summarizer *sm, uint64_t step, uint64_t end);
/* Hand "[other]" to on_name the first time a fold record is made (summarizer.c). */
void argus_sm_emit_other_name(struct argus_summarizer *sm);

#endif /* ARGUS_TRACER_SM_INTERNAL_H */
