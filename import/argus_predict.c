/* argus_predict.c — `argus-predict [--steps N] [--cut F] [--whatif LIST] [--microbatches N]
 * [--json] PATH...`:
 * the time-to-train forecast (forecast/forecast.h) on what argus-analyze reads: the same
 * input side (import/inputs.c: traces, spools, steps CSVs, trainer logs, detected from
 * content), a job store keeping every step, the same analysis, then the forecast. With
 * --cut F the store holds only the first fraction F of the steps (the forecast sees
 * nothing after it) and the time the rest really took is printed beside the forecast.
 * Prints a table, or one JSON object (--json, yajl_gen) with remaining_s, total_s,
 * steps_left, whatif and, with --cut, cut_step and actual_remaining_s. Writes no files.
 *
 * Exit 0 forecast printed, 1 nothing could be forecast, 2 usage (one line naming the
 * option). Bad inputs cost one line each, as in argus-analyze.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analysis/analysis.h"
#include "common/config.h"
#include "common/jsongen.h"
#include "common/log.h"
#include "forecast/forecast.h"
#include "import/import.h"
#include "store/jobstore.h"

#include "import/analyze_run.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [--steps N] [--cut F] [--whatif LIST] [--microbatches N]\n"
            "       [--json] PATH...\n"
            "Forecast the time to train from saved training data: whatever argus-analyze\n"
            "reads (Kineto traces, Argus spools, steps.csv, trainer logs; a PATH may be a\n"
            "directory). Prints remaining and total wall time at P10/P50/P90/P99, the sync\n"
            "tax, what costs most, periodic events and regimes accounted for, assumptions\n"
            "and warnings. Writes no files.\n"
            "  -n, --steps N     the job's planned steps (default: with --cut the steps in\n"
            "                    the input, else the plan a spool recorded (any rank's\n"
            "                    argus_set_total_steps, else ARGUS_TOTAL_STEPS as the\n"
            "                    job's ranks read it), else unknown: the forecast is for\n"
            "                    1,000 steps; the table says which)\n"
            "  -c, --cut F       fit on the first fraction F (0 < F < 1) of the steps,\n"
            "                    forecast the rest and print the error against what happened\n"
            "  -w, --whatif LIST comma-separated: drop-slowest (the slowest node's ranks at\n"
            "                    the median offset), dp=K (data-parallel x K, K in 2..64),\n"
            "                    mb=M (M microbatches per step, 1..4096: the 1F1B schedule\n"
            "                    re-run; needs the current count, --microbatches)\n"
            "  -b, --microbatches N  the job's microbatches per step now (default:\n"
            "                    ARGUS_MICROBATCHES, else unknown: mb=M is refused)\n"
            "  -j, --json        one JSON object: remaining_s, total_s (p10, p50, p90, p99),\n"
            "                    steps_left, whatif (name -> quantiles of the remaining time,\n"
            "                    step_p50_ms, step_quantiles_ms), step_p50_ms,\n"
            "                    step_quantiles_ms (P1..P99 of one modelled step) and with\n"
            "                    --cut cut_step, actual_remaining_s\n"
            "  -s, --seed N      the Monte Carlo seed (default 1; same seed, same figures)\n"
            "  -R, --max-ranks N, -r, --rank-from RE, -m, --max-mem N  as in argus-analyze\n"
            "  -h, --help        this help\n"
            "  -V, --version     print the version\n"
            "Exit status: 0 forecast printed, 1 nothing could be forecast, 2 usage error.\n");
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *e;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || *e || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "drop-slowest,dp=2,dp=4": 0, or -1 with err naming the item. */
static int parse_whatif(const char *arg, struct argus_forecast_opts *fo, char *err,
                        size_t errlen)
{
    char buf[256], *save = NULL;
    if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf) {
        snprintf(err, errlen, "--whatif %s: too long", arg);
        return -1;
    }
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t k;
        if (fo->n_whatif >= ARGUS_FC_MAX_WHATIF) {
            snprintf(err, errlen, "--whatif %s: at most %d what-ifs", arg, ARGUS_FC_MAX_WHATIF);
            return -1;
        }
        if (strcmp(t, "drop-slowest") == 0) {
            fo->whatif[fo->n_whatif++].kind = ARGUS_FC_WI_DROP_SLOWEST;
        } else if (strncmp(t, "dp=", 3) == 0 && parse_u64(t + 3, 2, 64, &k) == 0) {
            fo->whatif[fo->n_whatif].kind = ARGUS_FC_WI_DP;
            fo->whatif[fo->n_whatif++].k = (int)k;
        } else if (strncmp(t, "mb=", 3) == 0 && parse_u64(t + 3, 1, 4096, &k) == 0) {
            fo->whatif[fo->n_whatif].kind = ARGUS_FC_WI_MB;
            fo->whatif[fo->n_whatif++].k = (int)k;
        } else {
            snprintf(err, errlen, "--whatif %s: not drop-slowest, dp=K (K in 2..64) or mb=M "
                     "(M in 1..4096)", t);
            return -1;
        }
    }
    if (fo->n_whatif == 0) {
        snprintf(err, errlen, "--whatif %s: empty", arg);
        return -1;
    }
    return 0;
}

