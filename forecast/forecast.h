/* forecast.h — time to train with honest uncertainty (PRISM, docs/ALGORITHMS.md,
 * "Forecast (PRISM)"): from a job store and the analysis result of the same store, the
 * remaining and total wall time of the planned steps at P10/P50/P90/P99 (per 1,000 steps
 * when the plan is unknown), the steps left, the sync tax, the top contributors to the
 * P90 step (phases; ranks most often on the critical path), the periodic events and
 * regimes it accounted for, its assumptions and warnings, and what-ifs (drop the slowest
 * node, data-parallel x K, microbatches m -> m'), each with the same quantiles, and on
 * request the modelled law of one step (P1..P99).
 *
 * Method, in short: the job's step time is the slowest rank's wall per step; the fit uses
 * the current regime only (steps after the last change point, the analysis' and its own);
 * periodic events (the analysis' periodic iteration_jitter findings) are taken out of the
 * series and added back with their observed cost at the steps where they recur; the
 * remaining steps are drawn in two stages: the regime's level with the uncertainty of
 * its mean (batch means, Student t) and its drift, then the steps left as circular
 * blocks of the regime (never one by one), so that the band is not that of independent
 * steps; change points seen so far recur at their observed rate, each starting a regime
 * about the current level, up or down by an observed stair (exp(+-l) / cosh(l)), never
 * compounding; a rise that came back down is a slowdown episode, recurring at its rate,
 * length and height on top of the level. Per-rank offsets on a common per-step factor drive the what-ifs.
 *
 * Pure computation: no I/O, no globals; deterministic for a seed (its own RNG). Memory:
 * O(held steps) temporaries, and with what-ifs the store's scratch for held steps x
 * ranks tables (argus_jobstore_scratch: the caller must not be using it, as after
 * argus_analyze); all freed or left to the store before return. Time: O(the last
 * max_series steps seen + n_sims x ARGUS_FC_MAX_BLOCKS + the critical rank's summary of
 * each held step), whatever the steps left, the job's length and P: the held steps'
 * figures are the store's (argus_jobstore_step_figs), older evicted steps are counted and
 * summed from its running sum; only what-ifs read every held cell. struct
 * argus_forecast is plain data (no pointers).
 */
#ifndef ARGUS_FORECAST_FORECAST_H
#define ARGUS_FORECAST_FORECAST_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "store/jobstore.h"

#define ARGUS_FC_MAX_FIT 8192u     /* the most recent regime steps fitted */
#define ARGUS_FC_MAX_BLOCKS 1024u  /* blocks drawn per simulation before the normal law */
#define ARGUS_FC_MAX_CONTRIB 8
#define ARGUS_FC_MAX_CRIT 4
#define ARGUS_FC_MAX_PERIODIC 4
#define ARGUS_FC_MAX_NOTES 8
#define ARGUS_FC_MAX_WHATIF 4
#define ARGUS_FC_NOTE_LEN 256
#define ARGUS_FC_NSTEPQ 99         /* per-step quantiles: P1..P99 */

enum argus_fc_whatif_kind {
    ARGUS_FC_WI_DROP_SLOWEST = 1, /* the slowest node's ranks at the median offset */
    ARGUS_FC_WI_DP = 2,           /* data-parallel x k (k in [2, 64]) */
    ARGUS_FC_WI_MB = 3,           /* k microbatches per step instead of opts.microbatches
                                     (k in [1, 4096]; the 1F1B schedule re-run) */
};

struct argus_fc_whatif_spec {
    int kind;                     /* enum argus_fc_whatif_kind */
    int k;                        /* ARGUS_FC_WI_DP: the factor; ARGUS_FC_WI_MB: m' */
};

struct argus_forecast_opts {
    uint64_t total_steps;         /* planned steps of the job (a count); 0: unknown, the
                                     forecast is for the next 1,000 steps */
    uint64_t seed;                /* RNG seed; the same seed, the same forecast */
    uint32_t n_sims;              /* Monte Carlo draws; 0: 1,000 (at most 100,000) */
    uint32_t max_series;          /* the most recent steps looked at (older ones only
                                     counted and summed); 0 or more than 16,384: 16,384 */
    int step_dist;                /* 1: the per-step quantiles too (step_q_ms) */
    uint32_t microbatches;        /* the job's microbatches per step, m (0: unknown; an
                                     ARGUS_FC_WI_MB what-if needs it) */
    size_t n_whatif;              /* at most ARGUS_FC_MAX_WHATIF */
    struct argus_fc_whatif_spec whatif[ARGUS_FC_MAX_WHATIF];
};

/* Quantiles, in seconds. */
struct argus_fc_quant {
    double p10, p50, p90, p99;
};

