/* ring.h — internal to tracer/: the L4 raw-event ring. The last events of a rank (about
 * the last few steps) in one fixed array, overwritten oldest first; dumped on request as
 * Chrome-trace JSON (Perfetto opens it): one process per rank, one track (tid) per
 * stream, "ph":"X" events with ts/dur in microseconds, args with correlation id, bytes,
 * class and step. Names are not copied: the pointers must stay valid as long as the ring
 * (CUPTI kernel names and static strings do).
 *
 * One writer thread (the collector's drain thread); dump takes the same lock as add, so
 * it may run on any thread. No allocation after create.
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

/* cap events, keep_steps: how many most recent steps a dump shows at most. */
int argus_ring_create(size_t cap, unsigned keep_steps, struct argus_ring **out);
void argus_ring_free(struct argus_ring *r);
void argus_ring_add(struct argus_ring *r, const struct argus_ring_ev *e);
size_t argus_ring_count(struct argus_ring *r);

/* Write the kept events of steps [from, to] (and within the last keep_steps steps) as
 * one Chrome-trace JSON document. label: the process name ("rank 3" or "DP 1 PP 0 TP 1");
 * t0_ns is subtracted from every timestamp (0 keeps absolute µs). 0 or -errno. */
int argus_ring_dump_chrome(struct argus_ring *r, FILE *out, uint32_t rank, const char *label,
                           uint64_t from, uint64_t to, uint64_t t0_ns);

#endif /* ARGUS_TRACER_RING_H */
