/* jobstore.c — the in-memory store of one job (jobstore.h): per-rank arrays of trimmed
 * step summaries kept sorted by step, the kernel-name dictionary (open addressing on the
 * 64-bit name hash), rank info, job metadata and missing-rank marks.
 *
 * Summaries are stored trimmed: only offsetof(kmodes) + n_kmodes entries are allocated, so
 * readers must never touch kmodes[i] for i >= n_kmodes. One owner; not thread-safe.
 */
#include "common/jobstore.h"
#include "common/errbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rank_slot {
    struct argus_step_summary **sums; /* ascending step */
    size_t n, cap;
    struct argus_rank_info info;
    int has_info;
    uint64_t missing_since; /* UINT64_MAX when present */
};

struct name_entry {
    uint64_t hash;
    char *name; /* NULL: free slot */
};

struct argus_jobstore {
    uint32_t n_ranks;
    struct rank_slot *ranks;
    size_t total;
    struct argus_job_meta meta;
    struct name_entry *names; /* capacity is a power of two */
    size_t names_cap, names_used;
    struct argus_step_summary *scratch; /* decode target for ingest, allocated once */
    char name_scratch[ARGUS_NAME_MAX + 1];
};

int argus_jobstore_create(uint32_t n_ranks, struct argus_jobstore **out)
{
    struct argus_jobstore *js;

    if (!out || n_ranks == 0)
        return -EINVAL;
    *out = NULL;
    js = calloc(1, sizeof *js);
    if (!js)
        return -ENOMEM;
    js->n_ranks = n_ranks;
    js->ranks = calloc(n_ranks, sizeof *js->ranks);
    if (!js->ranks) {
        free(js);
        return -ENOMEM;
    }
    for (uint32_t r = 0; r < n_ranks; r++)
        js->ranks[r].missing_since = UINT64_MAX;
    snprintf(js->meta.step, sizeof js->meta.step, "0");
    *out = js;
    return 0;
}

void argus_jobstore_free(struct argus_jobstore *js)
{
    if (!js)
        return;
    for (uint32_t r = 0; r < js->n_ranks; r++) {
        for (size_t i = 0; i < js->ranks[r].n; i++)
            free(js->ranks[r].sums[i]);
        free(js->ranks[r].sums);
    }
    free(js->ranks);
    for (size_t i = 0; i < js->names_cap; i++)
        free(js->names[i].name);
    free(js->names);
    free(js->scratch);
    free(js);
}

uint32_t argus_jobstore_nranks(const struct argus_jobstore *js)
{
    return js ? js->n_ranks : 0;
}

