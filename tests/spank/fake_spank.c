/* fake_spank.c — the fake SPANK layer (fake_spank.h): enough of spank_* and slurm_* for
 * the plugin's callbacks to run in a unit test, with the validity rules that matter
 * (environment calls only in the remote context, items by type). Test-only code.
 */
#include "tests/spank/fake_spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NENV 64
#define LOGSZ 16384

struct fake_spank fake;
static char *env[NENV];
static char logbuf[LOGSZ];

void fake_reset(spank_context_t ctx)
{
    for (int i = 0; i < NENV; i++) {
        free(env[i]);
        env[i] = NULL;
    }
    memset(&fake, 0, sizeof fake);
    fake.ctx = ctx;
    fake.jobid = 42;
    fake.stepid = 3;
    fake.gtask = 0;
    fake.uid = 0;
    fake.major = "22";
    fake.minor = "05";
    logbuf[0] = '\0';
}

static int find(const char *name)
{
    size_t n = strlen(name);

    for (int i = 0; i < NENV; i++)
        if (env[i] && strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return i;
    return -1;
}

void fake_setenv(const char *name, const char *value)
{
    int i = find(name);

    if (i < 0)
        for (i = 0; i < NENV && env[i]; i++)
            ;
    if (i >= NENV)
        abort();
    free(env[i]);
    env[i] = malloc(strlen(name) + strlen(value) + 2);
    sprintf(env[i], "%s=%s", name, value);
}

const char *fake_getenv(const char *name)
{
    int i = find(name);

    return i < 0 ? NULL : strchr(env[i], '=') + 1;
}

const char *fake_log(void) { return logbuf; }

int fake_log_count(const char *needle)
{
    int n = 0;

    for (const char *p = logbuf; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void logv(const char *lvl, const char *fmt, va_list ap)
{
    size_t n = strlen(logbuf);

    n += (size_t)snprintf(logbuf + n, LOGSZ - n, "%s: ", lvl);
    if (n < LOGSZ)
        n += (size_t)vsnprintf(logbuf + n, LOGSZ - n, fmt, ap);
    if (n + 1 < LOGSZ)
        strcat(logbuf, "\n");
}

#define LOGFN(fn, lvl)                                                                    \
    void fn(const char *fmt, ...)                                                         \
    {                                                                                     \
        va_list ap;                                                                       \
        va_start(ap, fmt);                                                                \
        logv(lvl, fmt, ap);                                                               \
        va_end(ap);                                                                       \
    }
LOGFN(slurm_spank_log, "spank_log")
LOGFN(slurm_info, "info")
LOGFN(slurm_error, "error")
LOGFN(slurm_verbose, "verbose")
LOGFN(slurm_debug, "debug")
LOGFN(slurm_debug2, "debug2")
LOGFN(slurm_debug3, "debug3")

spank_context_t spank_context(void) { return fake.ctx; }

int spank_remote(spank_t sp)
{
    (void)sp;
    return fake.ctx == S_CTX_REMOTE;
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
    (void)sp;
    if (!opt || !opt->name || !opt->usage)
        return ESPANK_BAD_ARG;
    fake.registered++;
    return ESPANK_SUCCESS;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **arg)
{
    (void)sp;
    (void)opt;
    (void)arg;
    return ESPANK_ERROR;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
    va_list ap;
    spank_err_t rc = ESPANK_SUCCESS;

    (void)sp;
    va_start(ap, item);
    switch (item) {
    case S_JOB_ID: *va_arg(ap, uint32_t *) = fake.jobid; break;
    case S_JOB_STEPID: *va_arg(ap, uint32_t *) = fake.stepid; break;
    case S_JOB_UID: *va_arg(ap, uid_t *) = fake.uid; break;
    case S_TASK_GLOBAL_ID:
        if (fake.ctx != S_CTX_REMOTE)
            rc = ESPANK_NOT_TASK;
        else
            *va_arg(ap, uint32_t *) = fake.gtask;
        break;
    case S_SLURM_VERSION_MAJOR: *va_arg(ap, const char **) = fake.major; break;
    case S_SLURM_VERSION_MINOR: *va_arg(ap, const char **) = fake.minor; break;
    default: rc = ESPANK_BAD_ARG; break;
    }
    va_end(ap);
    return rc;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
    const char *v;

    (void)sp;
    if (fake.ctx != S_CTX_REMOTE)
        return ESPANK_NOT_REMOTE;
    v = fake_getenv(var);
    if (!v)
        return ESPANK_ENV_NOEXIST;
    if ((int)strlen(v) >= len)
        return ESPANK_NOSPACE;
    strcpy(buf, v);
    return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
    (void)sp;
    if (fake.ctx != S_CTX_REMOTE)
        return ESPANK_NOT_REMOTE;
    if (!overwrite && fake_getenv(var))
        return ESPANK_ENV_EXISTS;
    fake_setenv(var, val);
    return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
    int i = find(var);

    (void)sp;
    if (fake.ctx != S_CTX_REMOTE)
        return ESPANK_NOT_REMOTE;
    if (i >= 0) {
        free(env[i]);
        env[i] = NULL;
    }
    return ESPANK_SUCCESS;
}
