/* reduce_fc.c — bench/reduce_scale's cost of the in-band forecast (reduce_fc.h). */
#include "bench/reduce_fc.h"

#include <stdlib.h>
#include <string.h>

#include "bench/reduce_job.h"
#include "bench/reduce_synth.h"
#include "common/aggregate.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"

#define FC_SERIES 2048u

int fc_job(int P, int W, struct fc_cost *fc)
{
    struct argus_jobstore *js = NULL;
    struct argus_agg_row *rows = malloc((size_t)P * sizeof *rows);
    struct argus_forecast *out = malloc(sizeof *out);
    double ms[STEADY], fl[STEADY];
    const struct argus_forecast_opts fo = {.total_steps = 100000, .seed = 1, .n_sims = 200,
                                           .max_series = FC_SERIES};
    int rc = -1;

    memset(fc, 0, sizeof *fc);
    if (!rows || !out || argus_jobstore_create((uint32_t)P, &js) != 0)
        goto out;
    fc->windows = FC_SERIES / W + 1 + STEADY;
    for (size_t w = 0; w < fc->windows; w++) {
        for (int s = 0; s < W; s++) {
            const uint64_t step = (uint64_t)w * W + (uint64_t)s;
            for (int r = 0; r < P; r++) {
                const uint64_t wall = 900000 * rs_rank_speed(r) / 1000 + rs_rnd() % 9000;
                rows[r] = (struct argus_agg_row){
                    .step = step, .rank = (uint32_t)r, .start_ns = 1000000000ull * step,
                    .us = {(uint32_t)wall, 300000, 500000, 20000, 150000, 5000,
                           (uint32_t)(wall - 160000), 150000}};
            }
            if (argus_jobstore_add_rows(js, rows, (size_t)P) != 0)
                goto out;
        }
        const long f0 = bench_minflt();
        const double t0 = bench_cpu_s();
        fc->rc |= argus_forecast_run(js, NULL, &fo, out) != 0 || !out->valid;
        const double t = bench_cpu_s() - t0;
        if (w + STEADY < fc->windows)
            continue;
        ms[w + STEADY - fc->windows] = 1e3 * t;
        fl[w + STEADY - fc->windows] = (double)(bench_minflt() - f0);
        fc->ms_max = 1e3 * t > fc->ms_max ? 1e3 * t : fc->ms_max;
    }
    fc->ms = median5(ms);
    fc->flt = (long)median5(fl);
    rc = 0;
out:
    argus_jobstore_free(js);
    free(rows);
    free(out);
    return rc;
}
