/* csv.c — steps.csv (docs/REPORT_SCHEMA.md: step,rank,start_ns,end_ns,forward_ms,
 * backward_ms,optimizer_ms,comm_ms,host_gap_ms) into step summaries, one per row, for
 * per-rank step times from any source. Rows carry no kernels, so only L1/L2 evidence
 * (step and phase times) comes out of them: compute time is the busy time outside
 * communication, split over phases by their wall times. Plain or gzip; bounded line
 * length; a bad row is an error naming the file and line (rows before it are kept).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "import/import.h"

#define LINE_MAX_CSV 1024

static int parse_row(char *line, uint64_t u[4], double d[5])
{
    char *p = line, *end;

    for (int i = 0; i < 9; i++) {
        while (*p == ' ')
            p++;
        if (i < 4) {
            if (*p < '0' || *p > '9')
                return -1;
            u[i] = strtoull(p, &end, 10);
        } else {
            d[i - 4] = strtod(p, &end);
            if (end == p || !(d[i - 4] >= 0 && d[i - 4] < 1e12))
                return -1;
        }
        if (end == p)
            return -1;
        p = end;
        while (*p == ' ')
            p++;
        if (i < 8 && *p++ != ',')
            return -1;
    }
    while (*p == '\r' || *p == '\n' || *p == ' ')
        p++;
    return *p ? -1 : 0;
}

int argus_steps_csv_import(const char *path, const struct argus_import_sink *sink,
                           uint32_t *max_rank, char *errbuf, size_t errlen)
{
    char line[LINE_MAX_CSV];
    struct argus_step_summary *s = calloc(1, sizeof *s);
    gzFile gz = gzopen(path, "rb");
    unsigned long lineno = 0, rows = 0;
    int rc = 0;

    *max_rank = 0;
    if (!gz || !s) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, gz ? "out of memory"
                                                                 : strerror(errno));
        rc = gz ? -ENOMEM : -errno;
        goto out;
    }
    while (gzgets(gz, line, sizeof line)) {
        uint64_t u[4];
        double d[5];
        lineno++;
        if (!strchr(line, '\n') && !gzeof(gz)) {
            snprintf(errbuf, errlen, "%s:%lu: line longer than %d bytes", path, lineno,
                     LINE_MAX_CSV - 1);
            rc = -EPROTO;
            goto out;
        }
        if (lineno == 1 && strncmp(line, "step,rank,", 10) == 0)
            continue;
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        if (parse_row(line, u, d) != 0 || u[3] < u[2] || u[1] >= (1u << 24)) {
            snprintf(errbuf, errlen, "%s:%lu: expected step,rank,start_ns,end_ns and five "
                     "non-negative millisecond figures", path, lineno);
            rc = -EPROTO;
            goto out;
        }
        memset(s, 0, sizeof *s);
        s->step = u[0];
        s->rank = (uint32_t)u[1];
        s->start_ns = u[2];
        s->end_ns = u[3];
        uint64_t wall = u[3] - u[2];
        s->phase_wall_ns[ARGUS_PH_FORWARD] = (uint64_t)(d[0] * 1e6);
        s->phase_wall_ns[ARGUS_PH_BACKWARD] = (uint64_t)(d[1] * 1e6);
        s->phase_wall_ns[ARGUS_PH_OPTIMIZER] = (uint64_t)(d[2] * 1e6);
        s->phase_wall_ns[ARGUS_PH_COMM] = (uint64_t)(d[3] * 1e6);
        s->phase_wall_ns[ARGUS_PH_HOST] = (uint64_t)(d[4] * 1e6);
        s->collective_ns = s->phase_wall_ns[ARGUS_PH_COMM];
        s->host_gap_ns = s->phase_wall_ns[ARGUS_PH_HOST] < wall ? s->phase_wall_ns[ARGUS_PH_HOST]
                                                                : wall;
        s->busy_ns = wall - s->host_gap_ns;
        s->compute_ns = s->busy_ns > s->collective_ns ? s->busy_ns - s->collective_ns : 0;
        uint64_t ph = s->phase_wall_ns[0] + s->phase_wall_ns[1] + s->phase_wall_ns[2];
        for (int p = 0; p < 3 && ph; p++)
            s->phase_compute_ns[p] =
                (uint64_t)((double)s->compute_ns * (double)s->phase_wall_ns[p] / (double)ph);
        s->flags = ARGUS_SF_PARTIAL;
        if (s->rank + 1 > *max_rank)
            *max_rank = s->rank + 1;
        rows++;
        if (sink && sink->summary)
            sink->summary(sink->ctx, s);
    }
    if (!gzeof(gz)) {
        snprintf(errbuf, errlen, "%s:%lu: read error (damaged gzip?)", path, lineno);
        rc = -EIO;
    } else if (rows == 0) {
        snprintf(errbuf, errlen, "%s: no rows", path);
        rc = -ENODATA;
    }
out:
    if (gz)
        gzclose(gz);
    free(s);
    return rc;
}
