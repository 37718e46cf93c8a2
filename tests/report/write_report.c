/* write_report.c — test helper: builds a synthetic 16-rank job (tests/synth/synth.c) with one
 * injected fault and writes the full report (report.json/md, steps.csv, metrics.prom, SVGs) into a
 * directory, for the shell tests that validate the files with outside tools (promtool,
 * an XML parser). Usage: write_report DIR clean|straggler|comm|host|regression. Test-only.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "tests/synth/synth.h"

int main(int argc, char **argv)
{
    struct synth_opts o;
    struct argus_jobstore *js = NULL;
    struct argus_result r;
    char err[512];

    if (argc != 3) {
        fprintf(stderr, "usage: write_report DIR clean|straggler|comm|host|regression\n");
        return 2;
    }
    synth_default(&o, 7);
    const char *k = argv[2];
    if (!strcmp(k, "straggler")) {
        struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 20, 45, 1.5);
        f->ranks[f->nranks++] = 2;
        f->ranks[f->nranks++] = 3;
    } else if (!strcmp(k, "comm")) {
        struct synth_fault *f = synth_add(&o, SY_COMM, 20, 50, 3.0);
        f->group_index = 1;
    } else if (!strcmp(k, "host")) {
        struct synth_fault *f = synth_add(&o, SY_HOST, 20, 40, 1.0);
        f->ms = 40;
        f->ranks[f->nranks++] = 6;
    } else if (!strcmp(k, "regression")) {
        synth_add(&o, SY_REGRESSION, 30, 59, 1.2);
    } else if (strcmp(k, "clean") != 0) {
        fprintf(stderr, "write_report: unknown case %s\n", k);
        return 2;
    }
    if (synth_job(&o, &js) != 0 || argus_analyze(js, NULL, &r) != 0) {
        fprintf(stderr, "write_report: synthesis or analysis failed\n");
        return 1;
    }
    snprintf(argus_jobstore_meta(js)->id, sizeof argus_jobstore_meta(js)->id, "t\"1\\%s", k);
    int rc = argus_report_write(argv[1], js, &r, err, sizeof err);
    if (rc)
        fprintf(stderr, "write_report: %s\n", err);
    printf("%zu anomalies\n", r.n_anomalies);
    argus_result_free(&r);
    argus_jobstore_free(js);
    return rc ? 1 : 0;
}
