/* import/argus_analyze.c — `argus-analyze [-o OUTDIR] PATH...`: Argus's diagnosis on saved data.
 * Each PATH is a file or a directory of files: Kineto/PyTorch-profiler traces (one per
 * rank, JSON or .gz), Argus spool files (summaries.argus) or steps.csv; the format is
 * detected from content. Everything goes into one job store through the importers
 * (import/import.h: the live summariser for traces, the store's own decoder for spools) and then
 * through exactly the calls rank 0 makes at the end of a live run (reduce/rank0.c):
 * argus_analyze, argus_anomaly_log_append, argus_report_write, argus_report_print_summary.
 *
 * Bad inputs: one line on stderr per file ("argus-analyze: FILE: what, at byte N"), the
 * file is skipped, the others are analysed; report.json gets an "inputs" object naming the
 * skipped files and report.md an "Inputs skipped" section. Exit 0 when something was
 * analysed, 1 when nothing could be, 2 on usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/analysis.h"
#include "import/import.h"
#include "report/report.h"
#include "common/config.h"
#include "store/jobstore.h"
#include "common/log.h"
#include "common/outdir.h"

#include "import/analyze_run.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [-o OUTDIR] PATH...\n"
            "Diagnose saved training data with Argus: PyTorch-profiler (Kineto) traces, one\n"
            "file per rank (.json or .json.gz), Argus spool files (summaries.argus) or a\n"
            "steps.csv. A PATH may be a directory; formats are detected from content.\n"
            "Writes report.json, report.md, steps.csv and anomalies.jsonl into OUTDIR\n"
            "(default ./argus-<jobid>) and prints the report summary.\n"
            "  -o, --outdir DIR  write the report there\n"
            "  -m, --max-mem N   memory for a trace's event tables (bytes, or with K, M or G;\n"
            "                    at least 32K, default 48M); a larger trace is spilled to a\n"
            "                    temporary file in $TMPDIR and summarised step by step\n"
            "  -h, --help        this help\n"
            "  -V, --version     print the version\n"
            "Exit status: 0 analysed (some inputs may have been skipped), 1 nothing could be\n"
            "analysed, 2 usage error. ARGUS_RATIO and ARGUS_LOG apply as in a live run.\n");
}


/* ---- into the store, analyse, write --------------------------------------------------- */

/* Align every Kineto rank's clock on the lowest rank's, by collective end times. */
static void align_clocks(struct run *r)
{
    const struct argus_kineto_info *ref = NULL;
    for (size_t i = 0; i < r->n_kinfo; i++)
        if (!ref || r->kinfo[i]->rank < ref->rank)
            ref = r->kinfo[i];
    for (size_t i = 0; ref && i < r->n_sums; i++) {
        for (size_t k = 0; k < r->n_kinfo; k++)
            if ((uint32_t)r->kinfo[k]->rank == r->sums[i].s->rank) {
                r->sums[i].s->clock_offset_ns = argus_kineto_align(ref, r->kinfo[k]);
                break;
            }
    }
}

static int fill_store(struct run *r, struct argus_jobstore *js, char *err, size_t errlen)
{
    struct argus_job_meta *m = argus_jobstore_meta(js);
    uint64_t lo = UINT64_MAX, hi = 0;
    int rc;

    snprintf(m->id, sizeof m->id, "%s", r->jobid[0] ? r->jobid : "offline");
    m->source = r->any_kineto ? ARGUS_SRC_KINETO : ARGUS_SRC_REPLAY;
    for (size_t i = 0; i < r->n_spools; i++) {
        if ((rc = argus_spool_import(r->spools[i], js, err, errlen)) != 0)
            fprintf(stderr, PROG ": %s; the records before it are used\n", err);
    }
    for (size_t i = 0; i < r->n_names; i++)
        if ((rc = argus_jobstore_add_name(js, r->names[i].hash, r->names[i].name)) != 0)
            return rc;
    for (size_t i = 0; i < r->n_sums; i++) {
        if ((rc = argus_jobstore_add_summary(js, r->sums[i].s)) != 0)
            return rc;
        free(r->sums[i].s); /* the store has its copy: never hold two */
        r->sums[i].s = NULL;
    }
    for (size_t i = 0; i < r->n_kinfo; i++) {
        struct argus_rank_info ri;
        memset(&ri, 0, sizeof ri);
        ri.rank = (uint32_t)r->kinfo[i]->rank;
        ri.world_size = r->kinfo[i]->world_size > 0 ? (uint32_t)r->kinfo[i]->world_size
                                                    : r->n_ranks;
        ri.device = r->kinfo[i]->device;
        ri.coords = r->kinfo[i]->coords; /* from pg_config; zero sizes when unknown */
        snprintf(ri.host, sizeof ri.host, "unknown");
        argus_jobstore_set_rankinfo(js, &ri);
    }
    int complete = r->n_skipped == 0;
    for (uint32_t k = 0; k < argus_jobstore_nranks(js); k++) {
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(js, k, &v);
        if (n == 0) {
            complete = 0;
            argus_jobstore_mark_missing(js, k, 0);
            continue;
        }
        lo = v[0]->start_ns < lo ? v[0]->start_ns : lo;
        hi = v[n - 1]->end_ns > hi ? v[n - 1]->end_ns : hi;
    }
    m->started_ns = lo == UINT64_MAX ? 0 : lo;
    m->ended_ns = hi;
    m->complete = complete;
    return 0;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Add "inputs": {files, analysed, skipped: [...]} to report.json (a field added, as
 * REPORT_SCHEMA.md allows), by rewriting the file before its last closing brace. */
static void report_inputs(const struct run *r, const char *dir)
{
    char path[PATH_MAX + 32], err[512];
    char *buf = NULL, *extra = NULL;
    size_t len = 0, elen = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/report.json", dir);
    if (!(f = fopen(path, "rb")))
        return;
    FILE *mem = open_memstream(&buf, &len);
    char chunk[65536];
    size_t n;
    while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(f);
    if (!mem || fclose(mem) != 0)
        goto out;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        len--;
    if (!len || buf[len - 1] != '}')
        goto out;
    FILE *e = open_memstream(&extra, &elen);
    if (!e)
        goto out;
    fwrite(buf, 1, len - 1, e);
    fprintf(e, ",\"inputs\":{\"files\":%zu,\"analysed\":%zu,\"skipped\":[", r->n_inputs,
            r->n_ok);
    for (size_t i = 0; i < r->n_skipped; i++) {
        if (i)
            fputc(',', e);
        json_str(e, r->skipped[i]);
    }
    fputs("]}}\n", e);
    if (fclose(e) == 0 && argus_file_write_atomic(path, extra, elen, err, sizeof err) != 0)
        fprintf(stderr, PROG ": %s\n", err);
out:
    free(buf);
    free(extra);
}

static int mkdir_p(const char *dir)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0750) != 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(tmp, 0750) != 0 && errno != EEXIST)
        return -errno;
    snprintf(tmp + strlen(tmp), sizeof tmp - strlen(tmp), "/traces");
    if (mkdir(tmp, 0750) != 0 && errno != EEXIST)
        return -errno;
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
    for (size_t i = 0; i < r->n_skipped; i++)
        free(r->skipped[i]);
    free(r->sums);
    free(r->names);
    free(r->kinfo);
    free(r->spools);
}

