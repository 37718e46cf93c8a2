/* spank_argus.c — the SPANK plugin's dispatcher (the pyxis model): it owns SPANK_PLUGIN,
 * parses the site policy from the plugstack.conf arguments, registers --argus and routes
 * each callback to the file for its context (submit.c: srun/sbatch/salloc; stepd.c:
 * slurmstepd). It must fail open: every callback returns 0 whatever goes wrong (only a
 * refused --argus value fails, on the submit side, before anything runs).
 */
#include "config.h"

#include <slurm/spank.h>
#include <string.h>

#include "spank/plugin.h"

SPANK_PLUGIN(argus, 1);

#ifndef ARGUS_SPANK_LIBDIR
#error "ARGUS_SPANK_LIBDIR (the configured libdir) must be defined by the build"
#endif

struct argus_spank_state argus_spank_g = {.requested = ARGUS_REQ_NONE};

struct spank_option argus_spank_option = {
    .name = "argus",
    .arginfo = "on|off",
    .usage = "Trace and diagnose this job with Argus (output: argus-<jobid>.<stepid>/ in "
             "the site's output directory; see argus(8)). Also: ARGUS=on|off.",
    .has_arg = 2, /* optional: a bare --argus means on */
    .val = 0,
    .cb = argus_spank_option_cb,
};

/* Parse the plugstack.conf arguments into argus_spank_g (every context, from init). */
static void load_policy(int ac, char **av)
{
    argus_spank_g.policy_ok =
        argus_policy_parse(&argus_spank_g.pol, ac, av, ARGUS_SPANK_LIBDIR,
                           argus_spank_g.policy_err, sizeof argus_spank_g.policy_err) == 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();

    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0; /* slurmd, prolog/epilog: nothing to do */
    argus_spank_g.requested = ARGUS_REQ_NONE;
    load_policy(ac, av);
    if (spank_option_register(sp, &argus_spank_option) != ESPANK_SUCCESS)
        slurm_verbose("argus: cannot register --argus (another plugin owns it?)");
    if (ctx == S_CTX_REMOTE) {
        if (!argus_spank_g.policy_ok)
            slurm_info("argus: %s; Argus is off", argus_spank_g.policy_err);
        return 0;
    }
    return argus_submit_init(sp);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_LOCAL || spank_context() == S_CTX_ALLOCATOR)
        return argus_submit_post_opt(sp);
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp))
        return 0;
    return argus_stepd_task_init(sp);
}
