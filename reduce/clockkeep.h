/* clockkeep.h — keeps a rank's clock offset to rank 0 current while the job runs
 * (docs/ALGORITHMS.md, "Clock alignment: keeping the offset"). The start-up ping-pong
 * (clocksync.h) measures the offset once; clocks then drift (20 ppm is 72 ms an hour),
 * which would misplace every later step on rank 0's time line. So, from the Argus thread's
 * loop and never blocking:
 *  - every rank answers its children's pings at any time with its clock reading and its
 *    own current offset to rank 0 (a few fixed reply slots; a ping that finds none free
 *    goes unanswered and the child's burst times it out);
 *  - every period_ms a rank sends its parent a burst of ARGUS_CLOCKKEEP_BURST pings, one
 *    at a time; both sides wait up to 200 us for each other during a burst rather than
 *    return to a loop that may sleep (on an idle loop the sleep lands on one leg of every
 *    ping alike and biases the midpoint by hundreds of us);
 *  - every ping bounds the offset from both sides (clockfit.h: offset to the parent plus
 *    the parent's own offset to rank 0, both from that same reply; a parent that has not
 *    yet fitted its own drift rate is not used, and the parent's own uncertainty widens
 *    the bounds); the lines that fit inside the bounds of the last 128 pings give level
 *    and drift rate (the middle of what they allow), and their value at the current time
 *    is the rank's offset from then on. Measured (t_clockkeep, 4 ranks drifting 500 ppm
 *    apart): about 1 us on a quiet node, up to 0.6 ms with busy loops on every core, where
 *    the earlier minimum-RTT least-squares line was off by 0.3-3.6 ms.
 * Clock: argus_clocksync_now (CLOCK_REALTIME plus the test knobs). Single thread.
 */
#ifndef ARGUS_REDUCE_CLOCKKEEP_H
#define ARGUS_REDUCE_CLOCKKEEP_H

#include <mpi.h>
#include <stdint.h>

#define ARGUS_CLOCKKEEP_BURST 8
#define ARGUS_CLOCKKEEP_BURST_MS 2000 /* a burst that takes longer is dropped */

/* parent -1 for rank 0 (it only answers). start_offset: the start-up estimate; period_ms
 * 0: never re-measure (answering still happens). 0 or -ENOMEM. */
int argus_clockkeep_init(MPI_Comm comm, int parent, int64_t start_offset, long period_ms);
/* One round (answer pings, advance the own burst). 1 when something happened. */
int argus_clockkeep_poll(void);
/* The current estimate of the offset to rank 0 (add to the local clock), at now. */
int64_t argus_clockkeep_offset(void);
/* Bursts completed and samples taken so far (for reduce.json and the tests). */
uint64_t argus_clockkeep_bursts(void);
/* Width of the range of offsets the last fit's pings allow at the newest one (clockfit.h),
 * ns: half of it bounds the error there; negative when the pings contradicted each other.
 * Half of it goes with every answer to a child, which widens its bounds by that much. */
int64_t argus_clockkeep_band(void);
/* Release requests still in flight. */
void argus_clockkeep_free(void);

#endif /* ARGUS_REDUCE_CLOCKKEEP_H */
