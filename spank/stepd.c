/* stepd.c — the remote side of the SPANK plugin (slurmstepd, S_CTX_REMOTE). In task_init,
 * which runs in each task's process as the job user just before execve, it sets or
 * clears the environment contract (common/config.h): LD_PRELOAD (libargus_preload.so from
 * the site's libdir, prepended: the shim that loads libargus.so in the task and nothing in
 * the task's children; libargus.so itself where no shim is installed),
 * CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH (libargus.so; a user's own are kept),
 * ARGUS_MODE, ARGUS_OUTDIR (template expanded), ARGUS_JOBID=<job>.<step> and
 * ARGUS_WINDOW, and NCCL_PROFILER_PLUGIN (libargus_nccl.so, where installed; a user's own
 * plugin moves to ARGUS_NCCL_PROFILER_CHAIN, which Argus's plugin loads and passes every
 * call to). The batch step gets the contract too (so `mpirun` inside it traces its
 * ranks; Argus is inert there until MPI_Init); extern and interactive steps are skipped.
 * It creates no files (rank 0's libargus creates the output directory as the user),
 * never fails the task, and only global task 0 prints, one line per problem.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <slurm/spank.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/config.h"
#include "spank/plugin.h"

/* Special step ids (slurm.h), not in spank.h. */
#define STEP_BATCH 0xfffffffbu
#define STEP_EXTERN 0xfffffffcu
#define STEP_INTERACTIVE 0xfffffffau

#define LIBNAME "libargus.so"
#define PRELOADNAME "libargus_preload.so"
#define NCCLNAME "libargus_nccl.so"
#define NCCL_VAR "NCCL_PROFILER_PLUGIN"
#define CHAIN_VAR "ARGUS_NCCL_PROFILER_CHAIN"

struct task {
    spank_t sp;
    int loud;  /* global task 0: the one that speaks to the user */
    char lib[PATH_MAX + 16]; /* libdir (< PATH_MAX) + "/libargus.so" */
    char pre[PATH_MAX + 24]; /* libdir + "/libargus_preload.so" */
    char nccl[PATH_MAX + 24]; /* libdir + "/libargus_nccl.so" */
};

/* One line to the daemon log always, and to the task's stderr (the job's output) from
 * global task 0 only, so the user sees each problem once. */
static void say(const struct task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct task *t, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    slurm_verbose(ARGUS_SPANK_PREFIX "%s", msg);
    if (t->loud) {
        fprintf(stderr, ARGUS_SPANK_PREFIX "%s\n", msg);
        fflush(stderr);
    }
}

/* The task's value of name, whatever its length, in a new string (free it); NULL when
 * unset or out of memory. The user's strings (LD_PRELOAD, the injection paths, the job
 * name) are never cut: the buffer doubles until the value fits. */
static char *get_env_dup(spank_t sp, const char *name)
{
    for (size_t len = 1024; len <= (size_t)INT_MAX; len *= 2) {
        char *buf = malloc(len);
        if (!buf)
            return NULL;
        spank_err_t rc = spank_getenv(sp, name, buf, (int)len);
        if (rc == ESPANK_SUCCESS)
            return buf;
        free(buf);
        if (rc != ESPANK_NOSPACE)
            return NULL;
    }
    return NULL;
}

/* Remove what an enclosing Argus step (the batch step) put into this task's environment,
 * so that `srun --argus=off` inside `sbatch --argus=on` really runs without Argus. */
