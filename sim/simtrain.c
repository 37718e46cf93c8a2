/* simtrain.c — argus-simtrain's entry point: options, MPI set-up (Megatron rank order,
 * TP/DP/PP communicators, a common virtual-time epoch), the step loop and --print-steps.
 * A test workload for Argus: it emits kernels through argus.h only (and, with
 * --nccl-groups, plays NCCL to the profiler plugin, ncclplay.h). Every bad option, and a
 * missing plugin, is one line on stderr and exit status 2 before any MPI work.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"

#define MAX_DIM 4096
#define MAX_WORLD (1 << 20)

static const char usage_text[] =
    "Usage: " SIM_PROG " [OPTIONS]   (run under mpirun with tp*pp*dp ranks)\n"
    "Simulate a Megatron-style 3D-parallel LLM training job in virtual time and emit its GPU\n"
    "kernels through Argus's argus.h API. Ranks in Megatron order: tp fastest, then dp,\n"
    "then pp (rank = tp_i + tp*(dp_i + dp*pp_i)).\n"
    "\n"
    "  --tp N              tensor-parallel size (default 1)\n"
    "  --pp N              pipeline-parallel size (default 1)\n"
    "  --dp N              data-parallel size (default 1); world size must be tp*pp*dp\n"
    "  --microbatches N    microbatches per step, 1F1B schedule (default 4)\n"
    "  --steps N           training steps, ids 0..N-1 (default 60)\n"
    "  --layers N          transformer layers per pipeline stage (default 2)\n"
    "  --seed N            seed of every random draw (default 1); same seed, same run\n"
    "  --noise SIGMA       lognormal sigma of kernel durations (default 0.03)\n"
    "  --inject SPEC       inject an anomaly (repeatable; see below)\n"
    "  --truth PATH        rank 0 writes the ground truth as JSON to PATH\n"
    "  --print-steps       every rank prints one line per step:\n"
    "                      step S rank R wall_ms W compute_ms C comm_ms M idle_ms I\n"
    "  --pace-ms N         each step also lasts at least N real milliseconds (default 0)\n"
    "  --no-layout         do not declare the layout (argus_set_layout): Argus then knows\n"
    "                      the groups only from the tp/dp/pp communicators (MPI_Comm_split)\n"
    "  --late-groups S     make the tp/dp/pp communicators out of Argus's sight (PMPI_) and\n"
    "                      split copies of them (MPI_Comm_split) only before step S\n"
    "  --nccl-groups       make the tp/dp/pp communicators out of Argus's sight (PMPI_) and\n"
    "                      play NCCL instead: load the profiler plugin NCCL_PROFILER_PLUGIN\n"
    "                      names (argus-run sets it) as NCCL 2.23+ does, call its init per\n"
    "                      communicator (\"tp\", \"dp\", \"pp\") and report every collective\n"
    "                      and pipeline transfer to it; with --no-layout Argus then knows\n"
    "                      the groups only from the plugin\n"
    "  --nccl-shuffle      --nccl-groups, each rank calling the plugin's init in its own\n"
    "                      order (rotated by rank, backwards on odd ranks), as NCCL does\n"
    "                      when PyTorch makes communicators at their first collective\n"
    "  -h, --help          this text\n"
    "\n"
    "SPEC is KIND:key=val,key=val,...; steps=A-B is inclusive, A- runs to the end, A is\n"
    "one step; ranks=1,4-6 lists global ranks. Factors multiply durations. Ranges past\n"
    "the last step are clipped; one starting after it is an error.\n"
    "  compute_straggler:ranks=R,steps=A-B,factor=F    compute kernels of ranks R slower\n"
    "  comm_degradation:group=dp|tp,index=K,steps=A-B,factor=F\n"
    "  comm_degradation:group=dp|tp,ranks=R[,R..],steps=A-B,factor=F\n"
    "                      transfer time of one group's collectives x F (group=dp is the\n"
    "                      default). DP group K = tp_i + tp*pp_i holds ranks\n"
    "                      tp_i + tp*(d + dp*pp_i), d = 0..dp-1; TP group K = dp_i + dp*pp_i\n"
    "                      holds ranks K*tp .. K*tp+tp-1; ranks= (or rank=) picks the one\n"
    "                      group holding those ranks; the truth lists all its members\n"
    "  pipeline_bubble:stage=S,steps=A-B,factor=F      compute of every rank of stage S\n"
    "  host_stall:ranks=R,steps=A-B,ms=T               GPU idles T ms before the step's\n"
    "                                                  first kernel\n"
    "  step_regression:steps=A-,factor=F               compute of every rank\n"
    "  kernel_degradation:ranks=R,kernel=SUB,steps=A-B,factor=F\n"
    "                      compute kernels whose name contains SUB (e.g. flash_bwd)\n"
    "  iteration_jitter:steps=A[-B],factor=F           compute of every rank\n"
    "  crash:rank=R,step=S                             rank R SIGKILLs itself at step S\n"
    "\n"
    "Open MPI: OMPI_MCA_mpi_yield_when_idle defaults to 1 here (many ranks per core).\n"
    "Exit status: 0 ok, 1 --truth not written, 2 bad usage or --nccl-groups without a\n"
    "loadable plugin.\n";

/* Only one rank should print a usage error; before MPI_Init the launcher's environment
 * tells which (no variable at all: a lone process, which prints). */
