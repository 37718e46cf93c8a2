/* condensed.c — the reference-rank rule of condensed windows (condensed.h). */
#include "common/condensed.h"

#include "common/hash.h"

int argus_condense_reference(const struct argus_step_summary *s, uint32_t world)
{
    const struct argus_coords *k = &s->coords;
    if (k->tp_size && k->pp_size && k->dp_size)
        return k->dp < ARGUS_CONDENSE_REF_DP;
    if (world <= ARGUS_CONDENSE_REF_MAX)
        return 1;
    return argus_mix64(s->rank) % world < ARGUS_CONDENSE_REF_MAX;
}
