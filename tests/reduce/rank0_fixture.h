/* rank0_fixture.h — internal to tests/reduce: a rank 0 without MPI (reduce/rank0.h) in a
 * fresh directory under /tmp, the windows of kernel-less summaries the tree carries, and
 * its output files read back. Shared by test_rank0.c and test_reportpace.c. Returns
 * values; asserts nothing (the tests do). Not thread-safe; no global state.
 */
#ifndef ARGUS_TESTS_REDUCE_RANK0_FIXTURE_H
#define ARGUS_TESTS_REDUCE_RANK0_FIXTURE_H

#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "reduce/rank0.h"

struct r0fx {
    char base[128]; /* the directory made for the test (removed by r0fx_teardown) */
    struct argus_rank0 r0;
};

/* Open fx->r0 over nranks ranks in a new /tmp/argus-test-<tag>-XXXXXX, with the default
 * configuration, no spool and, when traces > 0, room for that many L4 trace plans (a
 * 65536-event ring; none are made). 0, or -1 when the directory or rank 0 did not open. */
int r0fx_open(struct r0fx *fx, const char *tag, uint32_t nranks, int traces);
/* Steps first .. first + n - 1 of every rank 0 .. nranks - 1 into r0 as one window (one
 * buffer of wire records): start 1 s x (step + 1), 0.9 s + rank us long, 0.7 s compute,
 * kernel-less; the steps of rank short_rank only before stop (UINT64_MAX: all). 0, or -1
 * when out of memory or a summary did not encode. */
int r0fx_ingest(struct argus_rank0 *r0, uint32_t nranks, uint64_t first, uint64_t n,
                uint32_t short_rank, uint64_t stop);
/* The cmocka teardown: *state is a calloc'ed struct r0fx opened by r0fx_open; closes rank
 * 0, removes the directory, frees it. 0. */
int r0fx_teardown(void **state);
/* The file `name` of r0's job directory, NUL-terminated, at most 1 MiB - 1 of it (caller
 * frees); NULL when it does not open or memory runs out. */
char *r0fx_slurp(const struct argus_rank0 *r0, const char *name);
/* The file `name` of r0's job directory parsed (caller yajl_tree_free's); NULL, with a line
 * and the text on stderr, when it is missing or not JSON. */
yajl_val r0fx_json(const struct argus_rank0 *r0, const char *name);

#endif /* ARGUS_TESTS_REDUCE_RANK0_FIXTURE_H */
