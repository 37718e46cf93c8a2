/* argus_analyze.c — `argus-analyze [-o OUTDIR] PATH...`: Argus's diagnosis on saved data.
 * Each PATH is a file or a directory of files: Kineto/PyTorch-profiler traces (one per
 * rank, JSON or .gz), Argus spool files (summaries.argus) or steps.csv; the format is
 * detected from content. Everything goes into the job store of rank 0's own pipeline
 * (pipeline/pipeline.h) through the importers (import/import.h: the live summariser for
 * traces, the store's own decoder for spools), and the pipeline's final analysis and
 * writers run as at the end of a live run (reduce/rank0.c). The report goes into -o's
 * directory, else into a new one (never an existing job directory: default_outdir).
 *
 * Bad inputs: one line on stderr per file ("argus-analyze: FILE: what, at byte N"), the
 * file is skipped, the others are analysed; the report (report.json's "inputs" object,
 * report.md's "Inputs skipped" section) names the skipped files, written with the rest of
 * it from the one in-memory report. Exit 0 when something was analysed, 1 when nothing
 * could be, 2 on usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "import/import.h"
#include "pipeline/pipeline.h"
#include "import/pystacks.h"
#include "common/stackrec.h"
#include "store/jobstore.h"

#include "import/analyze_run.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [-o OUTDIR] PATH...\n"
            "Diagnose saved training data with Argus: PyTorch-profiler (Kineto) traces, one\n"
            "file per rank (.json or .json.gz), Argus spool files (summaries.argus) or a\n"
            "steps.csv, or trainer logs (Megatron-LM, tqdm, MLPerf, modded-nanogpt,\n"
            "DeepSpeed-Chat), one per rank. A PATH may be a directory; formats are detected\n"
            "from content.\n"
            "Writes report.json, report.md, report.html, steps.csv and anomalies.jsonl into\n"
            "OUTDIR and prints the report summary (progress on stderr when it is a\n"
            "terminal). Without -o, a new directory is made, never an\n"
            "existing one: JOBDIR.analysis beside the job directory the first PATH is or is\n"
            "in, else ./argus-<jobid>.analysis (.1, .2, ... when taken).\n"
            "  -o, --outdir DIR  write the report there (an existing directory of yours is\n"
            "                    used, a missing one made)\n"
            "  -m, --max-mem N   memory for a trace's event tables (bytes, or with K, M or G;\n"
            "                    at least 32K, default 48M); a larger trace is spilled to a\n"
            "                    temporary file in $TMPDIR and summarised step by step\n"
            "  -R, --max-ranks N a rank id of N or more costs its file (a trace, a spool) or\n"
            "                    row (steps.csv) and one line (default 65536, at most\n"
            "                    16777216; memory grows with the largest rank id)\n"
            "  -r, --rank-from RE a trainer log's rank: the first capture group of the POSIX\n"
            "                    extended regular expression RE on its file name (default:\n"
            "                    \"rank N\" or \"worker N\" in the name, else the logs' order)\n"
            "  -h, --help        this help\n"
            "  -V, --version     print the version\n"
            "Exit status: 0 analysed (some inputs may have been skipped), 1 nothing could be\n"
            "analysed, 2 usage error. ARGUS_RATIO and ARGUS_LOG apply as in a live run.\n");
}


/* Host call stack samples kept for the report (as a live rank 0, reduce/stackxchg.h). */
#define PYSTACKS_SET_MAX 1024

/* ---- where the report goes ------------------------------------------------------------ */

/* A directory Argus wrote (a live job's, or an earlier analysis): one of its files is there. */
static int is_jobdir(const char *d)
{
    static const char *const names[] = {"summaries.argus", "report.json", "reduce.json"};
    char p[PATH_MAX];

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((size_t)snprintf(p, sizeof p, "%s/%s", d, names[i]) < sizeof p &&
            access(p, F_OK) == 0)
            return 1;
    return 0;
}

/* Without -o (item 5 of issue 16: never into an existing job directory): base and name of
 * the fresh directory to make (pipeline.h .base/.name): <jobdir>.analysis beside the job
 * directory the first input is or is in, else argus-<jobid>.analysis in the cwd. */
