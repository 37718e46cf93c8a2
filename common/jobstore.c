/* jobstore.c — the in-memory store of one job (jobstore.h): per-rank arrays of trimmed
 * step summaries kept sorted by step, the kernel-name dictionary (open addressing on the
 * 64-bit name hash), rank info, job metadata and missing-rank marks.
 *
 * Summaries are stored trimmed: only offsetof(kmodes) + n_kmodes entries are allocated, so
 * readers must never touch kmodes[i] for i >= n_kmodes. They are carved from an arena of
 * chunks that grow from 64 KiB to 2 MiB (2 MiB chunks aligned and advised for transparent
 * huge pages): rank 0 adds P summaries per step, and one malloc and a few page faults per
 * summary were most of its cost; each rank's first SUMS_CAP0 step pointers come from there
 * too. A replaced summary reuses its space when the new one fits,
 * else that space stays unused until the store is freed. One owner; not thread-safe.
 */
#include "common/jobstore.h"
#include "common/errbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (2u << 20)
#define SUMS_CAP0 16 /* first per-rank capacity, carved from the arena; then malloc, x2 */

struct chunk {
    struct chunk *next;
    size_t used, cap; /* bytes of data[] */
    _Alignas(64) unsigned char data[];
};

/* Kept small (32 bytes: rank 0 touches one per rank and step); zero means empty, so a
 * fresh store of P ranks is untouched calloc memory. */
struct rank_slot {
    struct argus_step_summary **sums; /* ascending step */
    uint32_t n, cap;
    uint64_t missing_p1;                  /* missing from step missing_p1 - 1; 0: present */
    struct argus_rank_info *info;         /* NULL until set */
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
    struct chunk *arena;                /* summaries; newest chunk first */
    size_t next_chunk;                  /* size of the next chunk */
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
    /* jobs of 512 ranks and more store >= 1 MiB per window: huge chunks from the start;
     * small jobs stay small */
    js->next_chunk = n_ranks >= 512 ? CHUNK_MAX : CHUNK_MIN;
    js->ranks = calloc(n_ranks, sizeof *js->ranks);
    if (!js->ranks) {
        free(js);
        return -ENOMEM;
    }
    snprintf(js->meta.step, sizeof js->meta.step, "0");
    *out = js;
    return 0;
}

void argus_jobstore_free(struct argus_jobstore *js)
{
    if (!js)
        return;
    for (uint32_t r = 0; r < js->n_ranks; r++) {
        if (js->ranks[r].cap > SUMS_CAP0)
            free(js->ranks[r].sums);
        free(js->ranks[r].info);
    }
    while (js->arena) {
        struct chunk *n = js->arena->next;
        free(js->arena);
        js->arena = n;
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

/* The bytes a trimmed summary holds, and the arena space it takes. */
static size_t summary_bytes(const struct argus_step_summary *s)
{
    return offsetof(struct argus_step_summary, kmodes) +
           (size_t)s->n_kmodes * sizeof s->kmodes[0];
}

static size_t summary_size(const struct argus_step_summary *s)
{
    return (summary_bytes(s) + 63) & ~(size_t)63;
}

/* n bytes (a multiple of 64) from the arena; NULL when out of memory. */
static void *arena_alloc(struct argus_jobstore *js, size_t n)
{
    struct chunk *c = js->arena;

    if (!c || c->cap - c->used < n) {
        size_t sz = js->next_chunk ? js->next_chunk : CHUNK_MIN;
        while (sz - sizeof *c < n)
            sz *= 2;
        void *p = NULL;
        if (sz >= CHUNK_MAX) {
            if (posix_memalign(&p, CHUNK_MAX, sz) != 0)
                p = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
            if (p)
                madvise(p, sz, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
        } else {
            p = malloc(sz);
        }
        if (!p)
            return NULL;
        c = p;
        c->next = js->arena;
        c->used = 0;
        c->cap = sz - sizeof *c;
        js->arena = c;
        js->next_chunk = sz < CHUNK_MAX ? sz * 2 : sz;
    }
    void *out = c->data + c->used;
    c->used += n;
    return out;
}

int argus_jobstore_add_summary(struct argus_jobstore *js, const struct argus_step_summary *s)
{
    if (!js || !s || s->rank >= js->n_ranks || s->n_kmodes > ARGUS_MAX_KMODES)
        return -EINVAL;
    struct rank_slot *rs = &js->ranks[s->rank];
    size_t at = (rs->n && rs->sums[rs->n - 1]->step < s->step) ? rs->n
                                                                : lower_bound(rs, s->step);
    size_t size = summary_size(s);
    if (at < rs->n && rs->sums[at]->step == s->step) {
        struct argus_step_summary *old = rs->sums[at];
        struct argus_step_summary *c = summary_size(old) >= size ? old
                                                                 : arena_alloc(js, size);
        if (!c)
            return -ENOMEM;
        memmove(c, s, summary_bytes(s));
        rs->sums[at] = c;
        return 0;
    }
    if (rs->n == rs->cap) {
        size_t ncap = rs->cap ? (size_t)rs->cap * 2 : SUMS_CAP0;
        if (ncap > UINT32_MAX)
            return -ENOMEM;
        struct argus_step_summary **ns;
        if (ncap == SUMS_CAP0) { /* a rank's first steps: no malloc, no page of its own */
            ns = arena_alloc(js, SUMS_CAP0 * sizeof *ns);
        } else if (rs->cap == SUMS_CAP0) {
            ns = malloc(ncap * sizeof *ns);
            if (ns)
                memcpy(ns, rs->sums, rs->n * sizeof *ns);
        } else {
            ns = realloc(rs->sums, ncap * sizeof *ns);
        }
        if (!ns)
            return -ENOMEM;
        rs->sums = ns;
        rs->cap = (uint32_t)ncap;
    }
    struct argus_step_summary *c = arena_alloc(js, size);
    if (!c)
        return -ENOMEM;
    memcpy(c, s, summary_bytes(s));
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
        if (rc == -ENOMEM)
            argus_seterr(errbuf, errlen, "out of memory storing rank info");
        else if (rc < 0)
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
