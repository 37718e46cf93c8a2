/* argus_run.c — argus-run: run an MPI launcher (or any command) with Argus's environment
 * contract set, for sites without the SPANK plugin:
 *     argus-run [options] -- mpirun -np 16 ./train
 * It prepends libargus_preload.so to LD_PRELOAD (the small shim, reduce/preload_shim.c, that
 * loads libargus.so in the ranks only and nothing in their children; libargus.so itself
 * when the shim is not installed), sets CUDA_INJECTION64_PATH to libargus.so (unless the
 * user already has a CUDA injection, which is kept), NCCL_PROFILER_PLUGIN to Argus's NCCL
 * profiler plugin (a user's own plugin moves to ARGUS_NCCL_PROFILER_CHAIN, and Argus's
 * plugin passes every call on to it) and ARGUS_*, then execs the command.
 * For Open MPI launchers it also adds `-x VAR` so ranks on other nodes get the same
 * contract. The library paths are fixed at build time (ARGUS_LIBARGUS_PATH,
 * ARGUS_PRELOAD_PATH, ARGUS_NCCL_PLUGIN_PATH), never taken from input.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "config.h"

#ifndef ARGUS_LIBARGUS_PATH
#error "ARGUS_LIBARGUS_PATH must be defined by the build"
#endif
#ifndef ARGUS_PRELOAD_PATH
#error "ARGUS_PRELOAD_PATH must be defined by the build"
#endif

#define PROG "argus-run"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: " PROG " [options] -- COMMAND [ARGS...]\n"
            "Run COMMAND (mpirun, srun, or a single program) with Argus tracing every rank.\n"
            "\n"
            "Options:\n"
            "  -o, --outdir DIR     write argus-<jobid>/ under DIR (default: current directory)\n"
            "  -w, --window N       steps per reduction window (default 10)\n"
            "  -m, --mode MODE      on (default) or off\n"
            "  -l, --log LEVEL      error, warn (default), info or debug\n"
            "      --print-config   print the effective ARGUS_* configuration and exit\n"
            "  -h, --help           this text\n"
            "  -V, --version        print the version\n"
            "\n"
            "Library: %s (preloaded through %s)\n"
            "Every ARGUS_* variable is documented in argus.conf (installed in sysconfdir).\n",
            ARGUS_LIBARGUS_PATH, ARGUS_PRELOAD_PATH);
}

/* Validate NAME=value against the environment table; 0, or -1 after one line naming it. */
static int check_one(const char *name, const char *value)
{
    char err[512];

    if (argus_config_check(name, value, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    return 0;
}

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, PROG ": cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* The ranks may start in another directory: DIR made absolute (it need not exist yet),
 * in a new string (free it), or NULL. */
static char *absolute_dir(const char *dir)
{
    char *cwd, *out = NULL;

    if (dir[0] == '/')
        return strdup(dir);
    cwd = getcwd(NULL, 0);
    if (!cwd || asprintf(&out, "%s/%s", cwd, dir) < 0)
        out = NULL;
    free(cwd);
    return out;
}

/* LD_PRELOAD elements are separated by colons or spaces (ld.so(8)). */
#define SEPS ": "

static int preload_has(const char *list, const char *lib)
{
    const size_t ll = strlen(lib);

    for (const char *c = list; *c;) {
        const size_t n = strcspn(c, SEPS);
        if (n == ll && strncmp(c, lib, n) == 0)
            return 1;
        c += n;
        c += strspn(c, SEPS);
    }
    return 0;
}

/* Put lib in front of LD_PRELOAD unless it is already an element; the user's own list
 * follows unchanged, whatever its length. 0 or -1. */
static int prepend_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *buf = NULL;
    int rc;

    if (old && preload_has(old, lib))
        return 0;
    if (old && *old)
        rc = asprintf(&buf, "%s:%s", lib, old) < 0 ? -1 : 0;
    else
        rc = (buf = strdup(lib)) ? 0 : -1;
    if (rc == 0)
        rc = setenv("LD_PRELOAD", buf, 1);
    free(buf);
    return rc;
}

#ifdef ARGUS_NCCL_PLUGIN_PATH
/* NCCL_PROFILER_PLUGIN: Argus's plugin when installed; a user's own (NCCL's Inspector, a
 * site plugin) becomes the chain target that Argus's plugin loads and calls through, so
 * it keeps seeing every event. 0 or -1. */
static int set_nccl_plugin(void)
{
    if (access(ARGUS_NCCL_PLUGIN_PATH, R_OK) != 0)
        return 0; /* an older install: the slot stays as it is */
    const char *old = getenv("NCCL_PROFILER_PLUGIN");
    if (old && *old && strcmp(old, ARGUS_NCCL_PLUGIN_PATH) != 0 &&
        set_env("ARGUS_NCCL_PROFILER_CHAIN", old) != 0)
        return -1;
    return set_env("NCCL_PROFILER_PLUGIN", ARGUS_NCCL_PLUGIN_PATH);
}
#endif

static int is_openmpi_launcher(const char *cmd)
{
    const char *base = strrchr(cmd, '/');

    base = base ? base + 1 : cmd;
    return strcmp(base, "mpirun") == 0 || strcmp(base, "mpiexec") == 0 ||
           strcmp(base, "orterun") == 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"outdir", required_argument, NULL, 'o'}, {"window", required_argument, NULL, 'w'},
        {"mode", required_argument, NULL, 'm'},   {"log", required_argument, NULL, 'l'},
        {"print-config", no_argument, NULL, 'P'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL, *window = NULL, *mode = "on", *log = NULL;
    int print_config = 0, c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "+o:w:m:l:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'w': window = optarg; break;
        case 'm': mode = optarg; break;
        case 'l': log = optarg; break;
        case 'P': print_config = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf(PROG " (Argus) %s\n", PACKAGE_VERSION); return 0;
        case '?':
        default:
            if (optopt)
                fprintf(stderr, PROG ": option -%c needs a value or is unknown; see --help\n",
                        optopt);
            else
                fprintf(stderr, PROG ": unknown option '%s'; see --help\n", argv[optind - 1]);
            return 2;
        }
    }

    /* Everything the user exported must be valid, and so must every option: name every
     * bad one (one line each), then refuse before the job starts. */
    int bad = 0;
    for (size_t i = 0; i < argus_config_nvars; i++) {
        const char *v = getenv(argus_config_vars[i].name);
        if (v && check_one(argus_config_vars[i].name, v) != 0)
            bad++;
    }
    if (check_one("ARGUS_MODE", mode) != 0)
        bad++;
    if (window && check_one("ARGUS_WINDOW", window) != 0)
        bad++;
    if (log && check_one("ARGUS_LOG", log) != 0)
        bad++;
    char *abs = NULL;
    if (outdir) {
        abs = *outdir ? absolute_dir(outdir) : NULL;
        if (!abs) {
            fprintf(stderr, PROG ": --outdir '%s': not a usable path\n", outdir);
            bad++;
        } else if (check_one("ARGUS_OUTDIR", abs) != 0) {
            bad++;
        }
    }
    if (bad) {
        if (bad > 1)
            fprintf(stderr, PROG ": %d bad settings; nothing was started\n", bad);
        free(abs);
        return 2;
    }
    /* The options replace what the environment says (--mode always: its default is on). */
    if (set_env("ARGUS_MODE", mode) != 0 || (window && set_env("ARGUS_WINDOW", window) != 0) ||
        (log && set_env("ARGUS_LOG", log) != 0) || (abs && set_env("ARGUS_OUTDIR", abs) != 0))
        return 2;
    free(abs);
    if (!getenv("ARGUS_OUTDIR")) {
        char *cwd = getcwd(NULL, 0);
        if (cwd && check_one("ARGUS_OUTDIR", cwd) == 0)
            setenv("ARGUS_OUTDIR", cwd, 1);
        free(cwd);
    }

    /* What the ranks will see. */
    struct argus_config cfg;
    char err[512];
    if (argus_config_load(&cfg, getenv, err, sizeof err) != 0) { /* checked above */
        fprintf(stderr, PROG ": %s\n", err);
        return 2;
    }
    if (print_config) {
        argus_config_print(&cfg, stdout);
        return 0;
    }
    if (optind >= argc) {
        fprintf(stderr, PROG ": no command given; usage: " PROG " [options] -- mpirun ...\n");
        return 2;
    }
    if (access(ARGUS_LIBARGUS_PATH, R_OK) != 0) {
        fprintf(stderr, PROG ": %s: %s (is Argus installed? run 'make install')\n",
                ARGUS_LIBARGUS_PATH, strerror(errno));
        return 2;
    }
    /* The shim when installed, else (an older install) the whole library. */
    const char *pre = access(ARGUS_PRELOAD_PATH, R_OK) == 0 ? ARGUS_PRELOAD_PATH
                                                              : ARGUS_LIBARGUS_PATH;
    if (prepend_preload(pre) != 0) {
        fprintf(stderr, PROG ": cannot set LD_PRELOAD: %s\n", strerror(errno));
        return 2;
    }
