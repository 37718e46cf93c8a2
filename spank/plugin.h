/* plugin.h — internal to the SPANK plugin: the state shared by the dispatcher
 * (spank_argus.c) and the per-context files (submit.c for srun/sbatch/salloc, stepd.c for
 * slurmstepd). One process runs one context, so one static instance is enough. Nothing
 * here is exported: the version script keeps only slurm_spank_* and the plugin symbols.
 */
#ifndef ARGUS_SPANK_PLUGIN_H
#define ARGUS_SPANK_PLUGIN_H

#include <slurm/spank.h>

#include "spank/policy.h"

/* Every line the plugin shows a user starts with this. */
#define ARGUS_SPANK_PREFIX "argus: "

struct argus_spank_state {
    int policy_ok;             /* plugstack.conf arguments parsed */
    struct argus_policy pol;
    char policy_err[512];      /* why not, when !policy_ok */
    int requested;             /* --argus value (enum argus_mode) or ARGUS_REQ_NONE */
};
extern struct argus_spank_state argus_spank_g;

/* The --argus option, registered in slurm_spank_init in every context that needs it. */
extern struct spank_option argus_spank_option;
int argus_spank_option_cb(int val, const char *optarg, int remote);

/* srun / sbatch / salloc (submit.c). */
int argus_submit_init(spank_t sp);
int argus_submit_post_opt(spank_t sp);

/* slurmstepd (stepd.c). */
int argus_stepd_task_init(spank_t sp);

#endif /* ARGUS_SPANK_PLUGIN_H */
