/* agentsleep.h — how long the idle Argus thread sleeps between rounds (agent.c).
 *
 * The thread wakes at once for a window or a kick (handoff.h); MPI has no such signal for
 * a message, so it polls, backing off from ARGUS_AGENTSLEEP_POLL_NS by doubling: up to
 * ARGUS_AGENTSLEEP_POLL_MAX_NS while busy (a transfer in flight, an own window waiting for
 * the children's, or something happened within ARGUS_AGENTSLEEP_LINGER_NS), up to the idle
 * cap (argus_agentsleep_idle_cap_ns) when nothing is pending, and never past the earliest
 * deadline the thread owns (a sign of life due, a child's silence, a window's wait, rank
 * 0's held report files: rank0.h), which the caller works out and passes as `due`.
 * Pure arithmetic on the caller's monotonic nanoseconds; no clock, no allocation; the
 * struct is plain data owned by the Argus thread.
 */
#ifndef ARGUS_REDUCE_AGENTSLEEP_H
#define ARGUS_REDUCE_AGENTSLEEP_H

#include <stdint.h>

#define ARGUS_AGENTSLEEP_POLL_NS 1000000L       /* first poll period after something happened */
#define ARGUS_AGENTSLEEP_POLL_MAX_NS 16000000L  /* ... at most this while busy */
#define ARGUS_AGENTSLEEP_IDLE_MAX_NS 250000000L /* ... and at most this when nothing is pending */
#define ARGUS_AGENTSLEEP_LINGER_NS 200000000L   /* busy this long after news (a clock burst's
                                                 * pings, a pull, trace requests come in series) */

struct argus_agentsleep {
    long silence_ms, deadline_ms; /* the agent's ARGUS_SILENCE_MS and deadline (agent.h) */
    long backoff_ns;              /* the last planned sleep; the next one doubles it */
    uint64_t news_at;             /* monotonic ns something last happened (0: never) */
};

/* Set the bounds; no news yet, backoff at its start. */
void argus_agentsleep_init(struct argus_agentsleep *s, long silence_ms, long deadline_ms);
/* A new exchange loop begins: the backoff starts again (news_at is kept). */
void argus_agentsleep_restart(struct argus_agentsleep *s);
/* Something happened at now (more than a sign of life): poll fast again, and stay busy for
 * ARGUS_AGENTSLEEP_LINGER_NS. */
void argus_agentsleep_news(struct argus_agentsleep *s, uint64_t now);
/* The longest sleep while nothing is pending: ARGUS_AGENTSLEEP_IDLE_MAX_NS, at most two
 * sign-of-life periods (treemsg.h) and a quarter of the deadline (an ask that can come at
 * any time, a parent's pull or a trace request, is answered well within the asker's
 * deadline), at least ARGUS_AGENTSLEEP_POLL_MAX_NS. Also the longest planned sleep less
 * POLL_MAX (agent.c's keep_alive: the thread's own absence is no child's silence). */
long argus_agentsleep_idle_cap_ns(const struct argus_agentsleep *s);
/* How long to sleep at now (ns, > 0): the backoff doubled (kept for the next call), capped
 * by busy (or lingering news) or the idle cap, and cut at due (monotonic ns; UINT64_MAX:
 * none): ARGUS_AGENTSLEEP_POLL_NS when due is now or past, else at most due - now plus a
 * quarter poll. */
long argus_agentsleep_next_ns(struct argus_agentsleep *s, uint64_t now, int busy, uint64_t due);

#endif /* ARGUS_REDUCE_AGENTSLEEP_H */
