/* test_spank.c — cmocka tests of the SPANK plugin's callbacks (spank/) against the
 * fake spank_* layer (fake_spank.c): option validation and refusal on the submit side,
 * environment injection in task_init, the batch/extern step rules, stripping a leaked
 * batch contract for --argus=off, and failing open (bad arguments, missing library).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spank/plugin.h"
#include "tests/spank/fake_spank.h"

static char libdir[256], libpath[300], arg_libdir[300];

static int setup(void **state)
{
    FILE *f;

    (void)state;
    snprintf(libdir, sizeof libdir, "%s/argus-spank-XXXXXX", getenv("TMPDIR") ?
             getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(libdir))
        return -1;
    snprintf(libpath, sizeof libpath, "%s/libargus.so", libdir);
    snprintf(arg_libdir, sizeof arg_libdir, "libdir=%s", libdir);
    f = fopen(libpath, "w");
    if (!f)
        return -1;
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(libpath);
    rmdir(libdir);
    fake_reset(S_CTX_ERROR);
    return 0;
}

/* Run slurm_spank_init in ctx with the given plugstack words (libdir= added first). */
static int init(spank_context_t ctx, int n, ...)
{
    char *av[16];
    va_list ap;
    int ac = 0;

    fake_reset(ctx);
    av[ac++] = arg_libdir;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        av[ac++] = va_arg(ap, char *);
    va_end(ap);
    return slurm_spank_init(NULL, ac, av);
}

static void test_register_everywhere(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 0), 0);
    assert_int_equal(fake.registered, 1);
    assert_int_equal(init(S_CTX_ALLOCATOR, 0), 0);
    assert_int_equal(fake.registered, 1);
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    assert_int_equal(fake.registered, 1);
    assert_int_equal(init(S_CTX_SLURMD, 0), 0);
    assert_int_equal(fake.registered, 0);
    assert_string_equal(argus_spank_option.name, "argus");
    assert_int_equal(argus_spank_option.has_arg, 2);
    assert_non_null(argus_spank_option.usage);
}

static void test_option_validation(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "bogus", 0), -1);
    assert_int_equal(fake_log_count("argus: --argus=bogus: expected on or off"), 1);
    /* remote: never fails (Slurm only logs there) */
    assert_int_equal(argus_spank_option_cb(0, "bogus", 1), 0);
    /* idempotent: Slurm may call twice */
    assert_int_equal(argus_spank_option_cb(0, "on", 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 0), 0);
    assert_int_equal(argus_spank_g.requested, ARGUS_MODE_ON);
    assert_int_equal(argus_spank_option_cb(0, NULL, 0), 0); /* bare --argus */
    assert_int_equal(argus_spank_g.requested, ARGUS_MODE_ON);
}

/* full is no mode: refused on the submit side like any other bad value (one line, srun
 * stops), ignored with one line through ARGUS, and allow_full= is an unknown key. */
static void test_full_refused(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 1, "default=on"), 0);
    assert_int_equal(argus_spank_option_cb(0, "full", 0), -1);
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("argus: --argus=full: expected on or off"), 1);
    assert_int_equal(argus_spank_g.requested, ARGUS_REQ_NONE);
    assert_int_equal(argus_spank_option_cb(0, "full", 1), 0); /* remote: never fails */
    assert_int_equal(argus_spank_g.requested, ARGUS_REQ_NONE);

    assert_int_equal(init(S_CTX_LOCAL, 1, "default=on"), 0);
    assert_int_equal(setenv("ARGUS", "full", 1), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    unsetenv("ARGUS");
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("argus: ARGUS=full ignored: expected on or off"), 1);

    /* remote, ARGUS=full: ignored, the site's default decides */
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake_setenv("ARGUS", "full");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    fake_setenv("ARGUS", "full");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));

    /* allow_full=yes in plugstack.conf: one line, Argus off, the job runs */
    assert_int_equal(init(S_CTX_LOCAL, 1, "allow_full=yes"), 0);
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("unknown key 'allow_full'"), 1);
    assert_int_equal(argus_spank_option_cb(0, "on", 0), 0);
    assert_int_equal(init(S_CTX_REMOTE, 1, "allow_full=yes"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
    assert_null(fake_getenv("LD_PRELOAD"));
}

/* Site policy (argus(8), enforce=): an --argus value that contradicts enforce= is refused
 * on the submit side with one line that says so (never "Argus stays on": nothing runs);
 * through ARGUS it is ignored with one line saying what stays, and the job runs. */
static void test_enforce_refusal(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 2, "default=on", "enforce=on"), 0);
    assert_int_equal(argus_spank_option_cb(0, "off", 0), -1);
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("argus: --argus=off refused: this site runs Argus on "
                                    "every job (plugstack.conf enforce=on); nothing was "
                                    "submitted (submit without --argus=off)"), 1);
    assert_int_equal(fake_log_count("stays on"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "OFF", 0), -1); /* any case, same decision */
    assert_int_equal(init(S_CTX_ALLOCATOR, 1, "enforce=off"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 0), -1);
    assert_int_equal(fake_log_count("argus: --argus=on refused: Argus is disabled on this site "
                                    "(plugstack.conf enforce=off)"), 1);
    assert_int_equal(argus_spank_option_cb(0, NULL, 0), -1); /* bare --argus is on */
    assert_int_equal(fake_log_count("argus: --argus refused: "), 1);
    /* ARGUS=off under enforce=on: ignored in one line, the job goes on with Argus */
    assert_int_equal(init(S_CTX_LOCAL, 2, "default=on", "enforce=on"), 0);
    assert_int_equal(setenv("ARGUS", "off", 1), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    unsetenv("ARGUS");
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("argus: ARGUS=off ignored: this site runs Argus on every "
                                    "job (plugstack.conf enforce=on); Argus stays on"), 1);
}