#ifdef ARGUS_TESTKNOBS_PATH
    /* tests/argus-run-build only: the test knobs (reduce/testknob.h) come with it. */
    if (access(ARGUS_TESTKNOBS_PATH, R_OK) == 0 && prepend_preload(ARGUS_TESTKNOBS_PATH) != 0) {
        fprintf(stderr, PROG ": cannot set LD_PRELOAD: %s\n", strerror(errno));
        return 2;
    }
#endif
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj && strcmp(inj, ARGUS_LIBARGUS_PATH) != 0)
        fprintf(stderr, PROG ": CUDA_INJECTION64_PATH is already %s; Argus stands aside for "
                "CUDA injection (MPI-level summaries still run)\n", inj);
    else
        setenv("CUDA_INJECTION64_PATH", ARGUS_LIBARGUS_PATH, 1);
#ifdef ARGUS_NCCL_PLUGIN_PATH
    if (set_nccl_plugin() != 0)
        return 2;
#endif

    /* Build the command line; Open MPI launchers get -x for each variable. */
    static const char *const forward[] = {"LD_PRELOAD", "CUDA_INJECTION64_PATH", NULL};
    static const char *const forward_set[] = {"NCCL_PROFILER_PLUGIN",
                                              "ARGUS_NCCL_PROFILER_CHAIN", NULL};
    size_t extra = 0;
    int ompi = is_openmpi_launcher(argv[optind]);
    if (ompi) {
        extra = 2 * (2 + 2 + argus_config_nvars);
    }
    char **cmd = calloc((size_t)(argc - optind) + extra + 1, sizeof *cmd);
    if (!cmd) {
        fprintf(stderr, PROG ": out of memory\n");
        return 2;
    }
    size_t n = 0;
    cmd[n++] = argv[optind];
    if (ompi) {
        for (size_t i = 0; forward[i]; i++) {
            cmd[n++] = "-x";
            cmd[n++] = (char *)forward[i];
        }
        for (size_t i = 0; forward_set[i]; i++) { /* only those set */
            if (getenv(forward_set[i])) {
                cmd[n++] = "-x";
                cmd[n++] = (char *)forward_set[i];
            }
        }
        for (size_t i = 0; i < argus_config_nvars; i++) {
            if (getenv(argus_config_vars[i].name)) {
                cmd[n++] = "-x";
                cmd[n++] = (char *)argus_config_vars[i].name;
            }
        }
    }
    for (int i = optind + 1; i < argc; i++)
        cmd[n++] = argv[i];
    cmd[n] = NULL;
    execvp(cmd[0], cmd);
    fprintf(stderr, PROG ": cannot run %s: %s\n", cmd[0], strerror(errno));
    free(cmd);
    return 127;
}
