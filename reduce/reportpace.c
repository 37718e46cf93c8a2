/* reportpace.c — the pace of rank 0's provisional report rewrites (reportpace.h). */
#include "reduce/reportpace.h"

int argus_reportpace_want(struct argus_reportpace *p, uint64_t now_ns)
{
    if (p->last_ns && now_ns >= p->last_ns)
        p->gap_ns = now_ns - p->last_ns;
    p->last_ns = now_ns;
    if (now_ns >= p->next_ns)
        return 1;
    p->pending = 1;
    return 0;
}

uint64_t argus_reportpace_due(const struct argus_reportpace *p)
{
    if (!p->pending)
        return UINT64_MAX;
    if (p->gap_ns && p->gap_ns < (UINT64_MAX - p->last_ns) / 2 &&
        p->last_ns + 2 * p->gap_ns < p->next_ns)
        return p->last_ns + 2 * p->gap_ns; /* the windows stopped */
    return p->next_ns;
}

void argus_reportpace_wrote(struct argus_reportpace *p, uint64_t start_ns, uint64_t end_ns)
{
    const uint64_t took = end_ns > start_ns ? end_ns - start_ns : 0;
    uint64_t wait = ARGUS_REPORTPACE_MAX_NS;
    if (took < ARGUS_REPORTPACE_MAX_NS / ARGUS_REPORTPACE_FACTOR)
        wait = took * ARGUS_REPORTPACE_FACTOR;
    p->pending = 0;
    p->next_ns = end_ns + wait;
}