static void strip_contract(const struct task *t)
{
    static const char *const inj[] = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"};
    char *old = get_env_dup(t->sp, "LD_PRELOAD");
    const size_t olen = old ? strlen(old) + 2 : 0; /* the list never grows */
    char *out = old ? malloc(olen) : NULL, *out2 = old ? malloc(olen) : NULL;

    /* the shim and the whole library alike (an older step preloaded libargus.so) */
    if (old && out && out2 && argus_preload_remove(old, t->pre, out2, olen) == 0 &&
        argus_preload_remove(out2, t->lib, out, olen) == 0) {
        if (out[0])
            spank_setenv(t->sp, "LD_PRELOAD", out, 1);
        else
            spank_unsetenv(t->sp, "LD_PRELOAD");
    }
    free(old);
    free(out);
    free(out2);
    for (size_t i = 0; i < sizeof inj / sizeof inj[0]; i++) {
        char *v = get_env_dup(t->sp, inj[i]);
        if (v && strcmp(v, t->lib) == 0)
            spank_unsetenv(t->sp, inj[i]);
        free(v);
    }
    /* NCCL's profiler slot: back to the user's own plugin, or empty */
    char *np = get_env_dup(t->sp, NCCL_VAR);
    if (np && strcmp(np, t->nccl) == 0) {
        char *own = get_env_dup(t->sp, CHAIN_VAR);
        if (own && own[0])
            spank_setenv(t->sp, NCCL_VAR, own, 1);
        else
            spank_unsetenv(t->sp, NCCL_VAR);
        free(own);
    }
    free(np);
    spank_unsetenv(t->sp, CHAIN_VAR);
    for (size_t i = 0; i < argus_config_nvars; i++)
        spank_unsetenv(t->sp, argus_config_vars[i].name);
    spank_unsetenv(t->sp, "ARGUS_RANK_MARK"); /* the shim's rank mark (preload_shim.c) */
}

/* CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH: ours unless the user has their own. */
static void set_injection(const struct task *t, const char *name)
{
    char *v = get_env_dup(t->sp, name);

    if (v && v[0] && strcmp(v, t->lib) != 0) {
        say(t, "%s is already %.512s; Argus stands aside and keeps it (GPU kernels are "
            "not traced, MPI-level summaries still run)", name, v);
        free(v);
        return;
    }
    free(v);
    spank_setenv(t->sp, name, t->lib, 1);
}

/* NCCL_PROFILER_PLUGIN: Argus's plugin where installed; a user's own value (NCCL's
 * Inspector, a site plugin) is kept in ARGUS_NCCL_PROFILER_CHAIN, which Argus's plugin
 * loads and passes every call to, so the user's plugin still sees everything. */
static void set_nccl_plugin(const struct task *t)
{
    if (access(t->nccl, R_OK) != 0)
        return;
    char *v = get_env_dup(t->sp, NCCL_VAR);
    if (v && v[0] && strcmp(v, t->nccl) != 0)
        spank_setenv(t->sp, CHAIN_VAR, v, 1);
    free(v);
    spank_setenv(t->sp, NCCL_VAR, t->nccl, 1);
}

static void user_name(spank_t sp, char *out, size_t len)
{
    uid_t uid = (uid_t)-1;
    struct passwd pw, *res = NULL;
    char buf[4096];

    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        uid = getuid();
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
        snprintf(out, len, "%s", res->pw_name);
    else
        snprintf(out, len, "%u", (unsigned)uid);
}