static int env_rank0(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

__attribute__((noreturn, format(printf, 1, 2)))
static void usage_error(const char *fmt, ...)
{
    if (env_rank0()) {
        va_list ap;
        va_start(ap, fmt);
        fputs(SIM_PROG ": ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs(" (see --help)\n", stderr);
        va_end(ap);
    }
    exit(2);
}

static int opt_int(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        usage_error("%s: bad value '%s' (want an integer %ld..%ld)", opt, s, lo, hi);
    return (int)v;
}

enum { OPT_TP = 256, OPT_PP, OPT_DP, OPT_MB, OPT_STEPS, OPT_LAYERS, OPT_SEED, OPT_NOISE,
       OPT_INJECT, OPT_TRUTH, OPT_PRINT, OPT_PACE, OPT_NO_LAYOUT, OPT_LATE_GROUPS,
       OPT_NCCL_GROUPS, OPT_NCCL_SHUFFLE };

static void parse_options(int argc, char **argv, struct sim_opts *o)
{
    static const struct option longopts[] = {
        { "tp", required_argument, NULL, OPT_TP },
        { "pp", required_argument, NULL, OPT_PP },
        { "dp", required_argument, NULL, OPT_DP },
        { "microbatches", required_argument, NULL, OPT_MB },
        { "steps", required_argument, NULL, OPT_STEPS },
        { "layers", required_argument, NULL, OPT_LAYERS },
        { "seed", required_argument, NULL, OPT_SEED },
        { "noise", required_argument, NULL, OPT_NOISE },
        { "inject", required_argument, NULL, OPT_INJECT },
        { "truth", required_argument, NULL, OPT_TRUTH },
        { "print-steps", no_argument, NULL, OPT_PRINT },
        { "pace-ms", required_argument, NULL, OPT_PACE },
        { "no-layout", no_argument, NULL, OPT_NO_LAYOUT },
        { "late-groups", required_argument, NULL, OPT_LATE_GROUPS },
        { "nccl-groups", no_argument, NULL, OPT_NCCL_GROUPS },
        { "nccl-shuffle", no_argument, NULL, OPT_NCCL_SHUFFLE },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char **specs = calloc((size_t)argc, sizeof *specs);
    int nspecs = 0, c;
    char *end;

    if (!specs)
        usage_error("out of memory");
    *o = (struct sim_opts){ .tp = 1, .pp = 1, .dp = 1, .microbatches = 4, .steps = 60,
                            .layers = 2, .seed = 1, .noise = 0.03, .late_groups = -1 };
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_TP: o->tp = opt_int("--tp", optarg, 1, MAX_DIM); break;
        case OPT_PP: o->pp = opt_int("--pp", optarg, 1, MAX_DIM); break;
        case OPT_DP: o->dp = opt_int("--dp", optarg, 1, MAX_DIM); break;
        case OPT_MB: o->microbatches = opt_int("--microbatches", optarg, 1, 4096); break;
        case OPT_STEPS: o->steps = opt_int("--steps", optarg, 1, 100000000); break;
        case OPT_LAYERS: o->layers = opt_int("--layers", optarg, 1, 1024); break;
        case OPT_SEED:
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-')
                usage_error("--seed: bad value '%s' (want an unsigned integer)", optarg);
            break;
        case OPT_NOISE:
            errno = 0;
            o->noise = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o->noise >= 0 && o->noise <= 2))
                usage_error("--noise: bad value '%s' (want a sigma in 0..2)", optarg);
            break;
        case OPT_INJECT: specs[nspecs++] = optarg; break;
        case OPT_TRUTH:
            if (!*optarg)
                usage_error("--truth: empty path");
            o->truth = optarg;
            break;
        case OPT_PRINT: o->print_steps = 1; break;
        case OPT_PACE: o->pace_ms = opt_int("--pace-ms", optarg, 0, 600000); break;
        case OPT_NO_LAYOUT: o->no_layout = 1; break;
        case OPT_LATE_GROUPS:
            o->late_groups = opt_int("--late-groups", optarg, 0, 100000000);
            break;
        case OPT_NCCL_GROUPS: o->nccl_groups = 1; break;
        case OPT_NCCL_SHUFFLE: o->nccl_groups = o->nccl_shuffle = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case ':': usage_error("%s: missing value", argv[optind - 1]);
        default:
            usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        usage_error("unexpected argument '%s'", argv[optind]);
    if ((long long)o->tp * o->pp * o->dp > MAX_WORLD)
        usage_error("--tp x --pp x --dp is over %d ranks", MAX_WORLD);

    /* injections need the final sizes, so they are parsed after every option */
    o->inj = calloc((size_t)nspecs + 1, sizeof *o->inj);
    if (!o->inj)
        usage_error("out of memory");
    for (int i = 0; i < nspecs; i++) {
        char err[512];
        if (sim_inject_parse(specs[i], o, &o->inj[i], err, sizeof err))
            usage_error("%s", err);
        o->ninj++;
    }
    free(specs);
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup_rank(struct sim_rank *r, const struct sim_opts *o, int rank, int world)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    r->rank = rank;
    r->world = world;
    r->tp_i = rank % o->tp;
    r->dp_i = (rank / o->tp) % o->dp;
    r->pp_i = rank / (o->tp * o->dp);
    r->tp_group = rank / o->tp;                  /* = dp_i + dp*pp_i */
    r->dp_group = r->tp_i + o->tp * r->pp_i;
    r->device = (uint32_t)(rank % 8);            /* eight GPUs per node */
    /* The simulator's side of the test knob CLOCK_SKEW_NS (reduce/testknob.h): a plain
     * non-negative decimal, anything else (unset, "0", garbage) is no skew. */
    const char *skew = getenv("ARGUS_TEST_CLOCK_SKEW_NS");
    char *end = NULL;
    long long d = skew && *skew ? strtoll(skew, &end, 10) : 0;
    r->skew_ns = end && *end == '\0' && d > 0 ? (uint64_t)d * (uint64_t)rank : 0;
    /* --late-groups, --nccl-groups: PMPI_ keeps these out of Argus's sight (see
     * late_groups, nccl_groups) */
    int (*split)(MPI_Comm, int, int, MPI_Comm *) =
        o->late_groups >= 0 || o->nccl_groups ? PMPI_Comm_split : MPI_Comm_split;
    split(MPI_COMM_WORLD, r->tp_group, r->tp_i, &r->tp_comm);
    split(MPI_COMM_WORLD, r->dp_group, r->dp_i, &r->dp_comm);
    split(MPI_COMM_WORLD, r->tp_i + o->tp * r->dp_i, r->pp_i, &r->pp_comm);
    sim_rng_seed(&r->rng, sim_mix(o->seed, (uint64_t)rank));
    r->maxreqs = 2 * o->microbatches;
    r->reqs = calloc((size_t)r->maxreqs, sizeof *r->reqs);
    r->sendbuf = calloc((size_t)r->maxreqs, sizeof *r->sendbuf);
    if (!r->reqs || !r->sendbuf)
        r->maxreqs = 0; /* sim_p2p_send falls back to blocking sends */
}

/* --late-groups: the same three splits, now through MPI_Comm_split (Argus sees them long
 * after its first rank info went out), freed at once. */
static void late_groups(const struct sim_rank *r)
{
    const struct sim_opts *o = r->o;
    MPI_Comm c[3];
    MPI_Comm_split(MPI_COMM_WORLD, r->tp_group, r->tp_i, &c[0]);
    MPI_Comm_split(MPI_COMM_WORLD, r->dp_group, r->dp_i, &c[1]);
    MPI_Comm_split(MPI_COMM_WORLD, r->tp_i + o->tp * r->dp_i, r->pp_i, &c[2]);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&c[i]);
}

