/* testknob.h — the test knobs: switches that make a rank misbehave on purpose (no Argus
 * thread, a mute rank, a skewed clock, a short store) so that the integration tests can
 * drive the paths that real failures take.
 *
 * They exist in test builds only. libargus.so carries no knob name and reads no knob
 * variable: it asks argus_testknob_lookup, a weak symbol that only test code defines —
 * tests/reduce/testknobs.c, built into the test-only tests/libargus_testknobs.so (which
 * tests/argus-run-build preloads beside libargus.so) and linked into the unit programs
 * that need a knob. That file maps each knob to its ARGUS_TEST_* variable. In an
 * installed library, or any process without that code, every knob is off.
 *
 * A knob is on only when its value is a plain decimal number other than 0: unset, empty,
 * "0" and anything unparsable all mean off. No allocation, no logging; any thread.
 */
#ifndef ARGUS_REDUCE_TESTKNOB_H
#define ARGUS_REDUCE_TESTKNOB_H

#include <stdlib.h>

enum argus_testknob {
    ARGUS_KNOB_NO_THREAD,      /* ARGUS_TEST_NO_THREAD: behave as if MULTIPLE was refused */
    ARGUS_KNOB_MUTE_RANK,      /* ARGUS_TEST_MUTE_RANK=R: rank R (> 0) never sends */
    ARGUS_KNOB_DEAF_PULL_RANK, /* ARGUS_TEST_DEAF_PULL_RANK=R: rank R never answers a pull */
    ARGUS_KNOB_CLOCK_SKEW_NS,  /* ARGUS_TEST_CLOCK_SKEW_NS=D: rank r's clock r x D ahead */
    ARGUS_KNOB_CLOCK_DRIFT_PPM, /* ARGUS_TEST_CLOCK_DRIFT_PPM=P: rank r's clock r x P fast */
    ARGUS_KNOB_STORE_CELLS,    /* ARGUS_TEST_STORE_CELLS=N: rank 0's store holds N cells */
    ARGUS_KNOB_SLOW_REPORT_MS, /* ARGUS_TEST_SLOW_REPORT_MS=D: rank 0's final report takes
                                * D ms more (a loaded or slow machine) */
    ARGUS_KNOB_COUNT
};

/* Test code only: the knob's raw value, or NULL when it is not set. Never defined in
 * libargus.so (a weak reference, NULL there). */
const char *argus_testknob_lookup(int knob) __attribute__((weak, visibility("default")));

/* The knob's value, 0 when off (see above). */
static inline double argus_testknob(enum argus_testknob k)
{
    const char *s = argus_testknob_lookup ? argus_testknob_lookup((int)k) : NULL;
    char *end = NULL;

    if (!s || !*s)
        return 0;
    double v = strtod(s, &end);
    return end && *end == '\0' && v == v ? v : 0; /* v == v: not NaN */
}

#endif /* ARGUS_REDUCE_TESTKNOB_H */
