/* pystacks.h — argus-analyze's host call stacks from Kineto traces that carry Python
 * stacks (torch.profiler with_stack=True: `python_function` events named
 * "file.py(LINE): func", with ts, dur and tid). docs/ALGORITHMS.md, "Host call stacks:
 * from Kineto traces".
 *
 * A stall in a trace is a Python call that lasted at least min_ms inside one step
 * (ProfilerStep#N) and called nothing else that long: the innermost long span. Its sample
 * is the chain of python_function spans on its thread that cover it, outermost first, in
 * the live sampler's format ("func (file:line)", common/stackrec.h), why STALL, for its
 * rank and step. For each (rank, step) that has one, two healthy peers of the same peer
 * class (the same TP/PP/EP position in other DP replicas when the traces state a layout,
 * else the nearest other ranks) give their stack at the middle of the same step (why
 * PEER), so that the report can say which frames differ.
 *
 * Bounded: only spans of at least min_ms are kept (at any moment a thread has at most as
 * many as its call depth, so few), at most ARGUS_PYSTACKS_MAX_SPANS of them, names cut at
 * 256 bytes, at most ARGUS_PYSTACKS_MAX_STEPS step entries and 1,024 stalls in all; past
 * a bound the rest is counted (argus_pystacks_dropped). Linear in the events (the spans
 * of one trace are sorted once: n log n in the spans kept); the peers cost the traces
 * times log(stalls) per stalled (rank, step). Single-threaded; no global state.
 *
 * Use: argus_pystacks_new; per trace argus_pystacks_span for each python_function event
 * while it is parsed, argus_pystacks_steps with its steps once parsed (import/kineto.c),
 * then argus_pystacks_commit once the file is accepted with its rank (import/inputs.c),
 * or argus_pystacks_discard; at the end argus_pystacks_fill into rank 0's sample set.
 */
#ifndef ARGUS_IMPORT_PYSTACKS_H
#define ARGUS_IMPORT_PYSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/stackrec.h"
#include "common/types.h"

#define ARGUS_PYSTACKS_MAX_SPANS 65536
#define ARGUS_PYSTACKS_MAX_STEPS 1048576

struct argus_pystacks;

/* A collector keeping spans of at least min_ms (>= 1). NULL when out of memory. */
struct argus_pystacks *argus_pystacks_new(uint32_t min_ms);
void argus_pystacks_free(struct argus_pystacks *ps);

/* One python_function event of the trace being read: start and duration in ns on the
 * trace's clock, its thread, its name. Spans shorter than min_ms cost a compare. 0, or
 * -ENOSPC when it was dropped (a bound; counted). */
int argus_pystacks_span(struct argus_pystacks *ps, uint64_t start_ns, uint64_t dur_ns,
                        int64_t tid, const char *name);

/* The steps of the trace being read (ProfilerStep#N: n, start, end in ns), any order,
 * once after its events: its spans are nested and its stalls found. */
struct argus_pystacks_step {
    uint64_t n, start, end;
};
void argus_pystacks_steps(struct argus_pystacks *ps, const struct argus_pystacks_step *st,
                          size_t n);

/* The trace being read is accepted as rank (with its layout when have_coords): what it
 * gave is kept. Or discarded: what it gave is dropped. */
void argus_pystacks_commit(struct argus_pystacks *ps, uint32_t rank, int have_coords,
                           const struct argus_coords *c);
void argus_pystacks_discard(struct argus_pystacks *ps);

/* Every stall sample and its peers' samples into set (argus_stackset_add: those past its
 * bound are counted there). The samples added. */
size_t argus_pystacks_fill(const struct argus_pystacks *ps, struct argus_stackset *set);

/* Spans, stalls or step entries dropped at a bound; stalls found. */
uint64_t argus_pystacks_dropped(const struct argus_pystacks *ps);
size_t argus_pystacks_stalls(const struct argus_pystacks *ps);

#endif /* ARGUS_IMPORT_PYSTACKS_H */