/* --nccl-groups: each communicator told to the NCCL profiler plugin, as NCCL's init
 * would, in the same order on every rank (tp, dp, pp); with --nccl-shuffle the exchanges
 * keep that order and the plugin's inits follow the rank's own. A rank out of memory here
 * cannot leave its peers waiting in the exchange: the job ends. */
static void nccl_groups(struct sim_rank *r, int shuffle)
{
    const struct {
        struct sim_nccl_comm *c;
        MPI_Comm comm;
        const char *name;
    } v[3] = {{&r->tp_nccl, r->tp_comm, "tp"}, {&r->dp_nccl, r->dp_comm, "dp"},
              {&r->pp_nccl, r->pp_comm, "pp"}};
    for (int i = 0; i < 3; i++)
        if (sim_ncclplay_comm_prepare(v[i].c, v[i].comm, v[i].name) == -2) {
            fprintf(stderr, SIM_PROG ": rank %d: out of memory making the %s communicator\n",
                    r->rank, v[i].name);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < 3; i++) { /* shuffled: rotated by rank, backwards on odd ranks */
        const int k = !shuffle ? i : r->rank % 2 ? (2 - i + r->rank) % 3 : (i + r->rank) % 3;
        sim_ncclplay_comm_tell(v[k].c);
    }
}