static void run_free(struct run *r)
{
    for (size_t i = 0; i < r->n_sums; i++)
        free(r->sums[i].s);
    for (size_t i = 0; i < r->n_names; i++)
        free(r->names[i].name);
    for (size_t i = 0; i < r->n_kinfo; i++)
        free(r->kinfo[i]);
    for (size_t i = 0; i < r->n_spools; i++)
        free(r->spools[i]);
    argus_analyze_inputs_free(r);
    free(r->sums);
    free(r->names);
    free(r->kinfo);
    free(r->spools);
}

/* A store keeping every step, filled as argus-analyze fills its pipeline's; the staged
 * summaries are handed over (freed) as they go in. Ranks without a step are marked
 * missing from step 0, as argus_pipeline_seal does. */
static int fill_store(struct run *r, struct argus_jobstore **out, char *err, size_t errlen)
{
    struct argus_jobstore *js;
    int rc;

    if ((rc = argus_jobstore_create(r->n_ranks, &js)) != 0)
        return rc;
    argus_jobstore_set_retention(js, 0, 0);
    for (size_t i = 0; i < r->n_spools; i++)
        if (argus_spool_import(r->spools[i], js, err, errlen) < 0)
            fprintf(stderr, PROG ": %s; the records before it are used\n", err);
    for (size_t i = 0; i < r->n_names; i++)
        if ((rc = argus_jobstore_add_name(js, r->names[i].hash, r->names[i].name)) != 0)
            goto fail;
    for (size_t i = 0; i < r->n_sums; i++) {
        if ((rc = argus_jobstore_add_summary(js, r->sums[i].s)) != 0)
            goto fail;
        free(r->sums[i].s);
        r->sums[i].s = NULL;
    }
    for (size_t i = 0; i < r->n_kinfo; i++) {
        struct argus_rank_info ri;
        memset(&ri, 0, sizeof ri);
        ri.rank = (uint32_t)r->kinfo[i]->rank;
        ri.world_size = r->n_ranks;
        ri.device = r->kinfo[i]->device;
        ri.coords = r->kinfo[i]->coords;
        snprintf(ri.host, sizeof ri.host, "unknown");
        argus_jobstore_set_rankinfo(js, &ri);
    }
    *out = js;
    return 0;
fail:
    argus_jobstore_free(js);
    return rc;
}

static void seal(struct argus_jobstore *js)
{
    for (uint32_t k = 0; k < argus_jobstore_nranks(js); k++) {
        const struct argus_step_summary *const *v;
        if (argus_jobstore_rank_steps(js, k, &v) == 0)
            argus_jobstore_mark_missing(js, k, 0);
    }
}

/* The job step time (the slowest rank's wall, ms) of held step i. */
static double step_ms(const struct argus_jobstore *js, uint64_t step)
{
    double mx = 0;
    for (uint32_t k = 0; k < argus_jobstore_nranks(js); k++) {
        const struct argus_step_summary *s = argus_jobstore_get(js, k, step);
        if (s && s->end_ns > s->start_ns && (double)(s->end_ns - s->start_ns) / 1e6 > mx)
            mx = (double)(s->end_ns - s->start_ns) / 1e6;
    }
    return mx;
}

