/* agentsleep.c — the idle Argus thread's sleep (agentsleep.h). Pure arithmetic; no clock,
 * no MPI, no allocation. */
#include "reduce/agentsleep.h"

#include "reduce/treemsg.h"

void argus_agentsleep_init(struct argus_agentsleep *s, long silence_ms, long deadline_ms)
{
    s->silence_ms = silence_ms;
    s->deadline_ms = deadline_ms;
    s->news_at = 0;
    argus_agentsleep_restart(s);
}

void argus_agentsleep_restart(struct argus_agentsleep *s)
{
    s->backoff_ns = ARGUS_AGENTSLEEP_POLL_NS / 2;
}

void argus_agentsleep_news(struct argus_agentsleep *s, uint64_t now)
{
    s->backoff_ns = ARGUS_AGENTSLEEP_POLL_NS / 2;
    s->news_at = now;
}

long argus_agentsleep_idle_cap_ns(const struct argus_agentsleep *s)
{
    uint64_t cap = 2 * argus_treemsg_alive_ns(s->silence_ms);
    const uint64_t quarter = (uint64_t)s->deadline_ms * 1000000ull / 4;
    cap = quarter < cap ? quarter : cap;
    return cap > (uint64_t)ARGUS_AGENTSLEEP_IDLE_MAX_NS ? ARGUS_AGENTSLEEP_IDLE_MAX_NS
           : cap < (uint64_t)ARGUS_AGENTSLEEP_POLL_MAX_NS ? ARGUS_AGENTSLEEP_POLL_MAX_NS
                                                          : (long)cap;
}

long argus_agentsleep_next_ns(struct argus_agentsleep *s, uint64_t now, int busy, uint64_t due)
{
    busy |= now < s->news_at + ARGUS_AGENTSLEEP_LINGER_NS;
    const long cap = busy ? ARGUS_AGENTSLEEP_POLL_MAX_NS : argus_agentsleep_idle_cap_ns(s);
    long ns = s->backoff_ns * 2 > cap ? cap : s->backoff_ns * 2;
    s->backoff_ns = ns;
    if (due <= now) /* taken on this round already, or just now due: soon, no spin */
        return ARGUS_AGENTSLEEP_POLL_NS;
    if (due - now < (uint64_t)ns)
        ns = (long)(due - now) + ARGUS_AGENTSLEEP_POLL_NS / 4;
    return ns;
}
