/* spool.c — glue between argus-analyze and Argus's own saved data: format detection
 * by content for every importer, and spool files (summaries.argus, common/spool.h) read
 * straight into the job store with the store's own record decoder (no second decoder).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "import/import.h"
#include "common/spool.h"
#include "common/wire.h"
#include "common/wire_rows.h"

const char *argus_import_format_name(int fmt)
{
    switch (fmt) {
    case ARGUS_FMT_KINETO: return "kineto";
    case ARGUS_FMT_SPOOL: return "spool";
    case ARGUS_FMT_STEPS_CSV: return "steps.csv";
    default: return "unknown";
    }
}

int argus_import_detect(const char *path, char *errbuf, size_t errlen)
{
    unsigned char buf[256];
    gzFile gz = gzopen(path, "rb");
    int n;
    size_t i = 0;

    if (!gz) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -errno;
    }
    n = gzread(gz, buf, sizeof buf);
    gzclose(gz);
    if (n < 0) {
        snprintf(errbuf, errlen, "%s: cannot read (damaged gzip?)", path);
        return -EIO;
    }
    if (argus_spool_sniff(buf, (size_t)n))
        return ARGUS_FMT_SPOOL;
    if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
        i = 3; /* UTF-8 byte order mark */
    while (i < (size_t)n && isspace(buf[i]))
        i++;
    if (i < (size_t)n && (buf[i] == '{' || buf[i] == '['))
        return ARGUS_FMT_KINETO;
    if ((size_t)n - i >= 10 && memcmp(buf + i, "step,rank,", 10) == 0)
        return ARGUS_FMT_STEPS_CSV;
    snprintf(errbuf, errlen, "%s: unknown format: neither a Kineto/Chrome trace (JSON), an "
             "Argus spool nor a steps.csv%s", path, n == 0 ? " (empty file)" : "");
    return ARGUS_FMT_UNKNOWN;
}

struct scan {
    uint32_t n_ranks;
    struct argus_step_summary *s;
    char err[256];
};

static int scan_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct scan *sc = ctx;

    if (type == ARGUS_REC_SUMMARY) {
        if (argus_summary_decode(rec, len, sc->s, sc->err, sizeof sc->err) == 0 &&
            sc->s->rank + 1 > sc->n_ranks)
            sc->n_ranks = sc->s->rank + 1;
    } else if (type == ARGUS_REC_ROWS) { /* a condensed job's thin cells */
        struct argus_rows_reader rd;
        struct argus_agg_row row;
        if (argus_rows_open(rec, len, &rd, sc->err, sizeof sc->err) == 0)
            while (argus_rows_next(&rd, &row, sc->err, sizeof sc->err) > 0)
                if (row.rank + 1 > sc->n_ranks)
                    sc->n_ranks = row.rank + 1;
    } else if (type == ARGUS_REC_JOBINFO) {
        struct argus_rank_info ri;
        if (argus_rankinfo_decode(rec, len, &ri, sc->err, sizeof sc->err) == 0) {
            if (ri.rank + 1 > sc->n_ranks)
                sc->n_ranks = ri.rank + 1;
            if (ri.world_size > sc->n_ranks && ri.world_size <= (1u << 24))
                sc->n_ranks = ri.world_size;
        }
    }
    return 0;
}

int argus_spool_scan(const char *path, uint32_t *n_ranks, char *errbuf, size_t errlen)
{
    struct scan sc;
    int rc;

    memset(&sc, 0, sizeof sc);
    sc.s = malloc(sizeof *sc.s);
    if (!sc.s) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    rc = argus_spool_read(path, scan_rec, &sc, errbuf, errlen);
    free(sc.s);
    *n_ranks = sc.n_ranks;
    return rc;
}

struct ingest {
    struct argus_jobstore *js;
    char err[512];
    uint64_t bad;
};

static int ingest_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct ingest *in = ctx;

    if (argus_jobstore_ingest(in->js, type, rec, len, in->err, sizeof in->err) != 0)
        in->bad++;
    return 0;
}

int argus_spool_import(const char *path, struct argus_jobstore *js, char *errbuf,
                       size_t errlen)
{
    struct ingest in;
    int rc;

    memset(&in, 0, sizeof in);
    in.js = js;
    rc = argus_spool_read(path, ingest_rec, &in, errbuf, errlen);
    if (rc == 0 && in.bad) {
        snprintf(errbuf, errlen, "%s: %llu records rejected by the job store; first: %s",
                 path, (unsigned long long)in.bad, in.err);
        rc = -EPROTO;
    }
    return rc;
}