static void default_outdir(const char *first, const char *jobid, char *base, size_t baselen,
                           char *name, size_t namelen)
{
    char d[PATH_MAX], real[PATH_MAX];
    struct stat st;

    if (stat(first, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(d, sizeof d, "%s", first);
    } else {
        const char *slash = strrchr(first, '/');
        if (!slash)
            snprintf(d, sizeof d, ".");
        else if (slash == first)
            snprintf(d, sizeof d, "/");
        else
            snprintf(d, sizeof d, "%.*s", (int)(slash - first), first);
    }
    if (is_jobdir(d) && realpath(d, real)) {
        char *slash = strrchr(real, '/');
        if (slash && slash[1] && strlen(slash + 1) + sizeof ".analysis" + 4 <= 255) {
            snprintf(name, namelen, "%s.analysis", slash + 1);
            if (slash == real)
                snprintf(base, baselen, "/");
            else
                snprintf(base, baselen, "%.*s", (int)(slash - real), real);
            return;
        }
    }
    snprintf(base, baselen, ".");
    size_t n = (size_t)snprintf(name, namelen, "argus-%.200s.analysis", jobid);
    for (size_t i = 0; i < n && i < namelen; i++) { /* a plain name whatever the id holds */
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            name[i] = '_';
    }
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

/* What the importers staged, into the pipeline's store (spools through the store's own
 * decoder); then the store is sealed (pipeline.h: ranks without a step are missing, the
 * span comes from the data). */
static int fill_store(struct run *r, struct argus_pipeline *pl, char *err, size_t errlen)
{
    int rc;

    for (size_t i = 0; i < r->n_spools; i++) {
        if ((rc = argus_spool_import(r->spools[i], pl->js, err, errlen)) < 0) /* 1: said */
            fprintf(stderr, PROG ": %s; the records before it are used\n", err);
    }
    for (size_t i = 0; i < r->n_names; i++)
        if ((rc = argus_pipeline_add_name(pl, r->names[i].hash, r->names[i].name)) != 0)
            return rc;
    for (size_t i = 0; i < r->n_sums; i++) {
        if ((rc = argus_pipeline_add_summary(pl, r->sums[i].s)) != 0)
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
        argus_pipeline_set_rankinfo(pl, &ri);
    }
    argus_pipeline_seal(pl);
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
    argus_analyze_inputs_free(r); /* skipped, lost, notes (import/inputs.c) */
    free(r->sums);
    free(r->names);
    free(r->kinfo);
    free(r->spools);
}

/* "123", "64K", "48M", "2G" -> bytes; 0 or -1. */
int main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"outdir", required_argument, NULL, 'o'},
        {"max-mem", required_argument, NULL, 'm'},
        {"max-ranks", required_argument, NULL, 'R'},
        {"rank-from", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    char base[PATH_MAX] = ".", name[256] = "", err[1024];
    struct argus_config cfg;
    struct argus_pipeline pl;
    struct run r;
    struct argus_progress prog; /* on a terminal only (import/progress.h) */
    int c, status = 1, opened = 0;
    struct argus_stackset stk = {0}; /* host call stacks from python_function events */

    memset(&r, 0, sizeof r);
    argus_progress_init(&prog, STDERR_FILENO, 1);
    r.progress = &prog;
    while ((c = getopt_long(argc, argv, "o:m:R:r:hV", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'm':
        case 'R':
        case 'r':
            if (argus_analyze_input_option(&r, c, optarg) < 0)
                return 2;
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
    if (cfg.stacks == ARGUS_MODE_ON && /* ARGUS_STACKS: Python stacks of the stalls */
        !(r.kopts.pystacks = argus_pystacks_new((uint32_t)cfg.stacks_min_ms)))
        fprintf(stderr, PROG ": out of memory for host stacks; none in the report\n");
    for (int i = optind; i < argc; i++)
        argus_analyze_import_path(&r, argv[i]);
    argus_progress_clear(&prog);
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
    const char *jobid = r.jobid[0] ? r.jobid : "offline";
    if (!outdir)
        default_outdir(argv[optind], jobid, base, sizeof base, name, sizeof name);
    const struct argus_pipeline_opts po = {
        .nranks = r.n_ranks,
        .dir = outdir,            /* -o: that directory */
        .base = base,             /* else a fresh one (default_outdir) */
        .name = outdir ? NULL : name,
        .jobid = jobid,
        .source = r.any_kineto ? ARGUS_SRC_KINETO : ARGUS_SRC_REPLAY,
        .ratio = cfg.ratio,
        .keep_all = 1, /* offline: every step */
        .total_steps = cfg.total_steps > 0 ? (uint64_t)cfg.total_steps : 0, /* forecast */
        .prog = PROG,
    };
    if (argus_pipeline_open(&pl, &po, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto out;
    }
    opened = 1;
    if (pl.total_steps) /* the forecast says whose plan it used */
        snprintf(pl.total_from, sizeof pl.total_from, "ARGUS_TOTAL_STEPS given to " PROG);
    argus_progress_stage(&prog, "building the job store");
    const int filled = fill_store(&r, &pl, err, sizeof err);
    argus_progress_clear(&prog);
    if (filled) {
        fprintf(stderr, PROG ": cannot build the job store for %u ranks\n", r.n_ranks);
        goto out;
    }
    const struct argus_report_inputs in = {
        .files = r.n_inputs,
        .analysed = r.n_ok,
        .skipped = (const char *const *)r.skipped,
        .n_skipped = r.n_skipped,
        .lost = (const char *const *)r.lost,
        .n_lost = r.n_lost,
        .notes = (const char *const *)r.notes,
        .n_notes = r.n_notes,
    };
    argus_pipeline_set_inputs(&pl, &in);
    argus_progress_stage(&prog, "analysing");
    const int analysed = argus_pipeline_analyze(&pl, 1);
    argus_progress_clear(&prog);
    if (analysed != 0) {
        fprintf(stderr, PROG ": no step summaries to analyse\n");
        goto out;
    }
    if (r.kopts.pystacks && argus_pystacks_stalls(r.kopts.pystacks) &&
        argus_stackset_init(&stk, PYSTACKS_SET_MAX) == 0) {
        argus_pystacks_fill(r.kopts.pystacks, &stk); /* per anomaly in the report */
        pl.rep.stacks = &stk;
    }
    argus_progress_stage(&prog, "writing the report");
    const int wrote = argus_pipeline_write(&pl, err, sizeof err);
    argus_progress_clear(&prog);
    if (wrote != 0) {
        fprintf(stderr, PROG ": %s; the report is not written\n", err);
        argus_pipeline_print_summary(&pl, stderr); /* what was and was not written */
        goto out;
    }
    argus_pipeline_print_summary(&pl, stdout);
    if (r.n_skipped)
        printf(PROG ": %zu of %zu inputs skipped (listed in report.json \"inputs\")\n",
               r.n_skipped, r.n_inputs);
    status = 0;
out:
    if (opened)
        argus_pipeline_close(&pl);
    argus_pystacks_free(r.kopts.pystacks);
    argus_stackset_free(&stk);
    run_free(&r);
    return status;
}