/* --argus=ON is what ARGUS_MODE=ON is: on (and OFF off), on both sides. */
static void test_option_any_case(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "ON", 0), 0);
    assert_int_equal(argus_spank_g.requested, ARGUS_MODE_ON);
    assert_int_equal(argus_spank_option_cb(0, "Off", 0), 0);
    assert_int_equal(argus_spank_g.requested, ARGUS_MODE_OFF);
    assert_int_equal(fake_log_count("spank_log: argus: "), 0);
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "ON", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
}

static void test_bad_plugstack_fails_open(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_LOCAL, 1, "colour=blue"), 0);
    assert_int_equal(fake_log_count("spank_log: argus: "), 1);
    assert_int_equal(fake_log_count("unknown key 'colour'"), 1);
    /* the option still parses, nothing is refused */
    assert_int_equal(argus_spank_option_cb(0, "on", 0), 0);
    assert_int_equal(slurm_spank_init_post_opt(NULL, 0, NULL), 0);
    /* remote: nothing is injected, nothing is shown to the user */
    assert_int_equal(init(S_CTX_REMOTE, 1, "colour=blue"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
    assert_null(fake_getenv("LD_PRELOAD"));
    assert_int_equal(fake_log_count("spank_log"), 0);
}

static void test_version_check(void **state)
{
    (void)state;
    fake_reset(S_CTX_LOCAL);
    assert_int_equal(init(S_CTX_LOCAL, 0), 0);
    assert_int_equal(fake_log_count("spank_log"), 0);
    fake.major = "23";
    fake.minor = "02";
    char *av[] = {arg_libdir};
    assert_int_equal(slurm_spank_init(NULL, 1, av), 0);
    assert_int_equal(fake_log_count("runs under Slurm 23.02; rebuild"), 1);
}

static void test_inject(void **state)
{
    char want[600];

    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, 2, "outdir=/scratch/%u/%x", "window=25"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 1), 0);
    fake_setenv("LD_PRELOAD", "/u/mine.so");
    fake_setenv("SLURM_JOB_NAME", "train");
    fake.gtask = 5;
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    snprintf(want, sizeof want, "%s:/u/mine.so", libpath);
    assert_string_equal(fake_getenv("LD_PRELOAD"), want);
    assert_string_equal(fake_getenv("CUDA_INJECTION64_PATH"), libpath);
    assert_string_equal(fake_getenv("NVTX_INJECTION64_PATH"), libpath);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
    assert_string_equal(fake_getenv("ARGUS_JOBID"), "42.3");
    assert_string_equal(fake_getenv("ARGUS_OUTDIR"), "/scratch/root/train");
    assert_string_equal(fake_getenv("ARGUS_WINDOW"), "25");
    /* a second task_init on the same environment does not double the preload */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("LD_PRELOAD"), want);
    assert_null(fake_getenv("ARGUS_SPOOL_MAX")); /* no site cap: nothing set */
}