struct argus_fc_contrib {
    char name[24];                /* "forward", "backward", "optimizer", "comm", "host_gap",
                                     "other", "unattributed" (step time only), "periodic" */
    double ms;                    /* mean on the critical rank in steps at or past the
                                     regime's P90 step; periodic: mean cost per step */
    double excess_ms;             /* the same minus its mean in the other regime steps */
    double share;                 /* ms over those steps' mean wall (phases overlap) */
};

struct argus_fc_crit {
    uint32_t rank;
    double share;                 /* of the regime's held steps where it was the slowest */
};

struct argus_fc_periodic {
    uint32_t period_steps;
    uint64_t last_step;           /* the last occurrence seen */
    uint64_t seen;                /* occurrences seen in the fitted steps */
    uint64_t left;                /* occurrences expected in the steps left */
    double cost_ms;               /* median extra time of one occurrence */
};

struct argus_fc_whatif {
    char name[24];                /* "drop-slowest", "dp=2", ... */
    struct argus_fc_quant remaining_s, total_s;
    double step_p50_ms;           /* median modelled step time (at the fit's last level
                                     when the regime drifts) */
    int has_step_q;               /* step_q_ms set (opts.step_dist) */
    double step_q_ms[ARGUS_FC_NSTEPQ]; /* P1..P99 of one modelled step, events included */
    char note[ARGUS_FC_NOTE_LEN]; /* what it assumed or could not model; "" */
};

struct argus_forecast {
    int valid;                    /* 0: too little data (notes[0] says why) */
    int per_1000;                 /* the plan is unknown: the quantiles are of 1,000 steps */
    uint64_t steps_done;          /* steps seen (evicted ones included), or the last step
                                     number + 1 when more */
    uint64_t steps_total;         /* planned (opts.total_steps), else done + 1,000 */
    uint64_t steps_left;
    uint64_t last_step;           /* the last step seen */
    double elapsed_s;             /* sum of the job step times seen */
    struct argus_fc_quant remaining_s, total_s;
    double step_p50_ms, step_p90_ms, step_mean_ms; /* of the current regime, no events */
    int has_step_q;               /* step_q_ms set (opts.step_dist) */
    double step_q_ms[ARGUS_FC_NSTEPQ]; /* P1..P99 of one modelled step of the steps left:
                                     the regime's steps, periodic events at their share */
    double sync_tax;              /* mean slowest-rank work / mean of the ranks' mean work,
                                     >= 1; 1 with one rank */
    uint64_t regime_start;        /* first step of the current regime */
    uint64_t regime_steps;        /* steps in it (periodic events included) */
    uint32_t n_changes;           /* change points seen (analysis' and own) */
    uint32_t block_len;           /* bootstrap block length */
    size_t n_contrib;
    struct argus_fc_contrib contrib[ARGUS_FC_MAX_CONTRIB]; /* largest ms first */
    size_t n_crit;
    struct argus_fc_crit crit[ARGUS_FC_MAX_CRIT];          /* largest share first */
    size_t n_periodic;
    struct argus_fc_periodic periodic[ARGUS_FC_MAX_PERIODIC];
    size_t n_assume, n_warn;
    char assume[ARGUS_FC_MAX_NOTES][ARGUS_FC_NOTE_LEN];
    char warn[ARGUS_FC_MAX_NOTES][ARGUS_FC_NOTE_LEN];
    size_t n_whatif;
    struct argus_fc_whatif whatif[ARGUS_FC_MAX_WHATIF];
};

/* Forecast the store's job. res: the analysis of the same store (argus_analyze), or NULL
 * (no analysis' change points or periodic events then; own change points still). *out is
 * overwritten. 0 (out->valid 0 when there are fewer than 8 steps: warn[0] says so),
 * -EINVAL (bad opts: n_whatif, a what-if kind or k, an mb what-if without
 * opts.microbatches), -ENOMEM. */
int argus_forecast_run(const struct argus_jobstore *js, const struct argus_result *res,
                       const struct argus_forecast_opts *o, struct argus_forecast *out);

/* ---- the model's pieces, for tests and the benchmark ---------------------------------- */

/* Remaining time (seconds) at P10/P50/P90/P99 of `left` steps whose step times (ms) follow
 * the regime series base[0..n) (n >= 2), in two stages (the level, then circular blocks
 * of length b); plus ev_count periodic events whose costs (ms) are drawn from
 * ev_ms[0..n_ev); plus change points at `rate` per step whose sizes (|log ratio|) are
 * drawn from lr[0..n_lr), each starting a regime about the current level (either sign,
 * exp(+-l) / cosh(l); they do not compound). n_sims 0: 1,000. Allocates O(n + n_sims)
 * and frees it. 0, -EINVAL or -ENOMEM. */
int argus_forecast_sample(const double *base, size_t n, uint32_t b, uint64_t left,
                          const double *ev_ms, size_t n_ev, uint64_t ev_count,
                          double rate, const double *lr, size_t n_lr, uint32_t n_sims,
                          uint64_t seed, struct argus_fc_quant *q);

#endif /* ARGUS_FORECAST_FORECAST_H */
