/* internal.h — what the files of analysis/ share and nobody else sees: the fixed
 * thresholds, per-rank runs of flagged steps, and the entry points of the detectors (l1.c,
 * l2.c, l2host.c, l3.c, l3comm.c, peers.c), of the groups (groups.c, groups_infer.c) and of the
 * explanations (explain.c). The context they all work on is analysis/context.h, the words
 * of their sentences analysis/labels.h. Everything hangs off one struct an_ctx owned by
 * argus_analyze(); no globals.
 */
#ifndef ARGUS_ANALYSIS_INTERNAL_H
#define ARGUS_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/context.h"
#include "analysis/labels.h"
#include "analysis/stats.h"
#include "store/jobstore.h"

/* Fixed thresholds that are not options (see the detector files for their use). */
#define AN_MAX_GAP 2             /* unflagged steps bridged inside one run */
#define AN_REGRESSION_EFFECT 0.05 /* change point: |medL - medR| / max >= 5% */
#define AN_REGRESSION_MIN_SEG 5  /* change point: both segments at least this long */
#define AN_JITTER_HALF_WINDOW 32 /* jitter baseline: +-32 steps inside one segment */
#define AN_JITTER_FLOOR 0.005    /* jitter: floor of the log step time's scale (~0.5%) */
#define AN_LONE_SPIKE_Z 1.0      /* jitter: extra robust z for one isolated flagged step */
#define AN_PEER_FLOOR 0.02       /* peer z: scale floor, fraction of the reference */
#define AN_KERNEL_SHARE 0.7      /* kernel_degradation: share of the excess in one name */
#define AN_KERNEL_MATERIAL 0.015 /* kernel flag: excess >= 1.5% of the class compute */
#define AN_HOST_MATERIAL 0.01    /* host flag: excess >= 1% of the class's step wall */
#define AN_COMM_MATERIAL 0.01    /* comm flag: excess >= 1% of the job's median step */
#define AN_STAGE_COVER 0.75      /* flagged share of a stage that makes it a bubble */
#define AN_W1_Q 64               /* W1: quantile grid points */
#define AN_W1_BLOCK 3.0          /* comm group: W1 across groups >= 3x W1 inside it */
#define AN_COMPUTE_MATERIAL 0.01 /* compute flag: excess >= 1% of the class's step wall */
#define AN_KERNEL_WALL 0.005     /* kernel flag: excess >= 0.5% of the class's step wall */
#define AN_SAME_WORK 0.05        /* call counts within 5% of the peers': same work */
#define AN_LATE_MATERIAL 0.05    /* late arriver: >= 5% of the step wall after the peers */
#define AN_LEVEL_STEP_Z 2.0      /* below the kernel level: a step's z gate */
#define AN_LEVEL_RUN_Z 0.8       /* ... and a run a shift of >= this x z standard errors */
#define AN_LEVEL_RANK_Z 2.5      /* ... and its steps rank above the rest by this z, */
#define AN_LEVEL_RANK_SHARE 0.75 /*     the shift then needing 3/4 of that many errors */
#define AN_LEVEL_GAP 5           /* ... runs this few steps apart are one (noisy steps) */
#define AN_LEVEL_PEELS 64        /* ... a cluster peeled this many times at most */
#define AN_LEVEL_SPLITS 4        /* ... and split this deep around its episodes */
#define AN_LEVEL_EDGE 0.4        /* ... and it grows over steps above 1 + 0.4 x its excess */
#define AN_CHRONIC_MIN 0.04      /* persistent_imbalance: own level >= 4% over the class's */
#define AN_CHRONIC_SCALE 0.006   /* persistent_imbalance: floor of the class's level spread */
/* AN_W1_MAX_REPS, the bound of the W1 matrix, is in analysis/context.h. */

/* A run of flagged steps (an_runs). */
struct an_span {
    size_t a, b;     /* inclusive step indices */
    uint32_t nflag;  /* flagged steps inside */
};

