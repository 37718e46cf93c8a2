/* synth_run.h — what the analysis tests share around a synthetic job (tests/synth/synth.h): build
 * it, analyse it (failing the test if either fails), and with ARGUS_TEST_VERBOSE print every
 * anomaly as report.json would. Include after <cmocka.h>. */
#ifndef ARGUS_TESTS_ANALYSIS_SYNTH_RUN_H
#define ARGUS_TESTS_ANALYSIS_SYNTH_RUN_H

#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "tests/synth/synth.h"

static inline void synth_dump(const struct argus_jobstore *js, const struct argus_result *r)
{
    fprintf(stderr, "  %zu anomalies\n", r->n_anomalies);
    for (size_t i = 0; i < r->n_anomalies; i++) {
        char line[8192];
        if (argus_report_anomaly_json(js, &r->anomalies[i], line, sizeof line) > 0)
            fprintf(stderr, "  %s\n", line);
    }
}

/* The job of o, analysed into *r; the caller frees both. */
static inline struct argus_jobstore *synth_run(const struct synth_opts *o,
                                               struct argus_result *r)
{
    struct argus_jobstore *js = NULL;
    assert_int_equal(synth_job(o, &js), 0);
    assert_int_equal(argus_analyze(js, NULL, r), 0);
    if (getenv("ARGUS_TEST_VERBOSE"))
        synth_dump(js, r);
    return js;
}

#endif /* ARGUS_TESTS_ANALYSIS_SYNTH_RUN_H */
