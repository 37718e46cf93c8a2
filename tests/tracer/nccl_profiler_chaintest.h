/* nccl_profiler_chaintest.h — tests only: what the chained test plugin
 * (tests/tracer/nccl_profiler_chaintest.c) counts, and the event types it asks NCCL for,
 * shared with the driver that checks them (tests/tracer/nccl_profiler_driver.c). The
 * plugin exports `struct chaintest_counts *chaintest_counts(void)`; the driver finds it
 * with dlsym in the library the plugin under test loaded. The counts are the plugin's,
 * valid while it is loaded, written by whichever thread NCCL calls it on.
 */
#ifndef ARGUS_TESTS_NCCL_PROFILER_CHAINTEST_H
#define ARGUS_TESTS_NCCL_PROFILER_CHAINTEST_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/nccl_profiler_abi.h"

/* The types the chained plugin asks for (the v4 and v5 builds ask for more, see there). */
#define CHAINTEST_MASK \
    (NCCLP_GROUP | NCCLP_COLL | NCCLP_PROXY_OP | NCCLP_PROXY_STEP | NCCLP_PROXY_CTRL | \
     NCCLP_KERNEL_CH)

/* What the chained plugin was given (starts[i]: events of type bit i). */
struct chaintest_counts {
    int version;
    int inits, finalizes, live_ctx;
    uint64_t last_hash;
    int last_nranks, last_rank, last_nnodes;
    char last_name[32];
    int starts[16], stops, states, kernel_stops;
    int bad_parent, bad_type, bad_ctx;
    int ops_under_coll, foreign_ops;
    uint64_t last_seq;
    size_t last_count;
    int last_peer;
};

/* The bit index of a one-bit event type (0..15; a type past bit 15 gives 15). */
static inline int chaintest_bit_index(uint64_t t)
{
    int i = 0;
    while (t > 1 && i < 15) {
        t >>= 1;
        i++;
    }
    return i;
}

#endif /* ARGUS_TESTS_NCCL_PROFILER_CHAINTEST_H */