/* Set the contract for mode; 0, or -1 when it could not be set (the caller strips). */
static int inject(const struct task *t, int mode, uint32_t jobid, uint32_t stepid)
{
    char job[32], step[32], user[256], cwd[PATH_MAX], dir[PATH_MAX], err[512];
    char *name = get_env_dup(t->sp, "SLURM_JOB_NAME"), *old = NULL, *out = NULL;
    struct argus_tmpl_vars v = {job, step, user, name ? name : "", cwd};
    int rc = -1;

    snprintf(job, sizeof job, "%u", jobid);
    if (stepid == STEP_BATCH)
        snprintf(step, sizeof step, "batch");
    else
        snprintf(step, sizeof step, "%u", stepid);
    user_name(t->sp, user, sizeof user);
    if (!getcwd(cwd, sizeof cwd)) /* task_init runs in the job's working directory */
        snprintf(cwd, sizeof cwd, "/tmp");
    if (argus_template_expand(argus_spank_g.pol.outdir, &v, dir, sizeof dir, err,
                              sizeof err) != 0) {
        say(t, "%s; Argus is off for this step (fix outdir= in plugstack.conf)", err);
        goto out;
    }
    /* The user's own preloads follow the shim whole, whatever their length; the whole
     * library where the shim is not installed (the heavier way, as before). */
    const char *pre = access(t->pre, R_OK) == 0 ? t->pre : t->lib;
    old = get_env_dup(t->sp, "LD_PRELOAD");
    const size_t outlen = (old ? strlen(old) : 0) + strlen(pre) + 2;
    out = malloc(outlen);
    if (!out || argus_preload_prepend(old, pre, out, outlen) != 0) {
        say(t, "out of memory for LD_PRELOAD; Argus is off for this step");
        goto out;
    }
    char jobstep[80];
    snprintf(jobstep, sizeof jobstep, "%s.%s", job, step);
    if (spank_setenv(t->sp, "LD_PRELOAD", out, 1) != ESPANK_SUCCESS ||
        spank_setenv(t->sp, "ARGUS_MODE", argus_mode_name(mode), 1) != ESPANK_SUCCESS ||
        spank_setenv(t->sp, "ARGUS_OUTDIR", dir, 1) != ESPANK_SUCCESS ||
        spank_setenv(t->sp, "ARGUS_JOBID", jobstep, 1) != ESPANK_SUCCESS) {
        say(t, "cannot set the task environment; Argus is off for this step");
        goto out;
    }
    /* The site's window is a default: a user's own valid ARGUS_WINDOW wins. */
    if (argus_spank_g.pol.window[0])
        spank_setenv(t->sp, "ARGUS_WINDOW", argus_spank_g.pol.window, 0);
    /* The site's spool cap is a ceiling: a user's own lower cap stands. */
    char *user_cap = get_env_dup(t->sp, "ARGUS_SPOOL_MAX");
    const char *cap = argus_policy_spool_max(&argus_spank_g.pol, user_cap);
    free(user_cap);
    if (cap && spank_setenv(t->sp, "ARGUS_SPOOL_MAX", cap, 1) != ESPANK_SUCCESS) {
        say(t, "cannot set ARGUS_SPOOL_MAX; Argus is off for this step");
        goto out;
    }
    set_injection(t, "CUDA_INJECTION64_PATH");
    set_injection(t, "NVTX_INJECTION64_PATH");
    set_nccl_plugin(t);
    rc = 0;
out:
    free(name);
    free(old);
    free(out);
    return rc;
}

int argus_stepd_task_init(spank_t sp)
{
    struct task t = {.sp = sp};
    uint32_t jobid = 0, stepid = 0, gtask = 1;
    int requested = argus_spank_g.requested, mode;
    char err[512];

    if (!argus_spank_g.policy_ok)
        return 0;
    if (spank_get_item(sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return 0;
    if (stepid == STEP_EXTERN || stepid == STEP_INTERACTIVE)
        return 0;
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &gtask) != ESPANK_SUCCESS)
        gtask = 1;
    t.loud = gtask == 0;
    snprintf(t.lib, sizeof t.lib, "%s/" LIBNAME, argus_spank_g.pol.libdir);
    snprintf(t.pre, sizeof t.pre, "%s/" PRELOADNAME, argus_spank_g.pol.libdir);
    snprintf(t.nccl, sizeof t.nccl, "%s/" NCCLNAME, argus_spank_g.pol.libdir);

    /* No --argus: the ARGUS variable (slurmrestd and other option-less submissions). */
    char *areq = requested == ARGUS_REQ_NONE ? get_env_dup(sp, "ARGUS") : NULL;
    if (areq) {
        const int m = argus_mode_parse(areq);
        requested = m >= 0 ? m : ARGUS_REQ_NONE;
        free(areq);
    }
    if (argus_policy_decide(&argus_spank_g.pol, requested, &mode, err, sizeof err) != 0)
        slurm_verbose(ARGUS_SPANK_PREFIX "%s", err); /* the submit side already said so */
    if (mode == ARGUS_MODE_OFF) {
        if (requested == ARGUS_MODE_OFF || argus_spank_g.pol.enforce == ARGUS_ENFORCE_OFF)
            strip_contract(&t);
        return 0;
    }
    if (access(t.lib, R_OK) != 0) {
        say(&t, "%s: %s; Argus is off for this step (set libdir= in "
            "plugstack.conf to where libargus.so is installed)", t.lib, strerror(errno));
        strip_contract(&t);
        return 0;
    }
    if (inject(&t, mode, jobid, stepid) != 0)
        strip_contract(&t);
    return 0;
}
