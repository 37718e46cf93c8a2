/* fake_spank.h — a canned SPANK layer for unit tests: the spank_* and slurm_* functions
 * the plugin calls, backed by a settable context, job items and a small step environment,
 * and a log of every message. Link it with the plugin sources instead of slurmstepd.
 */
#ifndef ARGUS_TESTS_FAKE_SPANK_H
#define ARGUS_TESTS_FAKE_SPANK_H

#include <slurm/spank.h>
#include <stdint.h>
#include <sys/types.h>

struct fake_spank {
    spank_context_t ctx;
    uint32_t jobid, stepid, gtask;
    uid_t uid;
    const char *major, *minor;  /* S_SLURM_VERSION_MAJOR/MINOR */
    int registered;             /* spank_option_register calls */
};
extern struct fake_spank fake;

/* Reset context, items, environment and log. */
void fake_reset(spank_context_t ctx);
/* The step environment (remote context). */
void fake_setenv(const char *name, const char *value);
const char *fake_getenv(const char *name);
/* All messages so far, newline-separated, each "LEVEL: text". */
const char *fake_log(void);
int fake_log_count(const char *needle);

#endif
