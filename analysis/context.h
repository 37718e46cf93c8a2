/* context.h — the analysis context: a dense view of a job store (distinct step ids, a
 * slot x step table of summaries and of the values the detectors read most, resolved
 * layout and peer classes, the kernel-name table, the job step-time series), the
 * candidates built on it, and the W1 matrix of a comm_degradation anomaly. Public so
 * that a writer can draw the diagnosis' own view (report/svg.c: rank grids, peer-class
 * medians, W1 matrices): outside analysis/ a context is built, read (its scratch tmp1..3
 * may be used) and freed, never changed. What only the detectors share is
 * analysis/internal.h. One context per store at a time (its tables live in the store's
 * scratch), on the thread that owns the store.
 *
 * Rank ids are sparse keys, not array sizes: every per-rank table is indexed by a dense
 * slot over the ranks the store knows something of (rank_of[slot], ascending), so that
 * memory follows the ranks present, not the largest rank id. When the ids are dense (the
 * store's rank count at most twice the ranks present) every id below the store's
 * count gets a slot and slot == rank. Inside the context and its candidates a "rank" is a
 * slot; argus_analyze maps slots to rank ids in what it returns (struct argus_result), so
 * a reader holding a result's rank id finds its slot with an_slot_of.
 */
#ifndef ARGUS_ANALYSIS_CONTEXT_H
#define ARGUS_ANALYSIS_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "store/jobstore.h"

#define AN_W1_MAX_REPS 64 /* W1 matrix: at most this many ranks */

/* Job-wide kernel names seen in the summaries. */
struct an_names {
    size_t n, cap;     /* entries; cap = slots of the hash index (power of two) */
    uint64_t *hash;    /* [n] */
    uint8_t *kclass;   /* [n] enum argus_kclass of the first record seen */
    double *total_ns;  /* [n] */
    uint32_t *slot;    /* [cap] entry index + 1, 0 = empty */
};

/* One anomaly under construction. */
struct an_cand {
    struct argus_anomaly a;
    size_t si_a, si_b;  /* step-index window, inclusive */
    double excess_ns;   /* typical per-step excess of the sources (victim threshold) */
    uint32_t n_peers;   /* peers compared with (evidence) */
    int late;           /* host_stall found by the late-arriver test (evidence, victims set) */
    int dropped;
};

struct an_list {
    struct an_cand *v;
    size_t n, cap;
};

/* The context (an_ctx_build). */
struct an_ctx {
    const struct argus_jobstore *js;
    struct argus_analysis_opts o;
    uint32_t n;                         /* slots: ranks in the view */
    uint32_t *rank_of;                  /* [n] rank id of each slot, ascending */
    int dense;                          /* rank_of[s] == s for every slot */
    size_t S;                           /* distinct steps held */
    uint64_t *step_id;                  /* [S] ascending */
    const struct argus_step_summary **cell; /* [r * S + si], NULL when not held/missing */
    /* The per-cell values the detectors read most, from the store's rows (struct
     * argus_jobstore_row) so that their loops stream through arrays instead of touching
     * the summaries: [r * S + si], NAN where the cell is NULL. vwall = an_wall, vcomp =
     * compute_ns, vhost = host_gap_ns (else phase_wall_ns[HOST]), vstart = start_ns +
     * clock_offset_ns, vcomm = collective_ns + p2p_ns. These tables, cell, cflag and kd live
     * in the store's scratch (argus_jobstore_scratch), not in the context. */
    double *vwall, *vcomp, *vhost, *vstart, *vcomm;
    size_t held;                        /* cells held */
    uint64_t kernels_seen, dropped;     /* sums of kernel_count, dropped over them */
    unsigned cupti_why;                 /* the first held cell's ARGUS_SF_CUPTI_WHY when it
                                           has ARGUS_SF_NO_CUPTI; 0: none has */
    uint8_t *co_have;                   /* [n] co[r] came from r's summaries (build only) */
    uint8_t *kmr;                       /* [n] r has a summary with kernel modes (not thin) */
    struct argus_coords *co;            /* [n] resolved coordinates */
    struct argus_layout lay;
    int layout_known;
    uint32_t *cls;                      /* [n] peer class (PP stage) */
    uint32_t n_cls;
    int speed_classes;                  /* the classes split ranks by speed (speed.c) */
    uint32_t *cls_off, *cls_mem;        /* CSR: members of class c */
    /* Without a layout: groups from communicator membership (groups.c), per role
     * (0 = DP, 1 = TP): mgrp[role][r] = r's group (UINT32_MAX: none), NULL when no family
     * fits the role; mgrp_n groups, the largest of mgrp_max members. */
    uint32_t *mgrp[2];
    uint32_t mgrp_n[2], mgrp_max[2];
    int mgrp_inferred;                  /* mgrp[0] inferred from collective end times
                                           (groups_infer.c), not from membership */
    double *cwall;                      /* [c * S + si] median step wall of the members of
                                           class c held at si; 0 when none */
    double *ccomp;                      /* [c * S + si] median compute of the members of
                                           class c held at si, NAN when none; set
                                           (ccomp_set) by an_detect_compute */
    int ccomp_set;
    /* Scratch of an_class_gather (gather.c): gat_steps columns of gat_cap doubles (at
     * least the largest class) and their counts; allocated once with cwall. */
    double *gat;
    size_t *gat_n;
    size_t gat_cap, gat_steps;
    double *X;                          /* [S] job step time ns (max over ranks), NAN */
    double med_step;                    /* median of X, ns */
    int kmodes_sorted;                  /* every summary's kmodes sorted by hash */
    int thin_held;                      /* some held cell is thin (a condensing tree) */
    struct an_names names;
    uint8_t *cflag;                     /* [n * S] rank-step compute flagged (l2) */
    uint8_t *kd;                        /* [n * S] the cell is held and not thin (an_kcell),
                                           from the rows: no summary is touched to know */
    /* Data levels (levels.c): lv[r * S + si] the enum argus_data_level of each held cell
     * (0 when not held); level the job's: the lowest of the ranks' usual levels. Below
     * the kernel level vcomp is NAN, and vhost is the step's time outside every marked
     * phase at the phase level (NAN at the steps level). */
    uint8_t *lv;
    int level;
    struct an_list cand;
    double *tmp1, *tmp2, *tmp3;         /* scratch, tmp_cap each */
    size_t tmp_cap;
};

