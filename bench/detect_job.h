/* detect_job.h — internal to bench/detect: the synthetic run's schedule, the three data
 * levels, and the job store one run analyses (bench/detect_job.c). Single-threaded.
 */
#ifndef ARGUS_BENCH_DETECT_JOB_H
#define ARGUS_BENCH_DETECT_JOB_H

#include "store/jobstore.h"
#include "tests/synth/synth.h"

#define STEPS 100 /* steps per fault run */
#define ONSET 40  /* the fault's first step */
#define END 79    /* ... and its last (step_regression lasts to the end, jitter one step) */
#define WINDOW 10 /* ARGUS_WINDOW: steps per condensed batch and per latency window */

/* The three levels of data a job can bring (bench/README.md, "Data levels"). */
enum { LV_KERNELS, LV_PHASES, LV_STEPS, LV_N };
extern const char *const detect_level_name[LV_N]; /* "kernels", "phases", "steps" */

/* What the condensing root kept, summed over every run made with condensing on. */
struct detect_condensed {
    int on;
    double exemplars, thin, bad;
};
/* --condense: every later detect_make_job goes through the condensing root. */
void detect_job_condense(int on);
/* The totals so far (valid for the program's life). */
const struct detect_condensed *detect_job_condensed(void);

/* *js: synth_job of o, then (condensing on) the store built from what the condensing root
 * writes, then cut to `level` (LV_*: kernels untouched; phases: every figure derived from
 * kernels gone; steps: the phase walls too). 0, or -1 with *js NULL. The caller owns *js. */
int detect_make_job(const struct synth_opts *o, int level, struct argus_jobstore **js);

#endif /* ARGUS_BENCH_DETECT_JOB_H */