/* A per-rank run of flagged steps (l2.c, l3.c). */
struct an_rrun {
    uint32_t rank;
    size_t a, b, det;          /* window and the step index where evidence sufficed */
    double ratio, z, excess;   /* medians over the flagged steps */
    int kind;
    uint32_t nk;
    uint64_t kern[ARGUS_ANOMALY_MAX_KERNELS];
    int grp;
};

/* A growing array of runs (an_rruns_push). */
struct an_rruns {
    struct an_rrun *v;
    size_t n, cap;
};

/* A rank's own level against its peers (own.c). */
struct an_own {
    double base;   /* what its episodes are judged against: its own past level, >= 1 */
    double level;  /* its persistent level (NAN when too few steps) */
    double steady; /* share of its steps above the midpoint between 1 and level */
    size_t n;      /* steps judged */
};

/* placement.c */
/* r->placement from the rank infos of js, its findings tied to r's host_stall sources
 * (r->ranks flags, so after the anomalies are final). 0 (NULL when no rank said where it
 * runs) or -ENOMEM. */
int an_placement(const struct argus_jobstore *js, struct argus_result *r);

/* own.c */
/* The own level of a rank from its per-step ratios to its peers q[0..S) (entries <= 0 or
 * not finite are not judged): base = the lowest of its lower quartile, the median of its
 * first quarter (when that has >= 8 steps) and the median of its lower first segment
 * (when a split into a first part and the rest rises by a clear step), at least 1;
 * level = the lowest of its median, those two and its last quarter's median (docs/
 * ALGORITHMS.md, "Own baseline and persistent imbalance"). buf holds S doubles. */
void an_own_level(const double *q, size_t S, double *buf, struct an_own *out);
/* Whether the held steps reach back to the job's first: a rank's own past and "slower
 * all along" need it. Once the store evicted steps (a bounded horizon, live), a slowdown
 * that fills the held steps may have begun after the job did: then episodes are judged
 * against the peers only and no persistent_imbalance is found (an earlier analysis that
 * held the first steps found it, and the report carries it). */
int an_own_past(const struct an_ctx *c);
/* persistent_imbalance candidates: per peer class, the ranks whose own level is at least
 * AN_CHRONIC_MIN over its class's median level, steady, a robust z >= opts.z over the class's levels, and whose
 * cost (median excess over the job's median step) is material. One per rank: a rank
 * already found by another table keeps the stronger. Needs c->tmp2/tmp3 of c->n. */
int an_persistent(struct an_ctx *c, const struct an_own *own, const double *cost, int phase,
                  int data_level);

/* levels.c */
/* enum argus_data_level of one held cell: kernels when it counted kernels or GPU time (a
 * thin cell too), else phases when a phase is marked, else steps. */
int an_cell_level(uint64_t kernel_count, const struct argus_step_summary *s);
/* The step's time outside every marked phase (forward, backward, optimizer, other). */
double an_unphased_ns(const struct argus_step_summary *s);
/* c->level from c->lv: the lowest of the ranks' most common levels (0 when none). */
void an_levels_finish(struct an_ctx *c);

/* speed.c */
/* Without a layout, one peer class split by speed (compute with kernels, else step time):
 * groups of ranks whose usual times are AN_SPEED_GAP apart are not each other's peers.
 * Before the classes' CSR. 0 or -ENOMEM. */
int an_speed_classes(struct an_ctx *c);

/* groups.c */
/* Without a layout, the DP and TP roles' groups from the ranks' communicator memberships
 * (c->mgrp); first joins the peer classes (c->cls, n_cls, before their CSR is built) that
 * TP/DP-like communicators connect. 0 or -ENOMEM; nothing to do when the layout is known. */