/* ctx.c */
/* Build the context of js (0, -ENOENT when it holds nothing, -ENOMEM). Its rank x step
 * tables live in the store's scratch: one context per store at a time. */
int an_ctx_build(struct an_ctx *c, const struct argus_jobstore *js,
                 const struct argus_analysis_opts *o);
/* Free what the context owns, also after a failed an_ctx_build; c is zeroed. */
void an_ctx_free(struct an_ctx *c);
/* The slot of rank id `rank`; -1 when the context has none for it. */
static inline long an_slot_of(const struct an_ctx *c, uint32_t rank)
{
    if (c->dense)
        return rank < c->n ? (long)rank : -1;
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (c->rank_of[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->rank_of[lo] == rank ? (long)lo : -1;
}
/* The rank ids of an anomaly (sources, victims, group) as slots, in place; ids without a
 * slot are left out (a result read against a context built from the same store has
 * none). */
void an_anomaly_to_slots(const struct an_ctx *c, struct argus_anomaly *a);
/* The summary of slot r at step index si; NULL when not held or cut off as missing. */
static inline const struct argus_step_summary *an_cell(const struct an_ctx *c, uint32_t r,
                                                       size_t si)
{
    return c->cell[(size_t)r * c->S + si];
}
/* The cell for kernel-level reads (kmodes, kernel sets and counts, phase_compute_ns,
 * memcpy_ns, last ends): NULL also when the cell is thin (ARGUS_SF_THIN: a condensed
 * reduction sent its row values only), so that peer references come only from cells with
 * kernel detail and a thin cell never counts as zero kernel time. Row values (the v*
 * tables, step and phase walls, compute, host gap, communication) use an_cell. */
static inline const struct argus_step_summary *an_kcell(const struct an_ctx *c, uint32_t r,
                                                        size_t si)
{
    const size_t at = (size_t)r * c->S + si;
    return c->kd[at] ? c->cell[at] : NULL;
}
/* The step wall of s in ns (0 when its end is not after its start). */
static inline double an_wall(const struct argus_step_summary *s)
{
    return s->end_ns > s->start_ns ? (double)(s->end_ns - s->start_ns) : 0.0;
}

/* w1.c */
/* Mean off-diagonal W1 of an n x n matrix M inside the members flagged in[] (intra) and
 * between members and non-members (inter); NAN when there is no such pair. */
void an_w1_blocks(const double *M, size_t n, const uint8_t *in, double *intra, double *inter);
/* Ranks (slots, as an's: a result's anomaly goes through an_anomaly_to_slots first) to
 * show in the W1 matrix of a comm_degradation anomaly: the members of its group
 * and of the other groups of the same type (same PP stage first), at most AN_W1_MAX_REPS,
 * members first; in[i] = 1 for members. Fills M (n x n, row-major, n <= AN_W1_MAX_REPS)
 * with the W1 distances between the ranks' per-step typical call durations of kernel
 * `hash` over the step indices [a,b]. Without a layout the groups are those of
 * communicator membership (groups.c) and the stage is the peer class. Returns n (0 when
 * no groups are known). */
size_t an_w1_matrix(struct an_ctx *c, const struct argus_anomaly *an, uint64_t hash, size_t a,
                    size_t b, uint32_t *reps, uint8_t *in, double *M);

#endif /* ARGUS_ANALYSIS_CONTEXT_H */
