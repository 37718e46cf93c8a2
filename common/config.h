/* config.h — the environment contract (docs/ARCHITECTURE.md, contract 1): one table of
 * every ARGUS_* variable with its type, default and bounds. spank/ and wrapper/ set these;
 * the ranks read them with argus_config_load. etc/argus.conf documents the same table (a
 * unit test checks that every variable here appears there).
 *
 * Precedence: compiled default < environment. A malformed or out-of-bounds value is an
 * error naming the variable, the value and the accepted range; the caller decides whether
 * to fall back to the default (ranks do, and say so once) or to refuse (argus-run does).
 */
#ifndef ARGUS_COMMON_CONFIG_H
#define ARGUS_COMMON_CONFIG_H

#include <stddef.h>
#include <stdio.h>

/* X(NAME, field, type, default, min, max, help)
 * type: BOOL (0/1, on/off, yes/no, true/false), INT (decimal, bounds inclusive),
 *       DOUBLE (bounds inclusive), STR (any, max 4095 bytes), MODE (off|on),
 *       LEVEL (error|warn|info|debug), PHASEMAP (a STR of 'substring:phase' rules, see
 *       ARGUS_PHASE_MAP_RULES). */
#define ARGUS_CONFIG_TABLE(X)                                                             \
    X(ARGUS_MODE, mode, MODE, "off", 0, 0,                                                \
      "off: libargus stays inert; on: summarise and diagnose")                            \
    X(ARGUS_OUTDIR, outdir, STR, ".", 0, 0,                                               \
      "directory under which argus-<jobid>/ is created")                                  \
    X(ARGUS_JOBID, jobid, STR, "", 0, 0,                                                  \
      "job id for the output directory (default: SLURM_JOB_ID, Open MPI's job id, "        \
      "else a timestamp and pid)")                                                        \
    X(ARGUS_WINDOW, window, INT, "10", 1, 10000,                                          \
      "steps per reduction window (summaries travel to rank 0 once per window)")          \
    X(ARGUS_FANIN, fanin, INT, "4", 2, 1024, "fan-in of the reduction tree")              \
    X(ARGUS_CONDENSE, condense, INT, "96", 0, 16777216,                                   \
      "in jobs of more ranks than this the tree forwards window aggregates and full "     \
      "summaries of reference and extreme ranks only (0: always)")                        \
    X(ARGUS_DEADLINE_MS, deadline_ms, INT, "2000", 10, 600000,                            \
      "per-window, per-tree-level wait for a child rank before it is marked missing")     \
    X(ARGUS_SILENCE_MS, silence_ms, INT, "500", 100, 600000,                              \
      "a child rank heard from not at all (its sign of life goes every eighth of this) "   \
      "for this long is marked missing, windows due or not")                              \
    X(ARGUS_FINALIZE_MS, finalize_ms, INT, "10000", 100, 600000,                          \
      "longest time MPI_Finalize waits for Argus's last exchange and report")             \
    X(ARGUS_CLOCK_SYNC_MS, clock_sync_ms, INT, "10000", 0, 3600000,                       \
      "how often each rank re-measures its clock offset to rank 0 (drift); 0: at start only") \
    X(ARGUS_MAX_EVENTS, max_events, INT, "262144", 1024, 16777216,                        \
      "kernel events buffered per rank per step (more are counted as dropped)")           \
    X(ARGUS_SPOOL, spool, BOOL, "1", 0, 1,                                                \
      "rank 0 keeps every summary in summaries.argus (zstd) for argus-analyze")           \
    X(ARGUS_SPOOL_MAX, spool_max, INT, "1024", 0, 1048576,                                \
      "MiB rank 0's spool may take: past it older steps are thinned, then dropped, "      \
      "oldest first (0: unbounded)")                                                      \
    X(ARGUS_LOG, log, LEVEL, "warn", 0, 0, "log level: error, warn, info or debug")       \
    X(ARGUS_RATIO, ratio, DOUBLE, "1.15", 1.01, 100.0,                                    \
      "smallest slowdown (x peers or x baseline) reported as an anomaly")                 \
    X(ARGUS_TOTAL_STEPS, total_steps, INT, "0", 0, 1099511627776,                         \
      "the job's planned training steps, for the forecast's time to train (0: unknown; "   \
      "argus_set_total_steps() from the program wins)")                                   \
    X(ARGUS_CUPTI, cupti, BOOL, "1", 0, 1,                                                \
      "collect GPU activity through CUPTI when injected (CUDA_INJECTION64_PATH)")         \
    X(ARGUS_CUPTI_BUF_KB, cupti_buf_kb, INT, "4096", 64, 262144,                          \
      "size of each preallocated CUPTI activity buffer, KiB")                            \
    X(ARGUS_CUPTI_BUFS, cupti_bufs, INT, "8", 2, 1024,                                    \
      "number of preallocated CUPTI activity buffers")                                    \
    X(ARGUS_GRAPH_TRACE, graph_trace, BOOL, "0", 0, 1,                                    \
      "also record one GRAPH_TRACE activity per CUDA-graph launch")                       \
    X(ARGUS_PHASE_MAP, phase_map, PHASEMAP, "", 0, 0,                                     \
      "extra NVTX range -> phase rules, 'substring:phase,...', tried before the defaults") \
    X(ARGUS_STEP_RANGE, step_range, STR, "ProfilerStep#", 0, 0,                           \
      "name prefix of the NVTX range that marks a training step")                         \
    X(ARGUS_STEP_DETECT, step_detect, BOOL, "1", 0, 1,                                    \
      "find steps by period detection when nothing marks them")                          \
    X(ARGUS_PERIOD_MAX, period_max, INT, "65536", 16, 1048576,                            \
      "longest step (kernels) that period detection looks for")                           \
    X(ARGUS_RING_EVENTS, ring_events, INT, "196608", 0, 16777216,                         \
      "raw kernel events kept per rank for L4 trace dumps (0: no ring)")                  \
    X(ARGUS_RING_STEPS, ring_steps, INT, "3", 1, 1000,                                    \
      "most recent steps an L4 trace dump shows")                                         \
    X(ARGUS_TRACES, traces, INT, "8", 0, 64,                                              \
      "L4: aligned raw traces rank 0 collects per job, one per anomaly (0: none)")        \
    X(ARGUS_TRACE_EVENTS, trace_events, INT, "65536", 1000, 4194304,                      \
      "L4: most kernel events one rank contributes to one trace (the newest)")            \
    X(ARGUS_COVERAGE, coverage, DOUBLE, "0.97", 0.5, 1.0,                                \
      "share of a step's kernel time kept as per-mode records (every collective always); " \
      "the rest folds into one [other] record per class; 1 keeps every mode")             \
    X(ARGUS_MPI_SELF_INIT, mpi_self_init, BOOL, "1", 0, 1,                                \
      "under mpirun/srun --mpi, initialise MPI on Argus's thread when the program never " \
      "calls MPI_Init (PyTorch with NCCL), so its summaries still reach rank 0")          \
    X(ARGUS_MPI_SELF_INIT_MS, mpi_self_init_ms, INT, "2000", 0, 600000,                   \
      "how long after the program starts Argus waits for its own MPI_Init first")         \
    X(ARGUS_STACKS, stacks, MODE, "on", 0, 0,                                             \
      "host call stacks of a stalled step loop (in process, no ptrace); off: none")       \
    X(ARGUS_STACKS_MIN_MS, stacks_min_ms, INT, "200", 10, 600000,                         \
      "a stall: no mark for this long (and 2x the median step); argus-analyze: a Python " \
      "call this long inside one step")

