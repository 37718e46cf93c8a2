/* aggrow.c — the compact row coding of the window aggregate (aggrow.h has the format and
 * the contract). Must not allocate, and must not read at or past the end it is given. */
#include "common/aggrow.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

void argus_aggrow_init(struct argus_aggrow_coder *c)
{
    memset(c, 0, sizeof *c);
}

static inline uint8_t *put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Zigzag of a 64-bit two's-complement difference, and back (all modulo 2^64). */
static inline uint64_t zz(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t unzz(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* The start predicted from the row before: the same start within a step, its end
 * (start + step wall) on a new step. */
static inline uint64_t start_pred(const struct argus_agg_row *q, int new_step)
{
    return q->start_ns + (new_step ? 1000u * (uint64_t)q->us[0] : 0);
}

static uint8_t *put_row(const struct argus_agg_row *q, const struct argus_agg_row *r,
                        uint8_t *p)
{
    const int ns = r->step != q->step;
    const uint32_t rd = r->rank - (ns ? 0 : q->rank);

    /* rows out of canonical order (a caller's bug) still take at most ARGUS_AGGROW_MAX
     * bytes; the decoder refuses them: data lost, never a crash in the user's process */
    p = put_uv(p, (uint64_t)rd << 2 | (uint64_t)ns << 1 | (r->flags != 0));
    if (ns)
        p = put_uv(p, r->step - q->step);
    if (r->flags)
        p = put_uv(p, r->flags);
    p = put_uv(p, zz(r->start_ns - start_pred(q, ns)));
    for (int k = 0; k < 8; k++)
        p = put_uv(p, zz((uint64_t)r->us[k] - (uint64_t)q->us[k]));
    return p;
}

uint8_t *argus_aggrow_put(struct argus_aggrow_coder *c, const struct argus_agg_row *r,
                          size_t n, uint8_t *p)
{
    if (n == 0)
        return p;
    p = put_row(&c->prev, &r[0], p);
    for (size_t i = 1; i < n; i++)
        p = put_row(&r[i - 1], &r[i], p);
    c->prev = r[n - 1];
    c->n += n;
    return p;
}

size_t argus_aggrow_size(struct argus_aggrow_coder *c, const struct argus_agg_row *r,
                         size_t n)
{
    uint8_t t[ARGUS_AGGROW_MAX];
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)(argus_aggrow_put(c, &r[i], 1, t) - t);
    return len;
}

#define AGGROW_INLINE static inline __attribute__((always_inline))

/* The most bytes get_row reads before it refuses a row: every field at its widest valid
 * length (ARGUS_AGGROW_MAX in all), then one 10-byte field where 5 is the most a valid one
 * takes, 75; with this many bytes left it may read without checking the end. */
#define AGGROW_READ_MAX (ARGUS_AGGROW_MAX + 5)

/* LEB128 at p, before end: past it, or NULL when it is truncated, longer than 64 bits or
 * overlong (a final 0 byte: not the canonical encoding). Unless checked, the caller has
 * made sure that 10 bytes can be read. */
AGGROW_INLINE const uint8_t *get_uv(const uint8_t *p, const uint8_t *end, uint64_t *v,
                                    int checked)
{
    if ((!checked || p < end) && *p < 0x80) {
        *v = *p;
        return p + 1;
    }
    if (!checked && p[1] < 0x80 && p[1]) { /* two bytes: the next most common */
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        return p + 2;
    }
    uint64_t x = 0;
    for (unsigned s = 0; !checked || p < end; s += 7) { /* the first byte has its high bit set */
        const uint8_t b = *p++;
        if (s == 63 && b > 1)
            return NULL;
        x |= (uint64_t)(b & 0x7f) << s;
        if (b < 0x80) {
            if (b == 0)
                return NULL;
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* One row after q (first: whether q is the coder's initial state, which any row may
 * follow) at p: past it, or NULL when truncated, malformed or out of order. */
AGGROW_INLINE const uint8_t *get_row(const struct argus_agg_row *q, int first, const uint8_t *p,
                                     const uint8_t *end, struct argus_agg_row *r, int checked)
{
    uint64_t h, v;

    if (!(p = get_uv(p, end, &h, checked)) || h >> 34)
        return NULL;
    const int ns = (h >> 1) & 1;
    r->step = q->step;
    if (ns) {
        if (!(p = get_uv(p, end, &v, checked)) || v == 0 || v > UINT64_MAX - q->step)
            return NULL;
        r->step += v;
    }
    const uint64_t rank = (h >> 2) + (ns ? 0 : q->rank);
    if (rank > UINT32_MAX)
        return NULL;
    r->rank = (uint32_t)rank;
    r->flags = 0;
    if (h & 1) {
        if (!(p = get_uv(p, end, &v, checked)) || v == 0 || v > UINT32_MAX)
            return NULL;
        r->flags = (uint32_t)v;
    }
    if (!(p = get_uv(p, end, &v, checked)))
        return NULL;
    r->start_ns = start_pred(q, ns) + unzz(v);
    for (int k = 0; k < 8; k++) { /* each refused as soon as read: see AGGROW_READ_MAX */
        if (!(p = get_uv(p, end, &v, checked)))
            return NULL;
        const uint64_t u = (uint64_t)q->us[k] + unzz(v);
        if (u > UINT32_MAX)
            return NULL;
        r->us[k] = (uint32_t)u;
    }
    /* same (step, rank) as the row before: the bytes decide (aggregate.c's row_cmp) */
    if (!first && !ns && (h >> 2) == 0 && memcmp(q, r, sizeof *r) > 0)
        return NULL;
    return p;
}

int argus_aggrow_get(struct argus_aggrow_coder *c, const uint8_t **p, const uint8_t *end,
                     struct argus_agg_row *out, size_t n)
{
    const uint8_t *at = *p;
    for (size_t i = 0; i < n; i++) {
        const struct argus_agg_row *q = i ? &out[i - 1] : &c->prev;
        /* unchecked reads while the most a row can read fits (AGGROW_READ_MAX) */
        const uint8_t *next = (size_t)(end - at) >= AGGROW_READ_MAX
                                  ? get_row(q, c->n + i == 0, at, end, &out[i], 0)
                                  : get_row(q, c->n + i == 0, at, end, &out[i], 1);
        if (!next) {
            *p = at;
            return -EINVAL;
        }
        at = next;
    }
    *p = at;
    if (n) {
        c->prev = out[n - 1];
        c->n += n;
    }
    return 0;
}

/* A row as the summary that stands for it (aggrow.h). The idle interval stays 0: the row
 * has none. */
void argus_aggrow_thin(const struct argus_agg_row *r, struct argus_step_summary *out)
{
    memset(out, 0, offsetof(struct argus_step_summary, kmodes));
    out->step = r->step;
    out->rank = r->rank;
    out->flags = (r->flags & ~(uint32_t)ARGUS_SF_EXEMPLAR) | ARGUS_SF_THIN;
    out->start_ns = r->start_ns;
    out->end_ns = r->start_ns + 1000ull * r->us[0];
    out->phase_wall_ns[ARGUS_PH_FORWARD] = 1000ull * r->us[1];
    out->phase_wall_ns[ARGUS_PH_BACKWARD] = 1000ull * r->us[2];
    out->phase_wall_ns[ARGUS_PH_OPTIMIZER] = 1000ull * r->us[3];
    out->phase_wall_ns[ARGUS_PH_COMM] = 1000ull * r->us[4];
    out->phase_wall_ns[ARGUS_PH_HOST] = 1000ull * r->us[5];
    out->host_gap_ns = 1000ull * r->us[5];
    out->compute_ns = 1000ull * r->us[6];
    out->collective_ns = 1000ull * r->us[7];
    out->busy_ns = r->us[0] > r->us[5] ? 1000ull * (r->us[0] - r->us[5]) : 0;
}
