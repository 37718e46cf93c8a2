/* reduce_fc.h — bench/reduce_scale's cost of the in-band forecast (forecast/forecast.h;
 * reduce_fc.c). Rank 0 forecasts after every window's analysis (pipeline/pipeline.c)
 * with the live options: 200 draws, the last 2,048 steps. Timed here on its own, over a
 * store of the default retention that takes every rank's row of every step (as from the
 * condensing root's rows records) for a job long enough that the forecast's series is
 * full: the median over the last STEADY windows (reduce_job.h), and the worst of them.
 * No analysis result is passed (the pipeline passes its own; the forecast only reads its
 * anomaly list). The forecast reads the store's per-step figures
 * (argus_jobstore_step_figs), no cell. Rows draw on reduce_synth.h's stream. */
#ifndef ARGUS_BENCH_REDUCE_FC_H
#define ARGUS_BENCH_REDUCE_FC_H

#include <stddef.h>

struct fc_cost {
    double ms, ms_max;   /* CPU per window */
    long flt;            /* page faults per window, median */
    size_t windows;
    int rc;              /* 1 when a forecast failed or was not valid */
};

/* The forecast's cost over a job of P ranks in windows of `window` steps, into *fc. 0, or
 * -1 when out of memory (the store, its rows). */
int fc_job(int P, int window, struct fc_cost *fc);

#endif /* ARGUS_BENCH_REDUCE_FC_H */
