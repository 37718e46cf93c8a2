/* ring.h — internal to tracer/: the L4 raw-event ring. The last events of a rank (about
 * the last few steps) in one fixed array, overwritten oldest first; dumped on request as
 * Chrome-trace JSON (Perfetto opens it): one process per rank, one track (tid) per
 * stream, "ph":"X" events with ts/dur in microseconds, args with correlation id, bytes,
 * class and step. Names are not copied: the pointers must stay valid as long as the ring
 * (CUPTI kernel names and static strings do).
 *
 * One writer thread (the collector's drain thread, or the application thread on the
 * argus.h path); a dump copies the selected events under the same lock as add and writes
 * them without it, so it may run on any thread and holds the writer up for one memcpy.
 * No allocation after create except the dump's scratch copy (dumps are rare).
 */
#ifndef ARGUS_TRACER_RING_H
#define ARGUS_TRACER_RING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct argus_ring;

struct argus_ring_ev {
    const char *name;
    uint64_t step, start_ns, end_ns, bytes;
    uint32_t device, stream, corr;
    uint8_t kclass; /* enum argus_kclass */
};

/* cap events, keep_steps: how many steps a dump shows at most (the newest of the range
 * asked for that the ring holds). */
int argus_ring_create(size_t cap, unsigned keep_steps, struct argus_ring **out);
void argus_ring_free(struct argus_ring *r);
void argus_ring_add(struct argus_ring *r, const struct argus_ring_ev *e);
size_t argus_ring_count(struct argus_ring *r);
/* Add e with its name copied into the ring's own name table (for callers whose name
 * strings do not outlive the call, e.g. argus_kernel): ARGUS_RING_NAMES distinct names,
 * later new ones show as "[ring name table full]". Same lock as add. */
#define ARGUS_RING_NAMES 1024
void argus_ring_add_copy(struct argus_ring *r, const struct argus_ring_ev *e);

/* What a dump wrote: "X" events, their first and last step, 1 when max_events left some
 * older events of the range out. */
struct argus_ring_dump_info {
    size_t events;
    uint64_t first_step, last_step;
    int truncated;
};

/* Write the kept events of steps [from, to] — at most keep_steps steps, the newest of
 * that range the ring holds — as one JSON array of Chrome-trace events (process and
 * thread names first), a document of its own. label: the process name ("rank 3" or
 * "DP 1 PP 0 TP 1"; NULL: "rank N"). shift_ns is added to each timestamp (clock
 * alignment to a reference clock) and t0_ns subtracted; ts and dur in µs. At most
 * max_events "X" events (0: no limit): the newest are kept. info may be NULL.
 * 0 or -errno. */
int argus_ring_dump_events(struct argus_ring *r, FILE *out, uint32_t rank, const char *label,
                           uint64_t from, uint64_t to, int64_t shift_ns, uint64_t t0_ns,
                           size_t max_events, struct argus_ring_dump_info *info);

#endif /* ARGUS_TRACER_RING_H */