static void teardown_rank(struct sim_rank *r)
{
    sim_ncclplay_comm_fini(&r->tp_nccl);
    sim_ncclplay_comm_fini(&r->dp_nccl);
    sim_ncclplay_comm_fini(&r->pp_nccl);
    MPI_Comm_free(&r->tp_comm);
    MPI_Comm_free(&r->dp_comm);
    MPI_Comm_free(&r->pp_comm);
    free(r->reqs);
    free(r->sendbuf);
}

int main(int argc, char **argv)
{
    struct sim_opts o;
    struct sim_rank r;
    int rank, world, status = 0;

    parse_options(argc, argv, &o);
    if (o.nccl_groups) { /* as NCCL would at its first communicator, but before MPI */
        char err[768];
        if (sim_ncclplay_load(NULL, err, sizeof err) != 0) {
            if (env_rank0())
                fprintf(stderr, SIM_PROG ": --nccl-groups: %s\n", err);
            sim_inject_free(&o);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The simulator mostly waits on its peers and runs many ranks per core: let Open MPI
     * yield instead of busy-polling (unless the user chose otherwise). Read at MPI_Init. */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (world != o.tp * o.pp * o.dp) {
        if (rank == 0)
            fprintf(stderr, SIM_PROG ": world size %d != --tp %d x --pp %d x --dp %d = %d "
                    "(see --help)\n", world, o.tp, o.pp, o.dp, o.tp * o.pp * o.dp);
        MPI_Finalize();
        sim_ncclplay_unload();
        sim_inject_free(&o);
        return 2;
    }

    setup_rank(&r, &o, rank, world);
    if (o.nccl_groups)
        nccl_groups(&r, o.nccl_shuffle);
    if (!o.no_layout)
        argus_set_layout(o.tp, o.pp, o.dp, 1, r.tp_i, r.pp_i, r.dp_i, 0);
    argus_set_total_steps((uint64_t)o.steps); /* the plan, for the report's forecast */

    /* common epoch: rank 0's wall clock; the truth file before any step (a crash
     * injection must still leave it behind) */
    uint64_t epoch = realtime_ns();
    MPI_Bcast(&epoch, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    r.t = epoch;
    if (rank == 0 && o.truth) {
        int rc = sim_truth_write(&o, o.truth);
        if (rc) {
            fprintf(stderr, SIM_PROG ": --truth %s: %s\n", o.truth, strerror(-rc));
            status = 1;
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (int s = 0; s < o.steps && status == 0; s++) {
        r.step = s;
        if (s == o.late_groups)
            late_groups(&r);
        if (sim_inject_step(&r)) {
            fflush(stdout);
            fflush(stderr);
            raise(SIGKILL);
        }
        const uint64_t t0 = r.t;
        if (o.pace_ms) { /* real time too, for tests of what happens while a job runs */
            struct timespec ts = {o.pace_ms / 1000, (long)(o.pace_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
        sim_step(&r, s);
        if (o.print_steps) {
            const uint64_t wall = r.t - t0;
            const uint64_t busy = r.compute_ns + r.comm_ns;
            printf("step %d rank %d wall_ms %.3f compute_ms %.3f comm_ms %.3f idle_ms %.3f\n",
                   s, rank, wall / 1e6, r.compute_ns / 1e6, r.comm_ns / 1e6,
                   (wall > busy ? wall - busy : 0) / 1e6);
        }
    }

    teardown_rank(&r);
    MPI_Finalize();
    sim_ncclplay_unload();
    sim_inject_free(&o);
    return status;
}
