/* detect.c — the detection scenario suite: every anomaly kind at four severities on the
 * synthetic Megatron job of tests/synth/synth.c (the same injections and the same
 * schedule model as argus-simtrain, in-process, so a few hundred runs take seconds), several
 * seeds, plus clean runs with 2 %, 5 % and 9 % step-time variability, heavy-tailed kernel
 * noise, and 9 % with ranks/8 ranks chronically 5-15 % slower. Every run at three data
 * levels (bench/README.md, "Data levels"): kernels (the summaries as made), phases (the
 * kernel figures removed, the marked phases' walls kept) and steps (only the step
 * intervals left). Prints one JSON line through yajl_gen (docs/STYLE.md, "Benchmarks"),
 * source "argus-synth": per level precision and recall of source ranks (all severities,
 * >= x1.2 and >= x1.3), kind accuracy, detection latency in steps from onset (and in
 * ARGUS_WINDOW=10-step windows), false alarms per 1,000 clean steps per variability level
 * (below the kernels level: 9 % plain and chronic only) and, with chronic offsets, the
 * share of chronic ranks named by a persistent_imbalance finding. The kernels level's
 * figures also stand at the top of the line, under the keys of earlier versions.
 * Usage: bench/detect [--seeds N] [--clean-steps N] [--ranks 16|64]
 * [--level kernels|phases|steps|all] [--no-faults] [--condense] [--verbose]: 16 ranks
 * (tp 2, pp 2, dp 4) or 64 (tp 2, pp 4, dp 8) for the fault and the clean runs alike;
 * 30,000 clean steps per variability level by default (enough to tell 1 false alarm per
 * 10,000 steps from 0). Not run by `make check`; deterministic for given arguments.
 * --condense: every run's summaries go through the condensing root (reduce/condense.h) as
 * rank 0 would take them, one batch per WINDOW steps (names and rank info in the first),
 * and the analysis reads the store built from what the root writes (exemplars + thin
 * summaries) instead of the full one: whether detection survives condensing. By the
 * module's contract one root over the raw summaries gives what any tree gives. The data
 * level is applied after condensing.
 * This file reads the arguments and runs the suite; the job a run analyses is made in
 * bench/detect_job.c, the runs are scored in bench/detect_runs.c, the line is written by
 * bench/detect_result.c.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/benchline.h"
#include "bench/detect_result.h"

/* "kernels", "phases", "steps" or "all" into on[]; 0 or -1. */
static int parse_levels(const char *s, int *on)
{
    for (int l = 0; l < LV_N; l++)
        on[l] = !strcmp(s, "all") || !strcmp(s, detect_level_name[l]);
    return on[0] || on[1] || on[2] ? 0 : -1;
}

int main(int argc, char **argv)
{
    int seeds = 3, clean_steps = 30000, ranks = 16, verbose = 0, faults = 1, bad = 0;
    int lv_on[LV_N] = { 1, 1, 1 };
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--clean-steps") && i + 1 < argc)
            clean_steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks64"))
            ranks = 64;
        else if (!strcmp(argv[i], "--level") && i + 1 < argc)
            bad = parse_levels(argv[++i], lv_on);
        else if (!strcmp(argv[i], "--no-faults"))
            faults = 0;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else if (!strcmp(argv[i], "--condense"))
            detect_job_condense(1);
        else
            bad = 1;
        bad |= ranks != 16 && ranks != 64;
    }
    if (bad) {
        fprintf(stderr, "usage: detect [--seeds N] [--clean-steps N] [--ranks 16|64] "
                        "[--level kernels|phases|steps|all] [--no-faults] [--condense] "
                        "[--verbose]\n");
        return 2;
    }
    /* Every run allocates and frees tens of MB of summaries: keep the freed heap instead
     * of returning it to the kernel and faulting it in again (a third of the run time). */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* tp, pp, dp: 16 ranks = 2 x 2 x 4, 64 ranks = 2 x 4 x 8 (faults and clean runs) */
    const int lay[3] = { 2, ranks == 64 ? 4 : 2, ranks == 64 ? 8 : 4 };
    static struct level_res lv[LV_N];
    const int per_run = 500, runs = (clean_steps + per_run - 1) / per_run;
    for (int l = 0; l < LV_N; l++) {
        struct level_res *lr = &lv[l];
        lr->on = lv_on[l];
        for (size_t s = 0; lr->on && faults && s < NSCEN; s++)
            for (int k = 0; k < seeds; k++)
                if (detect_run_fault(&detect_scenarios[s], lay[0], lay[1], lay[2],
                              1000u + 17u * (uint64_t)k + 101u * s, l, &lr->per[s], verbose)) {
                    fprintf(stderr, "detect: run failed\n");
                    return 1;
                }
        for (size_t s = 0; s < NSCEN; s++) {
            detect_tally_add(&lr->all, &lr->per[s]);
            if (detect_scenarios[s].cls >= SEV_12)
                detect_tally_add(&lr->ge12, &lr->per[s]);
            if (detect_scenarios[s].cls >= SEV_13)
                detect_tally_add(&lr->ge13, &lr->per[s]);
        }
        /* clean runs: false alarms per 1,000 steps; below the kernels level only at 9 %
         * variability, plain and with chronic offsets (what the figures are asked of) */
        for (int v = 0; lr->on && v < V_N; v++) {
            if (l != LV_KERNELS && v != V_9 && v != V_9_CHRONIC)
                continue;
            for (int k = 0; k < runs; k++)
                if (detect_run_clean(v, k, lay, per_run, l, &lr->cl, verbose)) {
                    fprintf(stderr, "detect: clean run failed\n");
                    return 1;
                }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = -ENOMEM;
    if (g && yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout)) {
        rc = detect_put_result(g, ranks, seeds, lv,
                        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        putchar('\n');
    }
    if (g)
        yajl_gen_free(g);
    if (rc) {
        fprintf(stderr, "detect: the result line could not be generated\n");
        return 1;
    }
    return 0;
}