int an_groups_build(struct an_ctx *c);
/* groups_infer.c */
/* Without a layout and without a DP-role membership family: the DP-role groups (c->mgrp[0],
 * c->mgrp_inferred = 1) from which ranks' collective kernels end together; nothing when
 * no partition is convincing. Run after an_groups_build, before the classes' CSR.
 * 0 or -ENOMEM. */
int an_groups_infer(struct an_ctx *c);
/* r's group of that type (ARGUS_GT_DP or ARGUS_GT_TP) from membership; UINT32_MAX when
 * none. */
uint32_t an_group_of(const struct an_ctx *c, uint32_t r, int type);
/* Communication groups of one type: CSR over ranks, and each group's stage. */
struct an_groups {
    uint32_t G;
    uint32_t *off, *mem, *stage;
};
/* The groups of that type from membership (ranks in none left out; a group's stage is
 * its first member's peer class); g's arrays are the caller's to free. 0 or -ENOMEM. */
int an_groups_from_membership(const struct an_ctx *c, int type, struct an_groups *g);
/* names.c */
/* Sum of sum_ns over the modes of kernel `hash` in s. */
double an_name_sum(const struct an_ctx *c, const struct argus_step_summary *s, uint64_t hash);
/* Typical call duration of kernel `hash` in s: the median of its most frequent mode (its
 * sketch; the mean when the sketch is empty, the shortest call when the sketch had to
 * collapse). *calls = the kernel's call count over all modes. 0 when absent. */
double an_name_typical(const struct an_ctx *c, const struct argus_step_summary *s,
                       uint64_t hash, double *calls);
/* The same for the modes k[0..n) of one kernel (consecutive modes of one name). */
double an_modes_typical(const struct argus_kmode_stats *k, uint32_t n, double *calls);
/* Index of a name in c->names, or -1. */
long an_name_find(const struct an_names *nm, uint64_t hash);
/* Add ns to the total of name `hash` (a new entry of class kclass when unseen). 0 or
 * -ENOMEM. */
int an_names_add(struct an_names *nm, uint64_t hash, uint8_t kclass, double ns);
/* layout.c */
/* Coordinates, layout and peer classes (c->co, layout_known, lay, cls, n_cls, cls_off,
 * cls_mem): the classes are the PP stages, or inferred from the kernels each rank runs
 * when no rank said where it sits. After the cells are built. 0 or -ENOMEM. */
int an_build_layout(struct an_ctx *c);
/* cands.c: runs and candidates (an_slots_to_ranks and an_tmp_reserve are ctx.c's,
 * an_format_slots labels.c's) */
/* Runs of flagged steps (gaps <= AN_MAX_GAP bridged) with >= min_flags flagged steps.
 * Returns the count written to out (at most cap). */
size_t an_runs(const uint8_t *flag, size_t S, uint32_t min_flags, struct an_span *out,
               size_t cap);
int an_list_push(struct an_list *l, struct an_cand **out);
/* Append a zeroed run of rank over the step indices [a, b]; NULL when out of memory (the
 * array is left as it was). */
struct an_rrun *an_rruns_push(struct an_rruns *l, uint32_t rank, size_t a, size_t b);
void an_cand_add_rank(struct an_cand *k, uint32_t rank);
/* Overlap, in steps, of [a0,b0] and [a1,b1] (0 when disjoint). */
size_t an_overlap(size_t a0, size_t b0, size_t a1, size_t b1);
/* Slots v[0..n) to their rank ids, in place (ascending stays ascending). */
void an_slots_to_ranks(const struct an_ctx *c, uint32_t *v, uint32_t n);
/* an_format_ranks (labels.h) of slots, written as their rank ids. */
void an_format_slots(const struct an_ctx *c, const uint32_t *v, size_t n, char *buf,
                     size_t len);
