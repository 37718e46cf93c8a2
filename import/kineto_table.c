/* kineto_table.c — the Kineto importer's helpers (import/import_int.h): number parsing from
 * YAJL's raw number text (µs to ns without floating point for the usual forms), the
 * compact growable tables with their memory limit (past it, they are spilled to a
 * temporary file: import/kineto_spill.c), kernel-name interning, and the rank
 * taken from a file name. No I/O; never trusts its input.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "import/import_int.h"

/* ---- numbers ----------------------------------------------------------------------- */

/* "123", "-4", "1694128201429795", "4203669603187.439", "1e3": microseconds -> ns. */
int kt_parse_us(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0, frac = 0;
    int64_t v = 0;

    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i >= n || !isdigit((unsigned char)s[i]))
        return -1;
    for (; i < n && isdigit((unsigned char)s[i]); i++) {
        if (v > (INT64_MAX - 9) / 10 / 1000)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    v *= 1000;
    if (i < n && s[i] == '.') {
        int64_t scale = 100;
        for (i++; i < n && isdigit((unsigned char)s[i]); i++, frac++)
            if (scale) {
                v += (s[i] - '0') * scale;
                scale /= 10;
            }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        char buf[64];
        if (n >= sizeof buf)
            return -1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        double d = strtod(buf, NULL) * 1000.0;
        if (!(d > -9e18 && d < 9e18))
            return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (i != n)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int kt_parse_int(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    size_t i = 0;
    int neg = 0;

    if (i < n && s[i] == '-')
        neg = 1, i++;
    if (i >= n)
        return -1;
    for (; i < n; i++) {
        if (!isdigit((unsigned char)s[i]) || v > (INT64_MAX - 9) / 10)
            return -1; /* fractions, exponents, huge values: not an id */
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

/* ---- tables -------------------------------------------------------------------------- */

/* Spill the spillable tables when they hold something; 0 when memory was freed. */
static int make_room(struct kt_trace *t)
{
    if (t->over_mem || t->kernels.n + t->launches.n + t->ranges.n == 0 || kt_spill(t) != 0) {
        t->over_mem = 1;
        return -ENOMEM;
    }
    return 0;
}

int kt_vec_push(struct kt_trace *t, struct kt_vec *v, const void *elem)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        /* while realloc copies, the old and the new block are both held */
        if (t->mem + nc * v->elem > t->max_mem) {
            if (make_room(t) != 0)
                return -ENOMEM;
            return kt_vec_push(t, v, elem); /* v may have been emptied and freed */
        }
        void *p = realloc(v->v, nc * v->elem);
        if (!p)
            return -ENOMEM;
        t->mem += (nc - v->cap) * v->elem;
        v->v = p;
        v->cap = nc;
    }
    memcpy((char *)v->v + v->n++ * v->elem, elem, v->elem);
    return 0;
}

void kt_trace_free(struct kt_trace *t)
{
    if (t->spill_fd >= 0)
        close(t->spill_fd);
    free(t->runs);
    free(t->kernels.v);
    free(t->launches.v);
    free(t->steps.v);
    free(t->ranges.v);
    free(t->arena);
    free(t->slots);
    free(t->slot_hash);
    memset(t, 0, sizeof *t);
}

/* Arena offset of name, interning it; UINT32_MAX when out of memory. */
uint32_t kt_intern(struct kt_trace *t, const char *name)
{
    uint64_t h = argus_name_hash(name);
    size_t len = strlen(name);

    if (!t->slots || 2 * (t->n_names + 1) > t->slot_mask + 1) {
        size_t ncap = t->slots ? 2 * (t->slot_mask + 1) : 1024;
        uint32_t *ns = calloc(ncap, sizeof *ns);
        uint64_t *nh = calloc(ncap, sizeof *nh);
        if (!ns || !nh) {
            free(ns);
            free(nh);
            return UINT32_MAX;
        }
        for (size_t i = 0; t->slots && i <= t->slot_mask; i++) {
            if (!t->slots[i])
                continue;
            size_t j = (size_t)t->slot_hash[i] & (ncap - 1);
            while (ns[j])
                j = (j + 1) & (ncap - 1);
            ns[j] = t->slots[i];
            nh[j] = t->slot_hash[i];
        }
        t->mem += (ncap - (t->slots ? t->slot_mask + 1 : 0)) * 12;
        free(t->slots);
        free(t->slot_hash);
        t->slots = ns;
        t->slot_hash = nh;
        t->slot_mask = ncap - 1;
    }
    size_t i = (size_t)h & t->slot_mask;
    while (t->slots[i]) {
        if (t->slot_hash[i] == h && strcmp(t->arena + t->slots[i] - 1, name) == 0)
            return t->slots[i] - 1;
        i = (i + 1) & t->slot_mask;
    }
    if (t->arena_used + len + 1 > t->arena_cap) {
        size_t nc = t->arena_cap ? t->arena_cap * 2 : 4096;
        while (nc < t->arena_used + len + 1)
            nc *= 2;
        if (nc > UINT32_MAX) {
            t->over_mem = 1;
            return UINT32_MAX;
        }
        if (t->mem + nc > t->max_mem) {
            if (make_room(t) != 0)
                return UINT32_MAX;
            if (t->mem + nc > t->max_mem) {
                t->over_mem = 1; /* the names alone pass the limit */
                return UINT32_MAX;
            }
        }
        char *p = realloc(t->arena, nc);
        if (!p)
            return UINT32_MAX;
        t->mem += nc - t->arena_cap;
        t->arena = p;
        t->arena_cap = nc;
    }
    uint32_t off = (uint32_t)t->arena_used;
    memcpy(t->arena + off, name, len + 1);
    t->arena_used += len + 1;
    t->slots[i] = off + 1;
    t->slot_hash[i] = h;
    t->n_names++;
    return off;
}

/* Rank from a file name: "rank-34.", "rank0.json", "sampled_rank-1", "worker3_step". */
int32_t kt_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *const keys[] = {"rank", "worker"};
    for (size_t k = 0; k < 2; k++) {
        const char *s = base;
        while ((s = strcasestr(s, keys[k])) != NULL) {
            s += strlen(keys[k]);
            const char *d = s;
            if (*d == '-' || *d == '_' || *d == '.')
                d++;
            if (isdigit((unsigned char)*d)) {
                long v = strtol(d, NULL, 10);
                if (v >= 0 && v < INT32_MAX)
                    return (int32_t)v;
            }
        }
    }
    return -1;
}


/* ---- process groups ------------------------------------------------------------------ */

/* Megatron's group descriptions (TENSOR_MODEL_PARALLEL_GROUP, ...) or mesh names (tp, pp,
 * dp, dp_shard, ep). */
int kt_pg_kind(const char *desc, size_t n)
{
    char l[64];
    size_t m = n < sizeof l - 1 ? n : sizeof l - 1;

    for (size_t i = 0; i < m; i++)
        l[i] = (char)tolower((unsigned char)desc[i]);
    l[m] = '\0';
    if (strstr(l, "expert") || strcmp(l, "ep") == 0 || strncmp(l, "ep_", 3) == 0)
        return 4;
    if (strstr(l, "tensor") || strcmp(l, "tp") == 0 || strncmp(l, "tp_", 3) == 0)
        return 1;
    if (strstr(l, "pipeline") || strcmp(l, "pp") == 0 || strncmp(l, "pp_", 3) == 0)
        return 2;
    if ((strstr(l, "data") && !strstr(l, "context")) || strcmp(l, "dp") == 0 ||
        strncmp(l, "dp_", 3) == 0)
        return 3;
    return 0;
}

void kt_pg_number(struct kt_pg *g, int key, int depth, int key_size, int key_ranks, int64_t v,
                  int32_t rank)
{
    if (depth == 0 && key == key_size)
        g->size = v;
    else if (depth == 1 && key == key_ranks) {
        if (rank >= 0 && v == rank && g->pos < 0)
            g->pos = g->idx;
        g->idx++;
    }
}

void kt_pg_end(const struct kt_pg *g, struct argus_kineto_info *info)
{
    int64_t size = g->size > 0 ? g->size : g->idx;
    struct argus_coords *c = &info->coords;

    if (!g->kind || g->pos < 0 || size <= 0 || size > UINT16_MAX || g->pos >= size ||
        (info->pg_kinds & (1u << g->kind)))
        return; /* the first group of a kind holding the rank wins */
    uint16_t sz = (uint16_t)size, at = (uint16_t)g->pos;
    switch (g->kind) {
    case 1: c->tp_size = sz, c->tp = at; break;
    case 2: c->pp_size = sz, c->pp = at; break;
    case 3: c->dp_size = sz, c->dp = at; break;
    default: c->ep_size = sz, c->ep = at; break;
    }
    info->pg_kinds |= 1u << g->kind;
}