/* A store with the steps of `full` up to cut_step only (names and rank info copied). */
static int cut_store(const struct argus_jobstore *full, uint64_t cut_step,
                     struct argus_jobstore **out)
{
    struct argus_jobstore *js;
    const uint32_t P = argus_jobstore_nranks(full);
    int rc;

    if ((rc = argus_jobstore_create(P, &js)) != 0)
        return rc;
    argus_jobstore_set_retention(js, 0, 0);
    for (uint32_t k = 0; k < P; k++) {
        const struct argus_step_summary *const *v;
        const size_t n = argus_jobstore_rank_steps(full, k, &v);
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(full, k);
        if (ri)
            argus_jobstore_set_rankinfo(js, ri);
        for (size_t i = 0; i < n && v[i]->step <= cut_step; i++) {
            if ((rc = argus_jobstore_add_summary(js, v[i])) != 0)
                goto fail;
            for (uint32_t m = 0; m < v[i]->n_kmodes; m++) {
                const char *nm = argus_jobstore_name(full, v[i]->kmodes[m].name_hash);
                if (nm && !argus_jobstore_name(js, v[i]->kmodes[m].name_hash) &&
                    (rc = argus_jobstore_add_name(js, v[i]->kmodes[m].name_hash, nm)) != 0)
                    goto fail;
            }
        }
    }
    *out = js;
    return 0;
fail:
    argus_jobstore_free(js);
    return rc;
}

/* "step_p50_ms" and, when set, "step_quantiles_ms": P1..P99 of one modelled step. */
static int json_step(yajl_gen g, double p50, int has_q, const double *q)
{
    ARGUS_JSON_TRY(argus_json_key(g, "step_p50_ms"));
    ARGUS_JSON_TRY(argus_json_num(g, p50, 3));
    if (!has_q)
        return 0;
    ARGUS_JSON_TRY(argus_json_key(g, "step_quantiles_ms"));
    ARGUS_JSON_CK(yajl_gen_array_open(g));
    for (int k = 0; k < ARGUS_FC_NSTEPQ; k++)
        ARGUS_JSON_TRY(argus_json_num(g, q[k], 3));
    ARGUS_JSON_CK(yajl_gen_array_close(g));
    return 0;
}

/* key: {"p10", "p50", "p90", "p99"}, the map left open when open_after. */
static int json_quant_open(yajl_gen g, const char *key, const struct argus_fc_quant *q,
                           int open_after)
{
    ARGUS_JSON_TRY(argus_json_key(g, key));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "p10"));
    ARGUS_JSON_TRY(argus_json_num(g, q->p10, 3));
    ARGUS_JSON_TRY(argus_json_key(g, "p50"));
    ARGUS_JSON_TRY(argus_json_num(g, q->p50, 3));
    ARGUS_JSON_TRY(argus_json_key(g, "p90"));
    ARGUS_JSON_TRY(argus_json_num(g, q->p90, 3));
    ARGUS_JSON_TRY(argus_json_key(g, "p99"));
    ARGUS_JSON_TRY(argus_json_num(g, q->p99, 3));
    if (!open_after)
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

static int json_quant(yajl_gen g, const char *key, const struct argus_fc_quant *q)
{
    return json_quant_open(g, key, q, 0);
}