/* Make sure tmp1..3 hold at least n doubles. */
int an_tmp_reserve(struct an_ctx *c, size_t n);
/* The values of the table v ([r * S + si], like vwall) of the members of class k held at
 * steps s0, s0 + 1, ... (NaN left out, members in cls_mem order): column j (step s0 + j)
 * is c->gat + j * c->gat_cap, with c->gat_n[j] values. Returns how many steps it gathered
 * (at least 1 when s0 < S, at most gat_steps); the columns stay valid until the next call.
 * One pass over each member's row instead of one strided pass per step. */
size_t an_class_gather(struct an_ctx *c, const double *v, uint32_t k, size_t s0);
/* Allocate an_class_gather's scratch (once the classes are known). 0 or -ENOMEM. */
int an_gather_alloc(struct an_ctx *c);

/* cands.c: per-rank runs into candidates */
/* Medians of per-step ratio, z and excess over the flagged steps of [a,b]; buf holds
 * S doubles. */
void an_run_stats(const double *ratio, const double *z, const double *exc,
                  const uint8_t *flag, size_t a, size_t b, double *buf, struct an_rrun *out,
                  uint32_t min_steps);
int an_push_cand(struct an_ctx *c, int kind, int level, size_t a, size_t b, size_t det,
                 double ratio, double z, double excess, struct an_cand **out);
/* Merge per-rank runs of the same kind (and main kernel for kernel_degradation) whose
 * windows overlap by half of the shorter one; one candidate per merged set. */
int an_merge_runs(struct an_ctx *c, struct an_rrun *v, size_t n, int level);
/* l2.c (compute_straggler, kernel_degradation, pipeline_bubble through bubbles.c) and
 * l2host.c (host_stall): the rank-level and stage-level detectors; their shared
 * machinery is analysis/l2.h. */
int an_detect_compute(struct an_ctx *c);
int an_detect_host(struct an_ctx *c);
/* l3.c: the kernel-level detector, and the per-kernel excess that names the kernels of
 * every verdict. */
int an_detect_kernels(struct an_ctx *c);
/* Per-name excess of ranks over [a,b] against their peers' per-step reference (peer=1)
 * or against their own median outside the window (peer=0), for kernels of kclass;
 * writes up to max names sorted by excess into out/exc; returns the count and the total
 * positive excess in *total. */
size_t an_kernel_excess(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a,
                        size_t b, int kclass, int peer, uint64_t *out, double *exc,
                        size_t max, double *total);
/* l3comm.c: the group communication detector (comm_degradation). */
int an_detect_comm(struct an_ctx *c);
/* peers.c */
/* When rank r ran a different number of kernels than its class (more than AN_SAME_WORK
 * off the others' median) at step si, its compute judged per call: *ratio = its compute
 * over what its own calls would take at the peers' typical call durations (per kernel,
 * median of the most frequent mode), *excess the difference in ns; returns 1. Returns 0
 * (outputs untouched) when the work matches and totals are comparable. */
int an_work_ratio(struct an_ctx *c, uint32_t r, size_t si, double *ratio, double *excess);
/* The same for one kernel: when r's calls of h differ from the class median, *ratio =
 * its typical call duration over the peers' median typical call, *excess = the
 * difference times its calls; returns 1, else 0. */
int an_kernel_percall(struct an_ctx *c, uint32_t r, size_t si, uint64_t h, double *ratio,
                      double *excess);
/* Late-arriver test on collectives: host_stall candidates (level 3, late = 1) with the
 * group members that waited as victims. Needs c->cflag (run after an_detect_compute). */
int an_detect_late(struct an_ctx *c);

/* stalls.c: intermittent host stalls (host_stall with the list of affected steps; the
 * waiting peers are victims). Run after the other rank-level detectors: it drops their
 * host_stall runs that it explains. */
int an_detect_stalls(struct an_ctx *c);

/* periodic.c: spikes of the job step time at a constant period as one iteration_jitter
 * (period_steps, the affected steps, cost_share). idx/x: the m valid steps' indices and
 * times; rt/zz/base: their jitter ratio, robust z and local median (0 where not
 * judged); fl: the strong spike flags, cleared at the pattern's spikes; long_run: runs
 * this long are level shifts, not spikes. 1 when a pattern was reported, 0 when none,
 * -ENOMEM. */
