/* submit.c — the submit side of the SPANK plugin: srun (S_CTX_LOCAL), sbatch and salloc
 * (S_CTX_ALLOCATOR). It validates --argus and the ARGUS variable against the site
 * policy before anything is allocated, tells the user in one line what is wrong with the
 * site's plugstack.conf arguments or the plugin's build, and never touches the job's
 * environment (the contract is set on the remote side, as the job user).
 */
#include "config.h"

#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank/plugin.h"

/* The option callback runs in every context, possibly twice (environment first, then the
 * command line; slurmstepd calls it twice too), so it only records the last value. On
 * the submit side (remote == 0) a bad value, or one the site's enforce= forbids (site
 * policy, documented in argus(8)), refuses the option: srun/sbatch/salloc then stop
 * before anything is allocated, with a non-zero exit status, after our one line saying
 * why and what to do. */
int argus_spank_option_cb(int val, const char *optarg, int remote)
{
    char err[512];
    int mode = argus_mode_parse(optarg), eff;

    (void)val;
    if (mode < 0) {
        if (remote)
            return 0;
        slurm_spank_log(ARGUS_SPANK_PREFIX "--argus=%s: expected on or off", optarg);
        return -1;
    }
    argus_spank_g.requested = mode;
    if (remote || !argus_spank_g.policy_ok)
        return 0;
    if (argus_policy_decide(&argus_spank_g.pol, mode, &eff, err, sizeof err) != 0) {
        char opt[80];
        snprintf(opt, sizeof opt, "--argus%s%.64s", optarg && *optarg ? "=" : "",
                 optarg ? optarg : "");
        slurm_spank_log(ARGUS_SPANK_PREFIX "%s refused: %s; nothing was submitted (submit "
                        "without %s)", opt, err, opt);
        return -1;
    }
    return 0;
}

/* "22.05" of the Slurm we run under, compared with the one we were built against. */
static void check_version(spank_t sp)
{
#ifdef ARGUS_SLURM_BUILT_VERSION
    char *major = NULL, *minor = NULL;
    unsigned built = ARGUS_SLURM_BUILT_VERSION;

    if (spank_get_item(sp, S_SLURM_VERSION_MAJOR, &major) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_SLURM_VERSION_MINOR, &minor) != ESPANK_SUCCESS || !major ||
        !minor)
        return;
    if ((unsigned)atoi(major) != ((built >> 16) & 0xff) ||
        (unsigned)atoi(minor) != ((built >> 8) & 0xff))
        slurm_spank_log(ARGUS_SPANK_PREFIX "this plugin was built for Slurm %u.%02u but "
                        "runs under Slurm %s.%s; rebuild Argus against this Slurm "
                        "(configure --with-slurm) and reinstall spank_argus.so",
                        (built >> 16) & 0xff, (built >> 8) & 0xff, major, minor);
#else
    (void)sp;
#endif
}

int argus_submit_init(spank_t sp)
{
    check_version(sp);
    if (!argus_spank_g.policy_ok)
        slurm_spank_log(ARGUS_SPANK_PREFIX "%s; Argus is off (ask your admin to fix the "
                        "argus line in plugstack.conf)", argus_spank_g.policy_err);
    return 0;
}

/* After the options: a request through the ARGUS variable (for submissions that cannot
 * carry SPANK options, e.g. slurmrestd) is checked here; it is only warned about, never
 * refused, because nobody typed it on this command line. */
int argus_submit_post_opt(spank_t sp)
{
    const char *env = getenv("ARGUS");
    char err[512];
    int mode, eff;

    (void)sp;
    if (!argus_spank_g.policy_ok || argus_spank_g.requested != ARGUS_REQ_NONE || !env)
        return 0;
    mode = argus_mode_parse(env);
    if (mode < 0) {
        slurm_spank_log(ARGUS_SPANK_PREFIX "ARGUS=%s ignored: expected on or off", env);
        return 0;
    }
    if (argus_policy_decide(&argus_spank_g.pol, mode, &eff, err, sizeof err) != 0)
        slurm_spank_log(ARGUS_SPANK_PREFIX "ARGUS=%s ignored: %s; Argus stays %s", env, err,
                        argus_mode_name(eff));
    return 0;
}
