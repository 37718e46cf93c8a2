/* types.c — names of the shared enums, the phase-name mapping and the kernel-name hash.
 * Pure functions; no state. */
#include "common/types.h"

#include <ctype.h>
#include <string.h>

static const char *const phase_names[ARGUS_PH_COUNT] = {
    "forward", "backward", "optimizer", "communication", "host", "other",
};

static const char *const kclass_names[ARGUS_KC_COUNT] = {
    "compute", "collective", "p2p", "memcpy", "memset",
};

const char *argus_phase_name(enum argus_phase p)
{
    return ((unsigned)p < ARGUS_PH_COUNT) ? phase_names[p] : "unknown";
}

const char *argus_kclass_name(enum argus_kclass c)
{
    return ((unsigned)c < ARGUS_KC_COUNT) ? kclass_names[c] : "unknown";
}

/* Case-insensitive substring test on a bounded copy of the name. */
static int name_contains(const char *lower, const char *needle)
{
    return strstr(lower, needle) != NULL;
}

enum argus_phase argus_phase_from_name(const char *name)
{
    char lower[128];
    size_t i;

    if (!name)
        return ARGUS_PH_OTHER;
    for (i = 0; i + 1 < sizeof lower && name[i]; i++)
        lower[i] = (char)tolower((unsigned char)name[i]);
    lower[i] = '\0';
    if (name_contains(lower, "backward") || name_contains(lower, "bwd"))
        return ARGUS_PH_BACKWARD;
    if (name_contains(lower, "forward") || name_contains(lower, "fwd"))
        return ARGUS_PH_FORWARD;
    if (name_contains(lower, "optim"))
        return ARGUS_PH_OPTIMIZER;
    if (name_contains(lower, "comm") || name_contains(lower, "nccl") ||
        name_contains(lower, "gloo") || name_contains(lower, "all_reduce") ||
        name_contains(lower, "allreduce") || name_contains(lower, "all_gather") ||
        name_contains(lower, "allgather") || name_contains(lower, "reduce_scatter") ||
        name_contains(lower, "barrier"))
        return ARGUS_PH_COMM;
    if (name_contains(lower, "data") || name_contains(lower, "host"))
        return ARGUS_PH_HOST;
    return ARGUS_PH_OTHER;
}

uint64_t argus_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (const unsigned char *p = (const unsigned char *)name; p && *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}