/* "123", "64K", "48M", "2G" -> bytes; 0 or -1. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int sh = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
           : *end == 'G' || *end == 'g' ? 30 : 0;
    if (sh)
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> sh))
        return -1;
    *out = (size_t)v << sh;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"outdir", required_argument, NULL, 'o'},
        {"max-mem", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    char dir[PATH_MAX], err[1024];
    struct argus_config cfg;
    struct argus_analysis_opts opts;
    struct argus_jobstore *js = NULL;
    struct argus_result res;
    struct argus_anomaly_log alog;
    struct run r;
    int c, status = 1;

    memset(&r, 0, sizeof r);
    while ((c = getopt_long(argc, argv, "o:m:hV", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'm':
            if (parse_size(optarg, &r.kopts.max_mem) != 0 || r.kopts.max_mem < (32 << 10)) {
                fprintf(stderr, PROG ": --max-mem %s: not a size of at least 32K (bytes, or N "
                        "with K, M or G)\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf(PROG " (Argus) %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    argus_log_init();
    argus_config_defaults(&cfg);
    if (argus_config_load(&cfg, getenv, err, sizeof err) != 0)
        fprintf(stderr, PROG ": %s\n", err);
    memset(&res, 0, sizeof res);
    argus_anomaly_log_init(&alog);
    for (int i = optind; i < argc; i++)
        argus_analyze_import_path(&r, argv[i]);
    if (r.oom) {
        fprintf(stderr, PROG ": out of memory while importing\n");
        goto out;
    }
    if (r.n_ok == 0 || r.n_ranks == 0) {
        fprintf(stderr, PROG ": nothing could be analysed (%zu inputs, all skipped)\n",
                r.n_inputs);
        goto out;
    }
    align_clocks(&r);
    if (argus_jobstore_create(r.n_ranks, &js) != 0 ||
        argus_jobstore_set_retention(js, 0, 0) != 0 || /* offline: every step */
        fill_store(&r, js, err, sizeof err)) {
        fprintf(stderr, PROG ": cannot build the job store for %u ranks\n", r.n_ranks);
        goto out;
    }
    argus_analysis_opts_default(&opts);
    opts.ratio = cfg.ratio;
    uint64_t first, last;
    if (argus_jobstore_step_range(js, &first, &last) == 0 && last - first + 1 < opts.min_steps)
        opts.min_steps = (uint32_t)(last - first + 1); /* persistence cannot exceed the data */
    if (outdir)
        snprintf(dir, sizeof dir, "%s", outdir);
    else
        snprintf(dir, sizeof dir, "argus-%s", argus_jobstore_meta(js)->id);
    int rc = mkdir_p(dir);
    if (rc) {
        fprintf(stderr, PROG ": cannot create %s: %s\n", dir, strerror(-rc));
        goto out;
    }
    if (argus_analyze(js, &opts, &res) != 0) {
        fprintf(stderr, PROG ": no step summaries to analyse\n");
        goto out;
    }
    if (argus_anomaly_log_append(&alog, dir, js, &res, err, sizeof err) != 0)
        fprintf(stderr, PROG ": %s\n", err);
    if (argus_report_write(dir, js, &res, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto out;
    }
    report_inputs(&r, dir);
    if (argus_report_md_inputs(dir, r.n_inputs, r.n_ok, (const char *const *)r.skipped,
                               r.n_skipped, err, sizeof err) != 0)
        fprintf(stderr, PROG ": %s\n", err);
    argus_report_print_summary(stdout, dir, js, &res);
    if (r.n_skipped)
        printf(PROG ": %zu of %zu inputs skipped (listed in report.json \"inputs\")\n",
               r.n_skipped, r.n_inputs);
    status = 0;
out:
    argus_result_free(&res);
    argus_anomaly_log_free(&alog);
    argus_jobstore_free(js);
    run_free(&r);
    return status;
}