enum argus_mode { ARGUS_MODE_OFF = 0, ARGUS_MODE_ON = 1 };

/* ARGUS_PHASE_MAP: comma-separated rules 'substring:phase' (a trailing comma is allowed),
 * the substring 1 to ARGUS_PHASE_MAP_SUB_MAX - 1 bytes without ',' or ':', the phase one
 * of forward, backward, optimizer, comm, host, other (any case), at most
 * ARGUS_PHASE_MAP_RULES rules. tracer/nvtx_map.c applies the rules; this is their grammar. */
#define ARGUS_PHASE_MAP_RULES 32
#define ARGUS_PHASE_MAP_SUB_MAX 48

#define ARGUS_CONFIG_STR_MAX 4096

struct argus_config {
    int mode;     /* enum argus_mode */
    char outdir[ARGUS_CONFIG_STR_MAX];
    char jobid[256];
    long window;
    long fanin;
    long condense;
    long deadline_ms;
    long silence_ms;
    long finalize_ms;
    long clock_sync_ms;
    long max_events;
    int spool;
    long spool_max; /* MiB */
    int log;      /* enum argus_log_level */
    double ratio;
    long total_steps; /* 0: unknown */
    int cupti;
    long cupti_buf_kb;
    long cupti_bufs;
    int graph_trace;
    char phase_map[1024];
    char step_range[64];
    int step_detect;
    long period_max;
    long ring_events;
    long ring_steps;
    long traces;
    long trace_events;
    double coverage;
    int mpi_self_init;
    long mpi_self_init_ms;
    int stacks;          /* enum argus_mode: host call stacks (tracer/hoststack.h) */
    long stacks_min_ms;  /* the stall threshold */
};

/* One row of the table, for printing and documentation. */
struct argus_config_var {
    const char *name, *type, *def, *help;
    double min, max;
};
extern const struct argus_config_var argus_config_vars[];
extern const size_t argus_config_nvars;

/* Fill with compiled defaults. */
void argus_config_defaults(struct argus_config *c);

/* Lookup function: returns the value of a variable or NULL; getenv fits (same type), and
 * NULL means getenv too. The returned string is only read, never written or freed. */
typedef char *(*argus_env_lookup_fn)(const char *name);

/* Read every variable through lookup into c (starting from defaults). A bad value leaves
 * its field at the default; the remaining variables are still read. Returns 0, or
 * -EINVAL with errbuf naming every bad value, in table order, joined by "; "
 * ("ARGUS_WINDOW=abc: not an integer in [1, 10000]; ARGUS_FANIN=1: not an integer in
 * [2, 1024]"), cut to errlen. */
int argus_config_load(struct argus_config *c, argus_env_lookup_fn lookup, char *errbuf,
                      size_t errlen);

/* Validate a single NAME=value; 0 or -EINVAL (errbuf), -ENOENT for an unknown ARGUS_ name. */
int argus_config_check(const char *name, const char *value, char *errbuf, size_t errlen);

/* Print the effective configuration, one "NAME=value" line each. */
void argus_config_print(const struct argus_config *c, FILE *out);

/* Job id: ARGUS_JOBID if set (c->jobid when c is given, else looked up), else SLURM_JOB_ID,
 * else OMPI_MCA_ess_base_jobid, else PMIX_NAMESPACE sanitised, else
 * "<YYYYmmddTHHMMSS>-<pid>". Only [A-Za-z0-9._-] survive (others become '_'). c and lookup
 * may be NULL (lookup NULL: getenv). */
void argus_config_jobid(const struct argus_config *c, argus_env_lookup_fn lookup,
                        char *buf, size_t len);

#endif /* ARGUS_COMMON_CONFIG_H */