int an_periodic(struct an_ctx *c, const size_t *idx, const double *x, size_t m,
                const double *rt, const double *zz, const double *base, uint8_t *fl,
                size_t long_run);

/* confidence.c: every live candidate's data_level (when its detector set none) and
 * confidence (when 0), from its score, window, layout and data level. */
void an_confidence(struct an_ctx *c);

/* l1.c: step regression and iteration jitter on the job step time. */
int an_detect_l1(struct an_ctx *c);

/* w1.c */
/* W1 distance of two ascending samples on the quantile grid (i+1/2)/AN_W1_Q; NAN when
 * either is empty. */
double an_w1_sorted(const double *a, size_t na, const double *b, size_t nb);

/* victims.c */
/* Whether r is one of k's sources. */
int an_is_source(const struct an_cand *k, uint32_t r);
/* Victims of a source anomaly; fills k->a.victims, returns the median growth of their
 * communication time (fraction) and names the collective/p2p kernels that grew most. */
double an_victims(struct an_ctx *c, struct an_cand *k, uint64_t *names, size_t *n_names);
/* Phase whose time grew most over [a,b] for the given ranks (all ranks when nr == 0),
 * against each rank's own median outside the window; use compute time (compute=1) or
 * phase wall time. -1 when none grew. */
int an_phase_growth(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a, size_t b,
                    int compute);
/* Phase whose compute grew most against the peers' per-step reference. */
int an_phase_vs_peers(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a, size_t b);
/* Late-arriver test: the share of (source, step) pairs of k's window (at most 64 steps,
 * strided) where the source's communication time is >= 10% shorter than the median of
 * its other DP-group members; -1 when it cannot be judged (no layout nor DP-role
 * communicators, no DP peers). Uses c->tmp3. */
double an_late_arriver(struct an_ctx *c, const struct an_cand *k);
/* Without kernels: k->a.victims = the ranks whose time outside the source's phase (the
 * whole step at the steps level) grew by a quarter of k's excess and 5% of their own
 * median outside the window. Uses c->tmp3. */
void an_level_victims(struct an_ctx *c, struct an_cand *k);
/* explain.c */
/* Fill evidence, phase, kernels, victims of every candidate. */
int an_explain(struct an_ctx *c);

/* ncclview.c: NCCL's in-band view (struct argus_nccl_view). Nothing happens without an
 * NCCL block in some held summary. */
/* 1 when some held cell carries an NCCL block. */
int an_nccl_any(const struct an_ctx *c);
/* The view over step indices [a, b] of the communicator (seen on >= 2 ranks) that fits
 * the slots want[0..n_want) best (most of them members, then one of them the late
 * arriver or an end of the slow pair, then aligned steps x members): 1 with *out filled,
 * 0 when none (*out zeroed), -ENOMEM. */
int an_nccl_window(const struct an_ctx *c, size_t a, size_t b, const uint32_t *want,
                   uint32_t n_want, struct argus_nccl_view *out);
/* l3comm.c, on a comm_degradation candidate k (slots): when the view of its group's
 * communicator over its window names a slow pair inside the group, the pair's ends
 * become k's sources (a link); else a late arriver inside the group becomes the source
 * (the others waited). 0 or -ENOMEM. */
int an_nccl_refine(const struct an_ctx *c, struct an_cand *k);
/* argus_analyze, after fill_anomalies (rank ids): r->nccl per anomaly (one evidence
 * sentence appended when it names a late arriver or a link) and r->nccl_comms for the
 * whole run. 0 or -ENOMEM (what was filled stays, argus_result_free frees it). */
int an_nccl_result(const struct an_ctx *c, struct argus_result *r);

#endif /* ARGUS_ANALYSIS_INTERNAL_H */
