/* detect_result.c — the detection suite's result line (bench/detect_result.h) through
 * yajl_gen (docs/STYLE.md, "File formats and JSON"): per data level the tallies (all,
 * by severity, by scenario) and the clean runs, the kernels level's figures also at the top
 * under the keys of earlier versions, and what condensing kept.
 * Must not print other than through g.
 */
#include "bench/detect_result.h"

#include <errno.h>
#include <stdio.h>

#include "bench/benchline.h"
#include "common/jsongen.h"

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 1.0;
}

/* "name": a tally's figures */
static int put_tally(yajl_gen g, const char *name, const struct tally *t)
{
    ARGUS_JSON_TRY(argus_json_key(g, name));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_BENCH_PUT_F(g, "runs", "%.0f", t->runs);
    ARGUS_BENCH_PUT_F(g, "precision", "%.4f", ratio(t->tp, t->tp + t->fp));
    ARGUS_BENCH_PUT_F(g, "recall", "%.4f", ratio(t->tp, t->tp + t->fn));
    ARGUS_BENCH_PUT_F(g, "detected", "%.4f", ratio(t->detected, t->runs));
    ARGUS_BENCH_PUT_F(g, "kind_accuracy", "%.4f", ratio(t->kind_ok, t->detected));
    ARGUS_BENCH_PUT_F(g, "latency_steps_mean", "%.2f", t->lat_n ? t->lat_sum / t->lat_n : 0);
    ARGUS_BENCH_PUT_F(g, "latency_steps_max", "%.0f", t->lat_max);
    ARGUS_BENCH_PUT_F(g, "within_2_windows", "%.4f", ratio(t->within2w, t->lat_n));
    ARGUS_BENCH_PUT_F(g, "false_alarms", "%.0f", t->fa);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

/* "clean": the variants run at this level */
static int put_clean(yajl_gen g, const struct clean *cl)
{
    ARGUS_JSON_TRY(argus_json_key(g, "clean"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (int v = 0; v < V_N; v++) {
        if (!cl->runs[v])
            continue;
        ARGUS_JSON_TRY(argus_json_key(g, detect_variant_name[v]));
        ARGUS_JSON_CK(yajl_gen_map_open(g));
        ARGUS_BENCH_PUT_F(g, "steps", "%.0f", cl->steps[v]);
        ARGUS_BENCH_PUT_F(g, "step_cv", "%.4f", cl->cv[v] / cl->runs[v]);
        ARGUS_BENCH_PUT_F(g, "false_alarms", "%.0f", cl->fa[v]);
        ARGUS_BENCH_PUT_F(g, "per_1000_steps", "%.3f",
              cl->steps[v] ? 1000 * cl->fa[v] / cl->steps[v] : 0);
        if (v == V_9_CHRONIC)
            ARGUS_BENCH_PUT_F(g, "persistent_imbalance_recall", "%.4f",
                  ratio(cl->pi_found, cl->pi_total));
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

/* all, severity_ge_1.2, severity_ge_1.3, by_scenario and clean of one level */
static int put_level_body(yajl_gen g, const struct level_res *lr)
{
    ARGUS_JSON_TRY(put_tally(g, "all", &lr->all));
    ARGUS_JSON_TRY(put_tally(g, "severity_ge_1.2", &lr->ge12));
    ARGUS_JSON_TRY(put_tally(g, "severity_ge_1.3", &lr->ge13));
    ARGUS_JSON_TRY(argus_json_key(g, "by_scenario"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (size_t s = 0; s < NSCEN; s++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s_x%g%s", detect_scenarios[s].kind_name,
                 detect_scenarios[s].sev, detect_scenarios[s].sy == SY_HOST ? "ms" : "");
        ARGUS_JSON_TRY(put_tally(g, nm, &lr->per[s]));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return put_clean(g, &lr->cl);
}

/* The result object: the kernels level's figures at the top (the keys readers of earlier
 * lines know), then every level run under "levels". 0, -EIO or -ENOMEM. */
int detect_put_result(yajl_gen g, int ranks, int seeds, const struct level_res *lv,
                      double seconds)
{
    const struct detect_condensed *cond = detect_job_condensed();
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "bench"));
    ARGUS_JSON_TRY(argus_json_str(g, "detect"));
    ARGUS_JSON_TRY(argus_json_key(g, "source"));
    ARGUS_JSON_TRY(argus_json_str(g, "argus-synth"));
    ARGUS_JSON_TRY(argus_json_key(g, "ranks"));
    ARGUS_JSON_CK(yajl_gen_array_open(g));
    ARGUS_JSON_CK(yajl_gen_integer(g, ranks));
    ARGUS_JSON_CK(yajl_gen_array_close(g));
    ARGUS_JSON_TRY(argus_json_key(g, "seeds"));
    ARGUS_JSON_CK(yajl_gen_integer(g, seeds));
    ARGUS_JSON_TRY(argus_json_key(g, "steps_per_run"));
    ARGUS_JSON_CK(yajl_gen_integer(g, STEPS));
    ARGUS_JSON_TRY(argus_json_key(g, "onset_step"));
    ARGUS_JSON_CK(yajl_gen_integer(g, ONSET));
    ARGUS_JSON_TRY(argus_json_key(g, "window_steps"));
    ARGUS_JSON_CK(yajl_gen_integer(g, WINDOW));
    ARGUS_JSON_TRY(argus_json_key(g, "condense"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "on"));
    ARGUS_JSON_CK(yajl_gen_bool(g, cond->on));
    ARGUS_BENCH_PUT_F(g, "exemplars", "%.0f", cond->exemplars);
    ARGUS_BENCH_PUT_F(g, "thin", "%.0f", cond->thin);
    ARGUS_BENCH_PUT_F(g, "bad", "%.0f", cond->bad);
    ARGUS_BENCH_PUT_F(g, "full_share", "%.4f",
          cond->on ? ratio(cond->exemplars, cond->exemplars + cond->thin) : 1.0);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    if (lv[LV_KERNELS].on)
        ARGUS_JSON_TRY(put_level_body(g, &lv[LV_KERNELS]));
    ARGUS_JSON_TRY(argus_json_key(g, "levels"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (int l = 0; l < LV_N; l++) {
        if (!lv[l].on)
            continue;
        ARGUS_JSON_TRY(argus_json_key(g, detect_level_name[l]));
        ARGUS_JSON_CK(yajl_gen_map_open(g));
        ARGUS_JSON_TRY(put_level_body(g, &lv[l]));
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    ARGUS_BENCH_PUT_F(g, "seconds", "%.1f", seconds);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}