/* The site's spool_max= caps ARGUS_SPOOL_MAX in every task; a user may lower it only. */
static void test_site_spool_cap(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, 1, "spool_max=256"), 0);
    assert_int_equal(argus_spank_option_cb(0, "on", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_SPOOL_MAX"), "256");
    fake_setenv("ARGUS_SPOOL_MAX", "100000");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_SPOOL_MAX"), "256");
    fake_setenv("ARGUS_SPOOL_MAX", "0");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_SPOOL_MAX"), "256");
    fake_setenv("ARGUS_SPOOL_MAX", "16");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_SPOOL_MAX"), "16");
}

static void test_default_outdir_and_off(void **state)
{
    char cwd[256];

    (void)state;
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_OUTDIR"), cwd);
    /* default=off, no option: nothing */
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
    /* the ARGUS variable stands in for the option (slurmrestd) */
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    fake_setenv("ARGUS", "on");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
}

static void test_user_cuda_injection_kept(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake_setenv("CUDA_INJECTION64_PATH", "/u/nsys.so");
    fake.gtask = 1; /* not task 0: quiet */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("CUDA_INJECTION64_PATH"), "/u/nsys.so");
    assert_string_equal(fake_getenv("NVTX_INJECTION64_PATH"), libpath);
    assert_int_equal(fake_log_count("stands aside"), 1); /* daemon log only */
}

static void test_batch_and_special_steps(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake.stepid = 0xfffffffbu; /* batch: carries the contract for mpirun inside */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_JOBID"), "42.batch");
    assert_string_equal(fake_getenv("LD_PRELOAD"), libpath);
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake.stepid = 0xfffffffcu; /* extern */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
    fake.stepid = 0xfffffffau; /* interactive */
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
}

/* NCCL_PROFILER_PLUGIN names Argus's plugin where it is installed; a user's own plugin is
 * kept as the chain target (ARGUS_NCCL_PROFILER_CHAIN) and given back by --argus=off. */
static void test_nccl_profiler_plugin(void **state)
{
    char nccl[320];

    (void)state;
    snprintf(nccl, sizeof nccl, "%s/libargus_nccl.so", libdir);
    /* not installed: the slot is left alone */
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake_setenv("NCCL_PROFILER_PLUGIN", "inspector");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("NCCL_PROFILER_PLUGIN"), "inspector");
    assert_null(fake_getenv("ARGUS_NCCL_PROFILER_CHAIN"));
    FILE *f = fopen(nccl, "w");
    assert_non_null(f);
    fclose(f);
    /* installed: ours in the slot, the user's as the chain target, twice the same */
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    fake_setenv("NCCL_PROFILER_PLUGIN", "inspector");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("NCCL_PROFILER_PLUGIN"), nccl);
    assert_string_equal(fake_getenv("ARGUS_NCCL_PROFILER_CHAIN"), "inspector");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("NCCL_PROFILER_PLUGIN"), nccl);
    assert_string_equal(fake_getenv("ARGUS_NCCL_PROFILER_CHAIN"), "inspector");
    /* --argus=off inside: the user's plugin back in the slot */
    assert_int_equal(argus_spank_option_cb(0, "off", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("NCCL_PROFILER_PLUGIN"), "inspector");
    assert_null(fake_getenv("ARGUS_NCCL_PROFILER_CHAIN"));
    /* no plugin of the user's: ours alone, and off empties the slot again */
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("NCCL_PROFILER_PLUGIN"), nccl);
    assert_null(fake_getenv("ARGUS_NCCL_PROFILER_CHAIN"));
    assert_int_equal(argus_spank_option_cb(0, "off", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("NCCL_PROFILER_PLUGIN"));
    unlink(nccl);
}

/* srun --argus=off inside sbatch --argus=on: the batch step's contract must not leak. */
static void test_off_strips_leaked_contract(void **state)
{
    (void)state;
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    assert_int_equal(argus_spank_option_cb(0, "off", 1), 0);
    char pre[600];
    snprintf(pre, sizeof pre, "%s:/u/mine.so", libpath);
    fake_setenv("LD_PRELOAD", pre);
    fake_setenv("CUDA_INJECTION64_PATH", libpath);
    fake_setenv("NVTX_INJECTION64_PATH", "/u/own-nvtx.so");
    fake_setenv("ARGUS_MODE", "on");
    fake_setenv("ARGUS_JOBID", "42.batch");
    fake_setenv("ARGUS_OUTDIR", "/x");
    fake_setenv("ARGUS_WINDOW", "5");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("LD_PRELOAD"), "/u/mine.so");
    assert_null(fake_getenv("CUDA_INJECTION64_PATH"));
    assert_string_equal(fake_getenv("NVTX_INJECTION64_PATH"), "/u/own-nvtx.so");
    assert_null(fake_getenv("ARGUS_MODE"));
    assert_null(fake_getenv("ARGUS_JOBID"));
    assert_null(fake_getenv("ARGUS_OUTDIR"));
    assert_null(fake_getenv("ARGUS_WINDOW"));
    /* a plain step under default=off leaves a user's own argus-run contract alone */
    assert_int_equal(init(S_CTX_REMOTE, 0), 0);
    fake_setenv("ARGUS_MODE", "on");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
}

