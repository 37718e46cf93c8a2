/* argus_run.c — argus-run: run an MPI launcher (or any command) with Argus's environment
 * contract set, for sites without the SPANK plugin:
 *     argus-run [options] -- mpirun -np 16 ./train
 * It prepends libargus.so to LD_PRELOAD, sets CUDA_INJECTION64_PATH (unless the user
 * already has a CUDA injection, which is kept) and ARGUS_*, then execs the command. For
 * Open MPI launchers it also adds `-x VAR` so ranks on other nodes get the same contract.
 * The library path is fixed at build time (ARGUS_LIBARGUS_PATH), never taken from input.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "config.h"

#ifndef ARGUS_LIBARGUS_PATH
#error "ARGUS_LIBARGUS_PATH must be defined by the build"
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
            "Library: %s\n"
            "Every ARGUS_* variable is documented in argus.conf (installed in sysconfdir).\n",
            ARGUS_LIBARGUS_PATH);
}

/* Set NAME=value after validating it against the environment table. */
static int set_checked(const char *name, const char *value)
{
    char err[512];

    if (argus_config_check(name, value, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, PROG ": cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* The ranks may start in another directory: make DIR absolute (it need not exist yet). */
static int absolute_dir(const char *dir, char *out, size_t len)
{
    char cwd[PATH_MAX];

    if (dir[0] == '/') {
        if (snprintf(out, len, "%s", dir) >= (int)len)
            return -1;
        return 0;
    }
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    if (snprintf(out, len, "%s/%s", cwd, dir) >= (int)len)
        return -1;
    return 0;
}

static int prepend_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char buf[8192];

    if (old && strstr(old, lib))
        return 0; /* already there */
    if (old && *old)
        snprintf(buf, sizeof buf, "%s:%s", lib, old);
    else
        snprintf(buf, sizeof buf, "%s", lib);
    return setenv("LD_PRELOAD", buf, 1);
}

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

    if (set_checked("ARGUS_MODE", mode) != 0)
        return 2;
    if (window && set_checked("ARGUS_WINDOW", window) != 0)
        return 2;
    if (log && set_checked("ARGUS_LOG", log) != 0)
        return 2;
    if (outdir) {
        char abs[PATH_MAX];
        if (!*outdir || absolute_dir(outdir, abs, sizeof abs) != 0) {
            fprintf(stderr, PROG ": --outdir '%s': not a usable path\n", outdir);
            return 2;
        }
        if (set_checked("ARGUS_OUTDIR", abs) != 0)
            return 2;
    } else if (!getenv("ARGUS_OUTDIR")) {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd))
            setenv("ARGUS_OUTDIR", cwd, 1);
    }

    /* Everything else the user exported must be valid too: fail before the job starts. */
    struct argus_config cfg;
    char err[512];
    argus_config_defaults(&cfg);
    if (argus_config_load(&cfg, getenv, err, sizeof err) != 0) {
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
    if (prepend_preload(ARGUS_LIBARGUS_PATH) != 0) {
        fprintf(stderr, PROG ": cannot set LD_PRELOAD\n");
        return 2;
    }
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj && strcmp(inj, ARGUS_LIBARGUS_PATH) != 0)
        fprintf(stderr, PROG ": CUDA_INJECTION64_PATH is already %s; Argus stands aside for "
                "CUDA injection (MPI-level summaries still run)\n", inj);
    else
        setenv("CUDA_INJECTION64_PATH", ARGUS_LIBARGUS_PATH, 1);

    /* Build the command line; Open MPI launchers get -x for each variable. */
    static const char *const forward[] = {"LD_PRELOAD", "CUDA_INJECTION64_PATH", NULL};
    size_t extra = 0;
    int ompi = is_openmpi_launcher(argv[optind]);
    if (ompi) {
        extra = 2 * (2 + argus_config_nvars);
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
