/* detect_runs.h — internal to bench/detect: the scenarios, the tallies a run adds to, and
 * the two kinds of run (bench/detect_runs.c). Single-threaded; a run allocates its job and
 * result and frees them before it returns.
 */
#ifndef ARGUS_BENCH_DETECT_RUNS_H
#define ARGUS_BENCH_DETECT_RUNS_H

#include <stdint.h>

#include "bench/detect_job.h"

/* Severity classes: below x1.2, x1.2 up to x1.3, x1.3 and above. */
enum { SEV_LOW, SEV_12, SEV_13 };

struct scen {
    const char *kind_name;
    int kind;        /* expected enum argus_anomaly_kind */
    int sy;          /* enum synth_kind */
    double sev;      /* factor, or ms for host stalls */
    int cls;         /* severity class (comm x1.5 and x3, host 50/500 ms: SEV_13) */
};

#define NSCEN 24 /* rows of detect_scenarios */
extern const struct scen detect_scenarios[NSCEN];

struct tally {
    double tp, fp, fn;       /* source ranks (rank-less kinds: the job as one "rank") */
    double runs, detected, kind_ok, lat_sum, lat_max, lat_n, within2w, fa;
};

/* Variability levels of the clean runs: step cv ~2, 5, 9 %, 9 % with heavy-tailed kernel
 * noise, 9 % with ranks/8 ranks chronically 5-15 % slower from the first step (each
 * should be one persistent_imbalance finding, never an episode). */
enum { V_2, V_5, V_9, V_9_TAIL, V_9_CHRONIC, V_N };
extern const char *const detect_variant_name[V_N];

struct clean {
    double fa[V_N], steps[V_N], cv[V_N], runs[V_N];
    double pi_found, pi_total;   /* V_9_CHRONIC: chronic ranks named by persistent_imbalance */
};

/* One fault run of scenario sc on a tp x pp x dp job at a data level (LV_*), adds its
 * figures to t; misses said on stderr with verbose. 0, or -1 when the job could not be
 * made or analysed. */
int detect_run_fault(const struct scen *sc, int tp, int pp, int dp, uint64_t seed, int level,
                     struct tally *t, int verbose);
/* One clean run k of variant v (V_*) on lay = {tp, pp, dp} with per_run steps at a data
 * level, adds to cl; false alarms said on stderr with verbose. 0 or -1. */
int detect_run_clean(int v, int k, const int lay[3], int per_run, int level, struct clean *cl,
                     int verbose);
/* d += s, figure by figure (lat_max: the larger). */
void detect_tally_add(struct tally *d, const struct tally *s);

#endif /* ARGUS_BENCH_DETECT_RUNS_H */
