/* import_ktab.c — the Kineto importer's helpers (import_int.h): number parsing from
 * YAJL's raw number text (µs to ns without floating point for the usual forms), the
 * compact growable tables with their memory limit, kernel-name interning, and the rank
 * taken from a file name. No I/O; never trusts its input.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/import_int.h"

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

int kt_vec_push(struct kt_trace *t, struct kt_vec *v, const void *elem)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 256;
        if (t->mem + (nc - v->cap) * v->elem > t->max_mem) {
            t->over_mem = 1;
            return -ENOMEM;
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
        size_t nc = t->arena_cap ? t->arena_cap * 2 : 65536;
        while (nc < t->arena_used + len + 1)
            nc *= 2;
        if (nc > UINT32_MAX || t->mem + nc - t->arena_cap > t->max_mem) {
            t->over_mem = 1;
            return UINT32_MAX;
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

