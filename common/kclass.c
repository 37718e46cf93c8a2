/* kclass.c — the kernel-name classification rule (kclass.h). */
#include "common/kclass.h"

#include <string.h>

#include "common/types.h"

int argus_kclass_from_name(const char *name)
{
    if (!name || (!strcasestr(name, "nccl") && !strcasestr(name, "rccl")))
        return ARGUS_KC_COMPUTE;
    if (strstr(name, "SendRecv") || strstr(name, "Send") || strstr(name, "Recv"))
        return ARGUS_KC_P2P;
    return ARGUS_KC_COLLECTIVE;
}
