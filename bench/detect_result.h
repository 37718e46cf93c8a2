/* detect_result.h — internal to bench/detect: everything measured at one data level, and
 * the one JSON line that says it (bench/detect_result.c).
 */
#ifndef ARGUS_BENCH_DETECT_RESULT_H
#define ARGUS_BENCH_DETECT_RESULT_H

#include <yajl/yajl_gen.h>

#include "bench/detect_runs.h"

/* Everything measured at one data level */
struct level_res {
    int on;
    struct tally per[NSCEN], all, ge12, ge13;
    struct clean cl;
};

/* The result object into g: bench, source, ranks, seeds, the schedule, condense, the
 * kernels level's figures at the top (when it ran), every level run under "levels", and
 * seconds. 0, -EIO or -ENOMEM. */
int detect_put_result(yajl_gen g, int ranks, int seeds, const struct level_res *lv,
                      double seconds);

#endif /* ARGUS_BENCH_DETECT_RESULT_H */
