/* nccl_profiler_check.h — tests only: the driver's check (tests/tracer/nccl_profiler_driver.c
 * and nccl_profiler_stress.c). CHECK(cond, fmt, ...) prints "FAIL file:line: cond: why" on
 * stdout and counts one failure in the including file's own `static int failures`.
 */
#ifndef ARGUS_TESTS_NCCL_PROFILER_CHECK_H
#define ARGUS_TESTS_NCCL_PROFILER_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#endif /* ARGUS_TESTS_NCCL_PROFILER_CHECK_H */
