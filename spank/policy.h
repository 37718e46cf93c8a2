/* policy.h — the SPANK plugin's pure logic, free of any spank_* call so that it can be
 * unit-tested on its own: the site policy parsed from plugstack.conf arguments, the
 * user's --argus value, the decision between them, output-directory template expansion
 * and LD_PRELOAD list editing. Nothing here prints, allocates or touches the environment;
 * every function returns 0 or a negative errno code and, on error, writes one message
 * (without the "argus: " prefix) into the caller's buffer.
 */
#ifndef ARGUS_SPANK_POLICY_H
#define ARGUS_SPANK_POLICY_H

#include <limits.h>
#include <stddef.h>

#include "common/config.h" /* enum argus_mode */

enum argus_enforce { ARGUS_ENFORCE_NONE = 0, ARGUS_ENFORCE_ON, ARGUS_ENFORCE_OFF };

/* No --argus given and no ARGUS variable set. */
#define ARGUS_REQ_NONE (-1)

struct argus_policy {
    int def_mode;            /* default=on|off: ARGUS_MODE_ON or ARGUS_MODE_OFF */
    int enforce;             /* enum argus_enforce */
    char outdir[PATH_MAX];   /* outdir= template; "%w" (the job's working directory) */
    char window[32];         /* window= value, "" when not given */
    char libdir[PATH_MAX];   /* libdir= (absolute), where libargus.so lives */
    char spool_max[32];      /* spool_max= value (MiB, as ARGUS_SPOOL_MAX), "" when not given */
};

/* Fill p with the defaults: default=off enforce=none outdir=%w, libdir = default_libdir
 * (the configured $(libdir)). */
void argus_policy_defaults(struct argus_policy *p, const char *default_libdir);

/* Parse plugstack.conf arguments ("key=value" words) into p, starting from defaults.
 * Strict: an unknown key, a word without '=', a repeated key or a bad value is -EINVAL
 * with err naming the word and what is accepted. */
int argus_policy_parse(struct argus_policy *p, int ac, char *const av[],
                       const char *default_libdir, char *err, size_t errlen);

/* Parse a --argus / ARGUS value: "on" or "off" in any case (as ARGUS_MODE); NULL or ""
 * (bare --argus) is "on". Returns the mode (enum argus_mode) or -EINVAL for anything
 * else ("full" among them: there is no such mode). */
int argus_mode_parse(const char *s);
const char *argus_mode_name(int mode);

/* Decide the step's mode from the policy and the user's request (a mode or
 * ARGUS_REQ_NONE). *mode always receives the mode to use. Returns 0, or -EPERM when the
 * request contradicts the site's enforce= (err: why, naming the key, e.g. "this site runs
 * Argus on every job (plugstack.conf enforce=on)"). The caller decides what that means:
 * a --argus option is refused on the submit side (site policy, argus(8)); the ARGUS
 * variable is ignored with a warning; the remote side uses *mode. */
int argus_policy_decide(const struct argus_policy *p, int requested, int *mode, char *err,
                        size_t errlen);

/* The site's spool_max= is a ceiling: the ARGUS_SPOOL_MAX to set in a task whose own value
 * is user (NULL: not set), or NULL to leave the user's alone. A user's valid value above 0
 * and at most the site's stands; anything else (unset, not a number, 0 = no cap, above
 * the site's) gets the site's. NULL too when the site gave none or spool_max=0. */
const char *argus_policy_spool_max(const struct argus_policy *p, const char *user);

/* Values for the template codes; NULL or "" becomes "unknown" (workdir: "."). */
struct argus_tmpl_vars {
    const char *jobid, *stepid, *user, *jobname, *workdir;
};

/* Check that a template uses only %j %s %u %x %w %% (-EINVAL naming the code). */
int argus_template_check(const char *tmpl, char *err, size_t errlen);

/* Expand tmpl into out. %j %s %u %x are reduced to [A-Za-z0-9._-] (so a job name cannot
 * add path components), %w is inserted as is. A relative result is made absolute against
 * workdir. -EINVAL (bad code) or -ENAMETOOLONG. */
int argus_template_expand(const char *tmpl, const struct argus_tmpl_vars *v, char *out,
                          size_t outlen, char *err, size_t errlen);

/* LD_PRELOAD editing (elements separated by ':' or ' '). prepend: lib first, unless it is
 * already an element (then old is copied unchanged). remove: every element equal to lib
 * dropped; out may become "". old may be NULL. -ENAMETOOLONG if out is too small. */
int argus_preload_prepend(const char *old, const char *lib, char *out, size_t outlen);
int argus_preload_remove(const char *old, const char *lib, char *out, size_t outlen);
int argus_preload_has(const char *list, const char *lib);

#endif /* ARGUS_SPANK_POLICY_H */
