/* testknobs.c — test code only: the definition of argus_testknob_lookup
 * (reduce/testknob.h), mapping each knob to its ARGUS_TEST_* environment variable. Built
 * into tests/libargus_testknobs.so, which tests/argus-run-build preloads beside
 * libargus.so, and linked into the unit programs that set a knob. Never part of an
 * installed library.
 */
#include <stdlib.h>

#include "reduce/testknob.h"

static const char *const knob_names[ARGUS_KNOB_COUNT] = {
    [ARGUS_KNOB_NO_THREAD] = "ARGUS_TEST_NO_THREAD",
    [ARGUS_KNOB_MUTE_RANK] = "ARGUS_TEST_MUTE_RANK",
    [ARGUS_KNOB_DEAF_PULL_RANK] = "ARGUS_TEST_DEAF_PULL_RANK",
    [ARGUS_KNOB_CLOCK_SKEW_NS] = "ARGUS_TEST_CLOCK_SKEW_NS",
    [ARGUS_KNOB_CLOCK_DRIFT_PPM] = "ARGUS_TEST_CLOCK_DRIFT_PPM",
    [ARGUS_KNOB_STORE_CELLS] = "ARGUS_TEST_STORE_CELLS",
    [ARGUS_KNOB_SLOW_REPORT_MS] = "ARGUS_TEST_SLOW_REPORT_MS",
};

__attribute__((visibility("default"))) const char *argus_testknob_lookup(int knob)
{
    return knob >= 0 && knob < ARGUS_KNOB_COUNT && knob_names[knob] ? getenv(knob_names[knob])
                                                                      : NULL;
}
