/* ingest.c — the ingest of encoded wire records into the job store
 * (store/jobstore.h: argus_jobstore_ingest, argus_jobstore_ingest_buffer[_but]): each
 * record decoded and stored through the store's own adds (store/retain.c,
 * store/add_rows.c, store/names.c, store/ranks.c). The top of the store's files
 * (store/jobstore_int.h): the only one that knows wire records, and none of the others
 * calls it but jobstore.c, to free its decode targets. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/errbuf.h"
#include "common/aggrow.h"
#include "common/wire_rows.h"
#include "common/aggregate.h"

#include <errno.h>
#include <stdlib.h>

void jobstore_ingest_fini(struct argus_jobstore *js)
{
    free(js->rowbuf);
    js->rowbuf = NULL;
}

/* ---- ingest ------------------------------------------------------------------------ */

/* The decode target (the store's scratch summary). 0 or -ENOMEM with errbuf filled. */
static int scratch_ready(struct argus_jobstore *js, char *errbuf, size_t errlen)
{
    if (!jobstore_scratch_summary(js)) {
        argus_seterr(errbuf, errlen, "out of memory decoding a summary");
        return -ENOMEM;
    }
    return 0;
}

/* Rank 0's thin cells (wire_rows.h): each row as its thin summary. The record is decoded
 * first, then stored in one argus_jobstore_add_rows (cheaper than row by row: see
 * store/add_rows.c); the rows before a malformed one or one outside the job are stored, as
 * when each row was added as it was read. */
static int ingest_rows(struct argus_jobstore *js, const uint8_t *rec, size_t len,
                       char *errbuf, size_t errlen)
{
    struct argus_rows_reader rd;
    struct argus_agg_row row;
    int rc = 0;
    size_t n = 0;

    if (!js->rowbuf && !(js->rowbuf = malloc(ARGUS_ROWS_PER_RECORD * sizeof *js->rowbuf))) {
        argus_seterr(errbuf, errlen, "out of memory decoding rows");
        return -ENOMEM;
    }
    if ((rc = argus_rows_open(rec, len, &rd, errbuf, errlen)) < 0)
        return rc;
    /* at most ARGUS_ROWS_PER_RECORD rows: argus_rows_open checked the count */
    while ((rc = argus_rows_next(&rd, &row, errbuf, errlen)) > 0) {
        if (row.rank >= js->n_ranks) {
            argus_seterr(errbuf, errlen, "row of rank %u, step %llu: rank outside job of %u",
                         row.rank, (unsigned long long)row.step, js->n_ranks);
            rc = -EINVAL;
            break;
        }
        js->rowbuf[n++] = row;
    }
    int add = argus_jobstore_add_rows(js, js->rowbuf, n);
    if (add < 0) {
        argus_seterr(errbuf, errlen, "out of memory storing a row");
        return add;
    }
    return rc;
}

int argus_jobstore_ingest(struct argus_jobstore *js, int type, const uint8_t *rec,
                          size_t len, char *errbuf, size_t errlen)
{
    int rc;

    if (!js || !rec)
        return -EINVAL;
    switch (type) {
    case ARGUS_REC_SUMMARY:
        if ((rc = scratch_ready(js, errbuf, errlen)))
            return rc;
        rc = argus_summary_decode(rec, len, js->scratch, errbuf, errlen);
        if (rc < 0)
            return rc;
        rc = argus_jobstore_add_summary(js, js->scratch);
        if (rc == -EINVAL)
            argus_seterr(errbuf, errlen, "summary of rank %u, step %llu: rank outside job of %u",
                   js->scratch->rank, (unsigned long long)js->scratch->step, js->n_ranks);
        else if (rc < 0)
            argus_seterr(errbuf, errlen, "out of memory storing a summary");
        return rc;
    case ARGUS_REC_NAME: {
        uint64_t hash;
        rc = argus_name_decode(rec, len, &hash, js->name_scratch, errbuf, errlen);
        if (rc < 0)
            return rc;
        rc = argus_jobstore_add_name(js, hash, js->name_scratch);
        if (rc < 0)
            argus_seterr(errbuf, errlen, "out of memory storing a kernel name");
        return rc;
    }
    case ARGUS_REC_JOBINFO: {
        struct argus_rank_info ri;
        rc = argus_rankinfo_decode(rec, len, &ri, errbuf, errlen);
        if (rc < 0)
            return rc;
        rc = argus_jobstore_set_rankinfo(js, &ri);
        if (rc == -ENOMEM)
            argus_seterr(errbuf, errlen, "out of memory storing rank info");
        else if (rc < 0)
            argus_seterr(errbuf, errlen, "rank info of rank %u: rank outside job of %u", ri.rank,
                   js->n_ranks);
        return rc;
    }
    case ARGUS_REC_ROWS:
        return ingest_rows(js, rec, len, errbuf, errlen);
    default:
        argus_seterr(errbuf, errlen, "unknown record type %d", type);
        return -EPROTO;
    }
}

int argus_jobstore_ingest_buffer(struct argus_jobstore *js, const uint8_t *buf, size_t len,
                                 uint64_t base_offset, char *errbuf, size_t errlen)
{
    return argus_jobstore_ingest_buffer_but(js, buf, len, -1, base_offset, errbuf, errlen);
}

int argus_jobstore_ingest_buffer_but(struct argus_jobstore *js, const uint8_t *buf,
                                     size_t len, int skip_type, uint64_t base_offset,
                                     char *errbuf, size_t errlen)
{
    size_t off = 0;

    if (!js || (!buf && len))
        return -EINVAL;
    while (off < len) {
        int type = 0;
        long n = argus_record_peek(buf + off, len - off, base_offset + off, &type, errbuf,
                                   errlen);
        if (n < 0)
            return (int)n;
        char inner[256] = "";
        int rc = type == skip_type ? 0 : argus_jobstore_ingest(js, type, buf + off, (size_t)n,
                                                               inner, sizeof inner);
        if (rc < 0) {
            argus_seterr(errbuf, errlen, "record at offset %llu: %s",
                   (unsigned long long)(base_offset + off), inner);
            return rc;
        }
        off += (size_t)n;
    }
    return 0;
}