static int print_json(const struct argus_forecast *fc, int cut, uint64_t cut_step,
                      double actual)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    const unsigned char *buf;
    size_t len;
    int rc = -EIO;

    if (!g)
        return -ENOMEM;
    if (yajl_gen_map_open(g) != yajl_gen_status_ok || json_quant(g, "remaining_s",
        &fc->remaining_s) || json_quant(g, "total_s", &fc->total_s) ||
        argus_json_key(g, "steps_left") || argus_json_uint(g, fc->steps_left) ||
        argus_json_key(g, "whatif") || yajl_gen_map_open(g) != yajl_gen_status_ok)
        goto out;
    for (size_t w = 0; w < fc->n_whatif; w++) {
        const struct argus_fc_whatif *wi = &fc->whatif[w];
        if (json_quant_open(g, wi->name, &wi->remaining_s, 1) ||
            json_step(g, wi->step_p50_ms, wi->has_step_q, wi->step_q_ms) ||
            yajl_gen_map_close(g) != yajl_gen_status_ok)
            goto out;
    }
    if (yajl_gen_map_close(g) != yajl_gen_status_ok ||
        json_step(g, fc->step_p50_ms, fc->has_step_q, fc->step_q_ms))
        goto out;
    if (cut && (argus_json_key(g, "cut_step") || argus_json_uint(g, cut_step) ||
                argus_json_key(g, "actual_remaining_s") || argus_json_num(g, actual, 3)))
        goto out;
    if (yajl_gen_map_close(g) != yajl_gen_status_ok ||
        yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        goto out;
    fwrite(buf, 1, len, stdout);
    putchar('\n');
    rc = 0;
out:
    yajl_gen_free(g);
    return rc;
}

static void print_q(const char *name, const struct argus_fc_quant *q)
{
    printf("  %-22s %12.1f %12.1f %12.1f %12.1f\n", name, q->p10, q->p50, q->p90, q->p99);
}

static void print_table(const struct argus_forecast *fc, int cut, uint64_t cut_step,
                        double actual, const char *plan_from)
{
    printf(PROG ": %llu steps seen (to step %llu), %.1f s; ", (unsigned long long)fc->steps_done,
           (unsigned long long)fc->last_step, fc->elapsed_s);
    if (fc->per_1000)
        printf("plan unknown: forecast of the next 1,000 steps\n");
    else
        printf("%llu planned, %llu left\n", (unsigned long long)fc->steps_total,
               (unsigned long long)fc->steps_left);
    printf("  %-22s %12s %12s %12s %12s\n", "seconds", "P10", "P50", "P90", "P99");
    print_q("remaining", &fc->remaining_s);
    print_q("total", &fc->total_s);
    for (size_t w = 0; w < fc->n_whatif; w++) {
        char nm[40];
        snprintf(nm, sizeof nm, "what-if %s", fc->whatif[w].name);
        print_q(nm, &fc->whatif[w].remaining_s);
    }
    printf("step time (current regime, from step %llu, %llu steps): P50 %.2f ms, P90 %.2f ms,"
           " mean %.2f ms; sync tax %.3f\n", (unsigned long long)fc->regime_start,
           (unsigned long long)fc->regime_steps, fc->step_p50_ms, fc->step_p90_ms,
           fc->step_mean_ms, fc->sync_tax);
    for (size_t i = 0; i < fc->n_contrib; i++)
        printf("  contributor %-12s %9.2f ms at the P90 step (%4.1f %%), %+.2f ms over the "
               "rest\n", fc->contrib[i].name, fc->contrib[i].ms, 100 * fc->contrib[i].share,
               fc->contrib[i].excess_ms);
    for (size_t i = 0; i < fc->n_crit; i++)
        printf("  critical path: rank %u in %.0f %% of the steps\n", fc->crit[i].rank,
               100 * fc->crit[i].share);
    for (size_t w = 0; w < fc->n_whatif; w++)
        if (fc->whatif[w].note[0])
            printf("  what-if %s: %s\n", fc->whatif[w].name, fc->whatif[w].note);
    if (!fc->per_1000 && plan_from[0]) /* where the plan came from */
        printf("  assumed: the planned %llu steps from %s\n",
               (unsigned long long)fc->steps_total, plan_from);
    for (size_t i = 0; i < fc->n_assume; i++)
        printf("  assumed: %s\n", fc->assume[i]);
    for (size_t i = 0; i < fc->n_warn; i++)
        printf("  warning: %s\n", fc->warn[i]);
    if (cut) {
        const double e = fc->remaining_s.p50 > 0 && actual > 0
                             ? 100 * (fc->remaining_s.p50 - actual) / actual : 0;
        printf("cut after step %llu: actually %.1f s remained; P50 error %+.1f %%, %s "
               "P10-P90\n", (unsigned long long)cut_step, actual, e,
               actual >= fc->remaining_s.p10 && actual <= fc->remaining_s.p90 ? "inside"
                                                                             : "outside");
    }
}

