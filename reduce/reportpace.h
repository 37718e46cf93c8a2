/* reportpace.h — how often rank 0 rewrites its provisional report (rank0.h).
 *
 * A rewrite is some fifteen files, each written whole and fsync'ed (common/outdir.h): on
 * a 2-core node with 70 ms steps and windows of 10 steps it was 3 % of the job's CPU on
 * rank 0 (bench/overhead.py). So a rewrite waits until the time since the last one ended
 * is ARGUS_REPORTPACE_FACTOR times what that one took (wall clock, its fsyncs included):
 * rewriting takes at most 1 / (1 + factor) of the time, 0.5 %, and never waits longer
 * than ARGUS_REPORTPACE_MAX_NS. A rewrite asked for too early is held (pending) and is
 * due when the wait is over, whether or not another window came, or sooner when the
 * windows stop: two of the last gaps between asks after the last ask (a stall, a hang, a
 * job gone idle gets its report brought up to date at once, and an idle Argus thread
 * does not write it later: tests/integration/t_idle_wakeups.sh); while windows come
 * regularly the next ask comes first and the rewrite stays held. The final report is not
 * paced (rank0.c). Pure arithmetic on the caller's monotonic nanoseconds; no clock here.
 */
#ifndef ARGUS_REDUCE_REPORTPACE_H
#define ARGUS_REDUCE_REPORTPACE_H

#include <stdint.h>

#define ARGUS_REPORTPACE_FACTOR 199u
#define ARGUS_REPORTPACE_MAX_NS 30000000000ull /* 30 s */

struct argus_reportpace {
    uint64_t next_ns;  /* no rewrite before this (monotonic ns); 0: at once */
    uint64_t last_ns;  /* the last ask (0: none yet) */
    uint64_t gap_ns;   /* the gap between the last two asks (0: not known yet) */
    int pending;       /* a rewrite was asked for before next_ns */
};

/* A rewrite is wanted at now: 1 when it may go now, else 0 and it is held (pending). */
int argus_reportpace_want(struct argus_reportpace *p, uint64_t now_ns);
/* When the held rewrite is due (monotonic ns): next_ns, or last ask + 2 gaps if sooner;
 * UINT64_MAX when none is held. */
uint64_t argus_reportpace_due(const struct argus_reportpace *p);
/* A rewrite ran from start_ns to end_ns: nothing is held, and the next waits. */
void argus_reportpace_wrote(struct argus_reportpace *p, uint64_t start_ns, uint64_t end_ns);

#endif /* ARGUS_REDUCE_REPORTPACE_H */