/* A user's LD_PRELOAD and job name of any length survive whole: 20 KB of preloads
 * follow libargus.so intact, and --argus=off takes out only libargus.so. */
static void test_long_preload_kept(void **state)
{
    enum { N = 20480 };
    char *pre = malloc(N + 1), *want = malloc(N + 400), *name = malloc(N + 1);
    (void)state;
    assert_non_null(pre);
    assert_non_null(want);
    assert_non_null(name);
    size_t n = 0;
    for (int i = 0; n + 40 < N; i++)
        n += (size_t)snprintf(pre + n, N + 1 - n, "%s/opt/lib%05d/libmine.so", i ? ":" : "", i);
    memset(name, 'j', 300); /* longer than a fixed 256-byte buffer held */
    name[300] = '\0';
    assert_int_equal(init(S_CTX_REMOTE, 2, "default=on", "outdir=/scratch/%x"), 0);
    fake_setenv("LD_PRELOAD", pre);
    fake_setenv("SLURM_JOB_NAME", name);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    snprintf(want, N + 400, "%s:%s", libpath, pre);
    assert_string_equal(fake_getenv("LD_PRELOAD"), want);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
    snprintf(want, N + 400, "/scratch/%s", name);
    assert_string_equal(fake_getenv("ARGUS_OUTDIR"), want);
    snprintf(want, N + 400, "%s:%s", libpath, pre);
    /* the long list back without libargus.so under --argus=off */
    assert_int_equal(init(S_CTX_REMOTE, 1, "default=on"), 0);
    assert_int_equal(argus_spank_option_cb(0, "off", 1), 0);
    fake_setenv("LD_PRELOAD", want);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("LD_PRELOAD"), pre);
    free(pre);
    free(want);
    free(name);
}

static void test_missing_library_fails_open(void **state)
{
    char *av[] = {"libdir=/nonexistent/argus", "default=on"};

    (void)state;
    fake_reset(S_CTX_REMOTE);
    assert_int_equal(slurm_spank_init(NULL, 2, av), 0);
    fake.gtask = 0;
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("LD_PRELOAD"));
    assert_null(fake_getenv("ARGUS_MODE"));
    assert_int_equal(fake_log_count("/nonexistent/argus/libargus.so: No such file"), 1);
    assert_int_equal(fake_log_count("set libdir="), 1);
}

static void test_enforce_remote(void **state)
{
    (void)state;
    /* enforce=on: a user's off (already refused by srun) cannot switch it off remotely */
    assert_int_equal(init(S_CTX_REMOTE, 2, "default=on", "enforce=on"), 0);
    assert_int_equal(argus_spank_option_cb(0, "off", 1), 0);
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_string_equal(fake_getenv("ARGUS_MODE"), "on");
    /* enforce=off: ARGUS=on in the environment does nothing */
    assert_int_equal(init(S_CTX_REMOTE, 1, "enforce=off"), 0);
    fake_setenv("ARGUS", "on");
    assert_int_equal(slurm_spank_task_init(NULL, 0, NULL), 0);
    assert_null(fake_getenv("ARGUS_MODE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_everywhere),
        cmocka_unit_test(test_option_validation),
        cmocka_unit_test(test_full_refused),
        cmocka_unit_test(test_enforce_refusal),
        cmocka_unit_test(test_option_any_case),
        cmocka_unit_test(test_bad_plugstack_fails_open),
        cmocka_unit_test(test_version_check),
        cmocka_unit_test(test_inject),
        cmocka_unit_test(test_site_spool_cap),
        cmocka_unit_test(test_default_outdir_and_off),
        cmocka_unit_test(test_user_cuda_injection_kept),
        cmocka_unit_test(test_batch_and_special_steps),
        cmocka_unit_test(test_off_strips_leaked_contract),
        cmocka_unit_test(test_long_preload_kept),
        cmocka_unit_test(test_missing_library_fails_open),
        cmocka_unit_test(test_nccl_profiler_plugin),
        cmocka_unit_test(test_enforce_remote),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
