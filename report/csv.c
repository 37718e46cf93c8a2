/* csv.c — steps.csv: one row per (step, rank) held in the job store, in step then
 * rank order: step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,
 * host_gap_ms. Written to steps.csv.partial and renamed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report.h"
#include "report/report_int.h"
#include "common/outdir.h"

int an_write_csv(const struct argus_outdir *od, const struct argus_jobstore *js,
                 char *errbuf, size_t errlen);

int an_write_csv(const struct argus_outdir *od, const struct argus_jobstore *js,
                 char *errbuf, size_t errlen)
{
    const uint32_t nr = argus_jobstore_nranks(js);
    uint64_t *steps;
    size_t ns, len = 0;
    char *data = NULL;
    int rc = an_job_steps(js, &steps, &ns);

    if (rc) {
        snprintf(errbuf, errlen, "steps.csv: out of memory");
        return rc;
    }
    FILE *f = open_memstream(&data, &len);
    if (!f) {
        free(steps);
        snprintf(errbuf, errlen, "steps.csv: out of memory");
        return -ENOMEM;
    }
    fputs("step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms\n",
          f);
    for (size_t i = 0; i < ns; i++)
        for (uint32_t r = 0; r < nr; r++) {
            const struct argus_step_summary *s = argus_jobstore_get(js, r, steps[i]);
            if (!s)
                continue;
            uint64_t hg = s->host_gap_ns ? s->host_gap_ns : s->phase_wall_ns[ARGUS_PH_HOST];
            fprintf(f, "%llu,%u,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                    (unsigned long long)s->step, r, (unsigned long long)s->start_ns,
                    (unsigned long long)s->end_ns, s->phase_wall_ns[ARGUS_PH_FORWARD] / 1e6,
                    s->phase_wall_ns[ARGUS_PH_BACKWARD] / 1e6,
                    s->phase_wall_ns[ARGUS_PH_OPTIMIZER] / 1e6,
                    s->phase_wall_ns[ARGUS_PH_COMM] / 1e6, (double)hg / 1e6);
        }
    free(steps);
    return an_emit_memstream(f, &data, &len, od, "steps.csv", errbuf, errlen);
}
