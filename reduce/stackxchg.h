/* stackxchg.h — host call stacks from every rank to rank 0 (docs/ALGORITHMS.md, "Host
 * call stacks"): starts this rank's sampler (tracer/hoststack.h) and carries each finished
 * sample as one small message (common/stackrec.h, tag 0x4180 of the private communicator)
 * to rank 0, which keeps them in a bounded set (ARGUS_STACKXCHG_MAX samples, later ones
 * counted as dropped) that its reports merge per anomaly (report.json anomalies[].stacks,
 * report.md, stacks.folded). For each stall (rank, step) a sample comes in from, once, rank
 * 0 asks two healthy peers (the nearest other ranks no host_stall verdict names; tag
 * 0x4181) for one sample of the same moment: at once when a host_stall verdict of its
 * latest analysis names the stalled rank, else at most once a second in all; a rank that
 * is asked has its sampler take it (argus_hoststack_request). ARGUS_STACKS=off: nothing
 * starts (-ECANCELED, said once at info); ARGUS_STACKS_MIN_MS sets the stall threshold.
 *
 * Called only from the Argus thread (start from the MPI_Init thread before it runs);
 * never blocks: one non-blocking send in flight per rank, rank 0 takes what has arrived.
 */
#ifndef ARGUS_REDUCE_STACKXCHG_H
#define ARGUS_REDUCE_STACKXCHG_H

#include <mpi.h>

#define ARGUS_STACKXCHG_MAX 1024

struct argus_report;

/* Start the sampler and the carriage; rank 0 (rep not NULL) points rep->stacks at its set.
 * 0, or negative errno (then host stacks are off for this rank, said once). */
int argus_stackxchg_start(MPI_Comm comm, int rank, struct argus_report *rep);
/* One round: send (ranks > 0) or take in (rank 0) finished samples. 1 when something
 * moved. Does nothing when not started. */
int argus_stackxchg_poll(void);
/* Stop the sampler; send what is left (at most 200 ms) or take in what has arrived.
 * Rank 0's set stays for the final report. */
void argus_stackxchg_finish(void);
/* Free rank 0's set and clear rep->stacks (after the final report). */
void argus_stackxchg_free(void);

#endif /* ARGUS_REDUCE_STACKXCHG_H */
