/* store/ingest.c — the job store's dictionaries and marks (store/jobstore.h): the kernel-name
 * dictionary (open addressing on the 64-bit name hash), per-rank info, missing-rank marks,
 * and the ingest of encoded wire records. Summaries and retention are in store/jobstore.c.
 * One owner; not thread-safe.
 */
#include "store/jobstore_int.h"
#include "common/errbuf.h"
#include "common/aggrow.h"
#include "common/wire_rows.h"
#include "common/aggregate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void argus_jobstore_dict_free(struct argus_jobstore *js)
{
    for (size_t i = 0; i < js->names_cap; i++)
        free(js->names[i].name);
    free(js->names);
    free(js->scratch);
    free(js->rowbuf);
}

/* ---- names ------------------------------------------------------------------------- */

/* Spread the hash (it is already FNV-1a, but its low bits are what we index with). */
static size_t name_slot(uint64_t hash, size_t cap)
{
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdull;
    hash ^= hash >> 33;
    return (size_t)hash & (cap - 1);
}

static int names_grow(struct argus_jobstore *js)
{
    size_t ncap = js->names_cap ? js->names_cap * 2 : 1024;
    struct name_entry *nt = calloc(ncap, sizeof *nt);

    if (!nt)
        return -ENOMEM;
    for (size_t i = 0; i < js->names_cap; i++) {
        if (!js->names[i].name)
            continue;
        size_t j = name_slot(js->names[i].hash, ncap);
        while (nt[j].name)
            j = (j + 1) & (ncap - 1);
        nt[j] = js->names[i];
    }
    free(js->names);
    js->names = nt;
    js->names_cap = ncap;
    return 0;
}

static struct name_entry *name_find(const struct argus_jobstore *js, uint64_t hash)
{
    if (js->names_cap == 0)
        return NULL;
    size_t j = name_slot(hash, js->names_cap);
    while (js->names[j].name) {
        if (js->names[j].hash == hash)
            return &js->names[j];
        j = (j + 1) & (js->names_cap - 1);
    }
    return NULL;
}

int argus_jobstore_add_name(struct argus_jobstore *js, uint64_t hash, const char *name)
{
    if (!js || !name)
        return -EINVAL;
    size_t n = strnlen(name, ARGUS_NAME_MAX);
    struct name_entry *e = name_find(js, hash);
    if (e && strncmp(e->name, name, n) == 0 && e->name[n] == '\0')
        return 0;
    char *copy = malloc(n + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, name, n);
    copy[n] = '\0';
    if (e) { /* same hash, new spelling: the latest wins */
        free(e->name);
        e->name = copy;
        return 0;
    }
    if ((js->names_used + 1) * 2 > js->names_cap) {
        int rc = names_grow(js);
        if (rc < 0) {
            free(copy);
            return rc;
        }
    }
    size_t j = name_slot(hash, js->names_cap);
    while (js->names[j].name)
        j = (j + 1) & (js->names_cap - 1);
    js->names[j].hash = hash;
    js->names[j].name = copy;
    js->names_used++;
    return 0;
}

const char *argus_jobstore_name(const struct argus_jobstore *js, uint64_t hash)
{
    if (!js)
        return NULL;
    const struct name_entry *e = name_find(js, hash);
    return e ? e->name : NULL;
}

/* ---- ranks ------------------------------------------------------------------------- */

int argus_jobstore_set_rankinfo(struct argus_jobstore *js, const struct argus_rank_info *ri)
{
    if (!js || !ri || ri->rank >= js->n_ranks)
        return -EINVAL;
    struct rank_slot *rs = &js->ranks[ri->rank];
    if (!rs->info && !(rs->info = malloc(sizeof *rs->info)))
        return -ENOMEM;
    *rs->info = *ri;
    rs->info->host[ARGUS_HOST_MAX - 1] = '\0';
    return 0;
}

const struct argus_rank_info *argus_jobstore_rankinfo(const struct argus_jobstore *js,
                                                      uint32_t rank)
{
    if (!js || rank >= js->n_ranks)
        return NULL;
    return js->ranks[rank].info;
}

void argus_jobstore_mark_missing(struct argus_jobstore *js, uint32_t rank,
                                 uint64_t from_step)
{
    if (!js || rank >= js->n_ranks)
        return;
    if (from_step == UINT64_MAX) /* "never": not a mark */
        return;
    if (from_step < argus_jobstore_missing_since(js, rank))
        js->ranks[rank].missing_p1 = from_step + 1;
}

void argus_jobstore_clear_missing(struct argus_jobstore *js, uint32_t rank)
{
    if (js && rank < js->n_ranks)
        js->ranks[rank].missing_p1 = 0;
}

uint64_t argus_jobstore_missing_since(const struct argus_jobstore *js, uint32_t rank)
{
    if (!js || rank >= js->n_ranks)
        return UINT64_MAX;
    return js->ranks[rank].missing_p1 ? js->ranks[rank].missing_p1 - 1 : UINT64_MAX;
}

/* ---- ingest ------------------------------------------------------------------------ */

/* The decode scratch (one summary). 0 or -ENOMEM with errbuf filled. */
static int scratch_ready(struct argus_jobstore *js, char *errbuf, size_t errlen)
{
    if (!js->scratch && !(js->scratch = malloc(sizeof *js->scratch))) {
        argus_seterr(errbuf, errlen, "out of memory decoding a summary");
        return -ENOMEM;
    }
    return 0;
}

/* Rank 0's thin cells (wire_rows.h): each row as its thin summary. The record is decoded
 * first, then stored in one argus_jobstore_add_rows (cheaper than row by row: see
 * store/rows.c); the rows before a malformed one or one outside the job are stored, as
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