int main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"steps", required_argument, NULL, 'n'},
        {"cut", required_argument, NULL, 'c'},
        {"whatif", required_argument, NULL, 'w'},
        {"microbatches", required_argument, NULL, 'b'},
        {"json", no_argument, NULL, 'j'},
        {"seed", required_argument, NULL, 's'},
        {"max-mem", required_argument, NULL, 'm'},
        {"max-ranks", required_argument, NULL, 'R'},
        {"rank-from", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct argus_forecast_opts fo;
    struct argus_config cfg;
    struct argus_jobstore *full = NULL, *fit = NULL;
    struct argus_result res;
    struct argus_forecast *fc = NULL;
    struct run r;
    char err[1024], plan_from[128] = "";
    double cut = 0, actual = 0;
    uint64_t planned = 0, cut_step = 0, mb = 0;
    int c, json = 0, status = 1, have_res = 0;

    memset(&r, 0, sizeof r);
    memset(&fo, 0, sizeof fo);
    memset(&res, 0, sizeof res);
    fo.seed = 1;
    fo.step_dist = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "n:c:w:b:js:m:R:r:hV", lopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_u64(optarg, 1, UINT64_C(1) << 40, &planned) != 0) {
                fprintf(stderr, PROG ": --steps %s: not an integer in [1, 2^40]\n", optarg);
                return 2;
            }
            break;
        case 'c': {
            char *e;
            cut = strtod(optarg, &e);
            if (*e || e == optarg || !(cut > 0 && cut < 1)) {
                fprintf(stderr, PROG ": --cut %s: not a fraction in (0, 1)\n", optarg);
                return 2;
            }
            break;
        }
        case 'w':
            if (parse_whatif(optarg, &fo, err, sizeof err) != 0) {
                fprintf(stderr, PROG ": %s\n", err);
                return 2;
            }
            break;
        case 'b':
            if (parse_u64(optarg, 1, 4096, &mb) != 0) {
                fprintf(stderr, PROG ": --microbatches %s: not an integer in [1, 4096]\n",
                        optarg);
                return 2;
            }
            break;
        case 'j': json = 1; break;
        case 's':
            if (parse_u64(optarg, 0, UINT64_MAX, &fo.seed) != 0) {
                fprintf(stderr, PROG ": --seed %s: not an unsigned integer\n", optarg);
                return 2;
            }
            break;
        case 'm':
        case 'R':
        case 'r':
            if (argus_analyze_input_option(&r, c, optarg) < 0)
                return 2;
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf(PROG " (Argus) %s\n", PACKAGE_VERSION); return 0;
        default: /* getopt's own message is off (opterr): one line, naming it */
            fprintf(stderr, PROG ": %s: unknown option or missing value (see " PROG
                    " --help)\n", argv[optind - 1 > 0 ? optind - 1 : 1]);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, PROG ": no PATH given (see " PROG " --help)\n");
        return 2;
    }
    for (size_t w = 0; w < fo.n_whatif; w++) { /* mb=M: the current count m */
        const char *env = getenv("ARGUS_MICROBATCHES");
        if (fo.whatif[w].kind != ARGUS_FC_WI_MB || mb)
            continue;
        if (env && *env && parse_u64(env, 1, 4096, &mb) != 0) {
            fprintf(stderr, PROG ": ARGUS_MICROBATCHES=%s: not an integer in [1, 4096]\n",
                    env);
            return 2;
        }
        if (!mb) {
            fprintf(stderr, PROG ": --whatif mb=%d: the current microbatch count is unknown "
                    "(give --microbatches N or ARGUS_MICROBATCHES)\n", fo.whatif[w].k);
            return 2;
        }
    }
    fo.microbatches = (uint32_t)mb;
    if (planned)
        snprintf(plan_from, sizeof plan_from, "--steps");
    argus_log_init();
    argus_config_defaults(&cfg);
    if (argus_config_load(&cfg, getenv, err, sizeof err) != 0)
        fprintf(stderr, PROG ": %s\n", err);
    for (int i = optind; i < argc; i++)
        argus_analyze_import_path(&r, argv[i]);
    if (r.oom) {
        fprintf(stderr, PROG ": out of memory while importing\n");
        goto out;
    }
    if (r.n_ok == 0 || r.n_ranks == 0) {
        fprintf(stderr, PROG ": nothing could be read (%zu inputs, all skipped)\n",
                r.n_inputs);
        goto out;
    }
    if (fill_store(&r, &full, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": cannot build the job store for %u ranks\n", r.n_ranks);
        goto out;
    }
    seal(full);
    const uint64_t *ids;
    const size_t n = argus_jobstore_steps(full, &ids);
    if (cut > 0) {
        size_t k = (size_t)floor(cut * (double)n);
        if (k < 8 || k >= n) {
            fprintf(stderr, PROG ": --cut %g: %zu of %zu steps fitted: need at least 8 and "
                    "one step left\n", cut, k, n);
            goto out;
        }
        cut_step = ids[k - 1];
        for (size_t i = k; i < n; i++)
            actual += step_ms(full, ids[i]) / 1e3;
        if (cut_store(full, cut_step, &fit) != 0) {
            fprintf(stderr, PROG ": out of memory cutting the job store\n");
            goto out;
        }
        seal(fit);
        if (!planned) { /* the input's steps: those done by the cut (by the step number,
                           as the forecast counts them, when marks came before Argus saw
                           any) and the n - k after it, whose time `actual` is */
            planned = (cut_step + 1 > k ? cut_step + 1 : k) + (n - k);
            snprintf(plan_from, sizeof plan_from, "the input (the steps it holds)");
        }
    } else {
        fit = full;
        full = NULL;
    }
    struct argus_analysis_opts ao;
    argus_analysis_opts_default(&ao);
    ao.ratio = cfg.ratio;
    uint64_t first, last;
    if (argus_jobstore_step_range(fit, &first, &last) == 0 && last - first + 1 < ao.min_steps)
        ao.min_steps = (uint32_t)(last - first + 1);
    if (argus_analyze(fit, &ao, &res) == 0)
        have_res = 1;
    if (!planned) { /* the plan the ranks recorded in their rank info (a spool), if any:
                       the program's, else ARGUS_TOTAL_STEPS's (store/jobstore.h) */
        uint32_t who = 0;
        planned = argus_jobstore_planned_steps(fit, &who, NULL, NULL);
        const enum argus_plan_from from = argus_jobstore_plan_from(fit);
        if (from == ARGUS_PLAN_PROGRAM)
            snprintf(plan_from, sizeof plan_from, "argus_set_total_steps on rank %u "
                     "(recorded in the input)", who);
        else if (from == ARGUS_PLAN_ENV)
            snprintf(plan_from, sizeof plan_from, "ARGUS_TOTAL_STEPS as rank %u read it "
                     "(recorded in the input)", who);
    }
    fo.total_steps = planned;
    if (!(fc = malloc(sizeof *fc)) || argus_forecast_run(fit, have_res ? &res : NULL, &fo,
                                                         fc) != 0) {
        fprintf(stderr, PROG ": out of memory forecasting\n");
        goto out;
    }
    if (!fc->valid) {
        fprintf(stderr, PROG ": no forecast: %s\n", fc->n_warn ? fc->warn[0] : "no steps");
        goto out;
    }
    if (json) {
        if (print_json(fc, cut > 0, cut_step, actual) != 0) {
            fprintf(stderr, PROG ": cannot write the JSON output\n");
            goto out;
        }
    } else {
        print_table(fc, cut > 0, cut_step, actual, plan_from);
    }
    status = 0;
out:
    free(fc);
    if (have_res)
        argus_result_free(&res);
    if (full)
        argus_jobstore_free(full);
    if (fit)
        argus_jobstore_free(fit);
    run_free(&r);
    return status;
}
