/* forecast.c — the forecast (forecast/forecast.h) in every report: report.json's
 * "forecast" object (docs/REPORT_SCHEMA.md), report.md's "Forecast" section and
 * metrics.prom's argus_forecast_* series. Writes what the forecast holds and decides
 * nothing; the same struct feeds the three, so they cannot disagree.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "report/report_int.h"

#define CK ARGUS_JSON_CK
#define CKR ARGUS_JSON_TRY

static int gen_q(yajl_gen g, const char *key, const struct argus_fc_quant *q)
{
    CKR(argus_json_key(g, key));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "p10"));
    CKR(argus_json_num(g, q->p10, 3));
    CKR(argus_json_key(g, "p50"));
    CKR(argus_json_num(g, q->p50, 3));
    CKR(argus_json_key(g, "p90"));
    CKR(argus_json_num(g, q->p90, 3));
    CKR(argus_json_key(g, "p99"));
    CKR(argus_json_num(g, q->p99, 3));
    CK(yajl_gen_map_close(g));
    return 0;
}

static int gen_notes(yajl_gen g, const char *key, const char (*v)[ARGUS_FC_NOTE_LEN], size_t n)
{
    CKR(argus_json_key(g, key));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < n; i++)
        CKR(argus_json_str(g, v[i]));
    CK(yajl_gen_array_close(g));
    return 0;
}

int an_gen_forecast(yajl_gen g, const struct argus_forecast *fc)
{
    CKR(argus_json_key(g, "forecast"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "per_1000_steps"));
    CK(yajl_gen_bool(g, fc->per_1000));
    CKR(argus_json_key(g, "steps_done"));
    CKR(argus_json_uint(g, fc->steps_done));
    CKR(argus_json_key(g, "steps_total"));
    if (fc->per_1000)
        CK(yajl_gen_null(g));
    else
        CKR(argus_json_uint(g, fc->steps_total));
    CKR(argus_json_key(g, "steps_left"));
    CKR(argus_json_uint(g, fc->steps_left));
    CKR(argus_json_key(g, "elapsed_s"));
    CKR(argus_json_num(g, fc->elapsed_s, 3));
    CKR(gen_q(g, "remaining_s", &fc->remaining_s));
    CKR(gen_q(g, "total_s", &fc->total_s));
    CKR(argus_json_key(g, "step_ms"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "p50"));
    CKR(argus_json_num(g, fc->step_p50_ms, 3));
    CKR(argus_json_key(g, "p90"));
    CKR(argus_json_num(g, fc->step_p90_ms, 3));
    CKR(argus_json_key(g, "mean"));
    CKR(argus_json_num(g, fc->step_mean_ms, 3));
    CK(yajl_gen_map_close(g));
    CKR(argus_json_key(g, "sync_tax"));
    CKR(argus_json_num(g, fc->sync_tax, 4));
    CKR(argus_json_key(g, "regime"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "first_step"));
    CKR(argus_json_uint(g, fc->regime_start));
    CKR(argus_json_key(g, "steps"));
    CKR(argus_json_uint(g, fc->regime_steps));
    CKR(argus_json_key(g, "change_points"));
    CKR(argus_json_uint(g, fc->n_changes));
    CK(yajl_gen_map_close(g));
    CKR(argus_json_key(g, "periodic"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < fc->n_periodic; i++) {
        const struct argus_fc_periodic *p = &fc->periodic[i];
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "period_steps"));
        CKR(argus_json_uint(g, p->period_steps));
        CKR(argus_json_key(g, "cost_ms"));
        CKR(argus_json_num(g, p->cost_ms, 3));
        CKR(argus_json_key(g, "seen"));
        CKR(argus_json_uint(g, p->seen));
        CKR(argus_json_key(g, "left"));
        CKR(argus_json_uint(g, p->left));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "contributors"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < fc->n_contrib; i++) {
        const struct argus_fc_contrib *c = &fc->contrib[i];
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "name"));
        CKR(argus_json_str(g, c->name));
        CKR(argus_json_key(g, "ms"));
        CKR(argus_json_num(g, c->ms, 3));
        CKR(argus_json_key(g, "excess_ms"));
        CKR(argus_json_num(g, c->excess_ms, 3));
        CKR(argus_json_key(g, "share"));
        CKR(argus_json_num(g, c->share, 4));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "critical_ranks"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < fc->n_crit; i++) {
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "rank"));
        CKR(argus_json_uint(g, fc->crit[i].rank));
        CKR(argus_json_key(g, "share"));
        CKR(argus_json_num(g, fc->crit[i].share, 4));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CKR(gen_notes(g, "assumptions", fc->assume, fc->n_assume));
    CKR(gen_notes(g, "warnings", fc->warn, fc->n_warn));
    CK(yajl_gen_map_close(g));
    return 0;
}

static void md_q(FILE *f, const char *name, const struct argus_fc_quant *q)
{
    fprintf(f, "| %s | %.1f | %.1f | %.1f | %.1f |\n", name, q->p10, q->p50, q->p90, q->p99);
}

void an_md_forecast(FILE *f, const struct argus_forecast *fc)
{
    fputs("\n## Forecast\n\n", f);
    if (fc->per_1000)
        fprintf(f, "%llu steps done; the planned steps are unknown (set ARGUS_TOTAL_STEPS or "
                   "call argus_set_total_steps), so this is the time of the next 1,000.\n\n",
                (unsigned long long)fc->steps_done);
    else
        fprintf(f, "%llu of %llu planned steps done, %llu left.\n\n",
                (unsigned long long)fc->steps_done, (unsigned long long)fc->steps_total,
                (unsigned long long)fc->steps_left);
    fputs("| seconds | P10 | P50 | P90 | P99 |\n| --- | ---: | ---: | ---: | ---: |\n", f);
    md_q(f, "remaining", &fc->remaining_s);
    md_q(f, "total", &fc->total_s);
    fprintf(f, "\nCurrent regime from step %llu (%llu steps, %u change point%s seen): step "
               "P50 %.3f ms, P90 %.3f ms; sync tax %.3f (the expected step over the mean "
               "rank's work).\n",
            (unsigned long long)fc->regime_start, (unsigned long long)fc->regime_steps,
            fc->n_changes, fc->n_changes == 1 ? "" : "s", fc->step_p50_ms, fc->step_p90_ms,
            fc->sync_tax);
    if (fc->n_contrib) {
        fputs("\n| contributor to the P90 step | ms | over the rest, ms | share |\n"
              "| --- | ---: | ---: | ---: |\n", f);
        for (size_t i = 0; i < fc->n_contrib; i++)
            fprintf(f, "| %s | %.3f | %+.3f | %.1f %% |\n", fc->contrib[i].name,
                    fc->contrib[i].ms, fc->contrib[i].excess_ms, 100 * fc->contrib[i].share);
    }
    if (fc->n_crit) {
        fputs("\nMost often on the critical path:", f);
        for (size_t i = 0; i < fc->n_crit; i++)
            fprintf(f, "%s rank %u (%.0f %% of the steps)", i ? "," : "", fc->crit[i].rank,
                    100 * fc->crit[i].share);
        fputs(".\n", f);
    }
    for (size_t i = 0; i < fc->n_assume; i++)
        fprintf(f, "%s- assumed: %s\n", i ? "" : "\n", fc->assume[i]);
    for (size_t i = 0; i < fc->n_warn; i++)
        fprintf(f, "%s- **warning**: %s\n", i || fc->n_assume ? "" : "\n", fc->warn[i]);
}

void an_prom_forecast(FILE *f, const char *L, const struct argus_forecast *fc)
{
    static const char *const qn[] = {"p10", "p50", "p90", "p99"}; /* a gauge: no "quantile" */
    const double rem[] = {fc->remaining_s.p10, fc->remaining_s.p50, fc->remaining_s.p90,
                          fc->remaining_s.p99};
    const double tot[] = {fc->total_s.p10, fc->total_s.p50, fc->total_s.p90, fc->total_s.p99};

    fputs("# HELP argus_forecast_remaining_seconds Forecast wall time of the steps left "
          "(of the next 1000 when the plan is unknown), by quantile (q).\n"
          "# TYPE argus_forecast_remaining_seconds gauge\n", f);
    for (int i = 0; i < 4; i++)
        fprintf(f, "argus_forecast_remaining_seconds{%s,q=\"%s\"} %.3f\n", L, qn[i],
                rem[i]);
    fputs("# HELP argus_forecast_total_seconds Forecast wall time of the whole run, by "
          "quantile.\n# TYPE argus_forecast_total_seconds gauge\n", f);
    for (int i = 0; i < 4; i++)
        fprintf(f, "argus_forecast_total_seconds{%s,q=\"%s\"} %.3f\n", L, qn[i],
                tot[i]);
    fprintf(f, "# HELP argus_forecast_steps_left Steps the forecast covers.\n"
               "# TYPE argus_forecast_steps_left gauge\nargus_forecast_steps_left{%s} %llu\n",
            L, (unsigned long long)fc->steps_left);
    fprintf(f, "# HELP argus_forecast_sync_tax Expected step over the mean rank's work.\n"
               "# TYPE argus_forecast_sync_tax gauge\nargus_forecast_sync_tax{%s} %.4f\n",
            L, fc->sync_tax);
}