struct argus_job_meta *argus_jobstore_meta(struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

const struct argus_job_meta *argus_jobstore_meta_c(const struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

/* ---- summaries --------------------------------------------------------------------- */

/* Index of the first summary with step >= step (n when none). */
static size_t lower_bound(const struct rank_slot *rs, uint64_t step)
{
    size_t lo = 0, hi = rs->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->sums[mid]->step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct argus_step_summary *summary_dup(const struct argus_step_summary *s)
{
    size_t head = offsetof(struct argus_step_summary, kmodes);
    size_t body = (size_t)s->n_kmodes * sizeof s->kmodes[0];
    struct argus_step_summary *c = malloc(head + body);

    if (!c)
        return NULL;
    memcpy(c, s, head + body);
    return c;
}

int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s)
{
    if (!js || !s || s->rank >= js->n_ranks || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    struct rank_slot *rs = &js->ranks[s->rank];
    size_t at = (rs->n && rs->sums[rs->n - 1]->step < s->step) ? rs->n
                                                                : lower_bound(rs, s->step);
    struct argus_step_summary *c = summary_dup(s);
    if (!c)
        return -ENOMEM;
    if (at < rs->n && rs->sums[at]->step == s->step) {
        free(rs->sums[at]);
        rs->sums[at] = c;
        return 0;
    }
    if (rs->n == rs->cap) {
        size_t ncap = rs->cap ? rs->cap * 2 : 64;
        struct argus_step_summary **ns = realloc(rs->sums, ncap * sizeof *ns);
        if (!ns) {
            free(c);
            return -ENOMEM;
        }
        rs->sums = ns;
        rs->cap = ncap;
    }
    if (at < rs->n)
        memmove(&rs->sums[at + 1], &rs->sums[at], (rs->n - at) * sizeof rs->sums[0]);
    rs->sums[at] = c;
    rs->n++;
    js->total++;
    return 0;
}

const struct argus_step_summary *argus_jobstore_get(const struct argus_jobstore *js,
                                                    uint32_t rank, uint64_t step)
{
    if (!js || rank >= js->n_ranks)
        return NULL;
    const struct rank_slot *rs = &js->ranks[rank];
    size_t at = lower_bound(rs, step);
    return (at < rs->n && rs->sums[at]->step == step) ? rs->sums[at] : NULL;
}

size_t argus_jobstore_rank_steps(const struct argus_jobstore *js, uint32_t rank,
                                 const struct argus_step_summary *const **out)
{
    if (!js || rank >= js->n_ranks || js->ranks[rank].n == 0) {
        if (out)
            *out = NULL;
        return 0;
    }
    if (out)
        *out = (const struct argus_step_summary *const *)js->ranks[rank].sums;
    return js->ranks[rank].n;
}

int argus_jobstore_step_range(const struct argus_jobstore *js, uint64_t *first,
                              uint64_t *last)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    int any = 0;

    if (!js)
        return -EINVAL;
    for (uint32_t r = 0; r < js->n_ranks; r++) {
        const struct rank_slot *rs = &js->ranks[r];
        if (rs->n == 0)
            continue;
        any = 1;
        if (rs->sums[0]->step < lo)
            lo = rs->sums[0]->step;
        if (rs->sums[rs->n - 1]->step > hi)
            hi = rs->sums[rs->n - 1]->step;
    }
    if (!any)
        return -ENOENT;
    if (first)
        *first = lo;
    if (last)
        *last = hi;
    return 0;
}

size_t argus_jobstore_count(const struct argus_jobstore *js)
{
    return js ? js->total : 0;
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
    rs->info = *ri;
    rs->info.host[ARGUS_HOST_MAX - 1] = '\0';
    rs->has_info = 1;
    return 0;
}

const struct argus_rank_info *argus_jobstore_rankinfo(const struct argus_jobstore *js,
                                                      uint32_t rank)
{
    if (!js || rank >= js->n_ranks || !js->ranks[rank].has_info)
        return NULL;
    return &js->ranks[rank].info;
}

void argus_jobstore_mark_missing(struct argus_jobstore *js, uint32_t rank,
                                 uint64_t from_step)
{
    if (!js || rank >= js->n_ranks)
        return;
    if (from_step < js->ranks[rank].missing_since)
        js->ranks[rank].missing_since = from_step;
}

uint64_t argus_jobstore_missing_since(const struct argus_jobstore *js, uint32_t rank)
{
    if (!js || rank >= js->n_ranks)
        return UINT64_MAX;
    return js->ranks[rank].missing_since;
}

/* ---- ingest ------------------------------------------------------------------------ */

int argus_jobstore_ingest(struct argus_jobstore *js, int type, const uint8_t *rec,
                          size_t len, char *errbuf, size_t errlen)
{
    int rc;

    if (!js || !rec)
        return -EINVAL;
    switch (type) {
    case ARGUS_REC_SUMMARY:
        if (!js->scratch) {
            js->scratch = malloc(sizeof *js->scratch);
            if (!js->scratch) {
                argus_seterr(errbuf, errlen, "out of memory decoding a summary");
                return -ENOMEM;
            }
        }
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
        if (rc < 0)
            argus_seterr(errbuf, errlen, "rank info of rank %u: rank outside job of %u", ri.rank,
                   js->n_ranks);
        return rc;
    }
    default:
        argus_seterr(errbuf, errlen, "unknown record type %d", type);
        return -EPROTO;
    }
}

int argus_jobstore_ingest_buffer(struct argus_jobstore *js, const uint8_t *buf, size_t len,
                                 uint64_t base_offset, char *errbuf, size_t errlen)
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
        int rc = argus_jobstore_ingest(js, type, buf + off, (size_t)n, inner, sizeof inner);
        if (rc < 0) {
            argus_seterr(errbuf, errlen, "record at offset %llu: %s",
                   (unsigned long long)(base_offset + off), inner);
            return rc;
        }
        off += (size_t)n;
    }
    return 0;
}
