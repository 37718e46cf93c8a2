/* budget.c — the benchmark's budgeted per-step record (budget.h): selection by coverage,
 * folding, 16-byte mode records and the per-rank key dictionary. No allocation after
 * create. Built into bench/tracer_bench and bench/budget_test only.
 */
#include "bench/budget.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "tracer/modes.h"

#define DICT_SLOTS 131072 /* power of two, >= 2 x 65535 ids */

struct argus_budget {
    struct { uint64_t hash; uint32_t id1; } slot[DICT_SLOTS];
    uint32_t n_ids;
    struct argus_sort_pair ord[ARGUS_MAX_KMODES], tmp[ARGUS_MAX_KMODES];
};

int argus_budget_create(struct argus_budget **out)
{
    if (!out)
        return -EINVAL;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : -ENOMEM;
}

void argus_budget_free(struct argus_budget *b) { free(b); }

uint16_t argus_budget_code(uint64_t ns)
{
    if (ns <= 1)
        return 0;
    double c = round(1024.0 * log2((double)ns));
    return c >= 65535 ? 65535 : (uint16_t)c;
}

double argus_budget_uncode(uint16_t code) { return exp2((double)code / 1024.0); }

static void put16(uint8_t **p, uint16_t v)
{
    (*p)[0] = (uint8_t)v;
    (*p)[1] = (uint8_t)(v >> 8);
    *p += 2;
}
static void put32(uint8_t **p, uint32_t v) { put16(p, (uint16_t)v); put16(p, (uint16_t)(v >> 16)); }
static void put64(uint8_t **p, uint64_t v) { put32(p, (uint32_t)v); put32(p, (uint32_t)(v >> 32)); }
static uint32_t sat32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* Key id of hash; *is_new when assigned now. -1 when the dictionary is full. */
static long key_id(struct argus_budget *b, uint64_t hash, int *is_new)
{
    size_t i = (size_t)(hash ^ (hash >> 29)) & (DICT_SLOTS - 1);

    *is_new = 0;
    while (b->slot[i].id1) {
        if (b->slot[i].hash == hash)
            return (long)b->slot[i].id1 - 1;
        i = (i + 1) & (DICT_SLOTS - 1);
    }
    if (b->n_ids >= ARGUS_BUDGET_FOLD_ID)
        return -1;
    b->slot[i].hash = hash;
    b->slot[i].id1 = ++b->n_ids;
    *is_new = 1;
    return (long)b->n_ids - 1;
}

static void put_mode(uint8_t **p, uint16_t id, const struct argus_kmode_stats *k)
{
    put16(p, id);
    *(*p)++ = (uint8_t)((k->mode & 15) | (k->kclass & 15) << 4);
    *(*p)++ = k->phase;
    put16(p, k->count > 65535 ? 65535 : (uint16_t)k->count);
    put16(p, argus_budget_code(k->min_ns));
    put16(p, argus_budget_code((uint64_t)argus_qsketch_quantile(&k->sketch, 0.5)));
    put16(p, argus_budget_code((uint64_t)argus_qsketch_quantile(&k->sketch, 0.99)));
    put16(p, argus_budget_code(k->max_ns));
    put16(p, argus_budget_code(k->count ? k->sum_ns / k->count : 0));
}

long argus_budget_encode(struct argus_budget *b, const struct argus_step_summary *s,
                         double coverage, uint64_t overhead_ns, uint8_t *buf, size_t cap)
{
    struct argus_kmode_stats fold[ARGUS_KC_COUNT];
    uint8_t keep[ARGUS_MAX_KMODES];
    uint64_t total = 0, covered = 0;
    uint16_t ids[ARGUS_MAX_KMODES];
    uint8_t isnew[ARGUS_MAX_KMODES];
    unsigned nk = 0, nd = 0, nf = 0;

    if (!b || !s || !buf || s->n_kmodes > ARGUS_MAX_KMODES || !(coverage > 0) || coverage > 1)
        return -EINVAL;
    /* Collectives always; the others by descending time until coverage. */
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        int comm = k->kclass == ARGUS_KC_COLLECTIVE || k->kclass == ARGUS_KC_P2P;
        total += k->sum_ns;
        keep[i] = (uint8_t)comm;
        if (comm)
            covered += k->sum_ns;
        b->ord[i].key = UINT64_MAX - k->sum_ns;
        b->ord[i].val = i;
    }
    argus_sort_pairs(b->ord, b->tmp, s->n_kmodes);
    for (uint32_t j = 0; j < s->n_kmodes; j++) {
        uint32_t i = (uint32_t)b->ord[j].val;
        if (keep[i])
            continue;
        if ((double)covered >= coverage * (double)total)
            break;
        keep[i] = 1;
        covered += s->kmodes[i].sum_ns;
    }
    memset(fold, 0, sizeof fold);
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        if (!keep[i]) {
            struct argus_kmode_stats *f = &fold[k->kclass % ARGUS_KC_COUNT];
            if (!f->count) {
                argus_qsketch_init(&f->sketch);
                f->min_ns = k->min_ns;
                f->mode = k->kclass;
                f->kclass = k->kclass;
                f->phase = k->phase;
            }
            f->count += k->count;
            f->sum_ns += k->sum_ns;
            f->min_ns = k->min_ns < f->min_ns ? k->min_ns : f->min_ns;
            f->max_ns = k->max_ns > f->max_ns ? k->max_ns : f->max_ns;
            argus_qsketch_merge(&f->sketch, &k->sketch);
            continue;
        }
        int n;
        long id = key_id(b, k->name_hash, &n);
        if (id < 0)
            return -E2BIG;
        ids[i] = (uint16_t)id;
        isnew[i] = (uint8_t)n;
        nk++;
        nd += (unsigned)n;
    }
    for (unsigned c = 0; c < ARGUS_KC_COUNT; c++)
        nf += fold[c].count > 0;
    size_t need = ARGUS_BUDGET_HDR + (size_t)nd * ARGUS_BUDGET_DICT +
                  (size_t)(nk + nf) * ARGUS_BUDGET_MODE + 4;
    if (need > cap)
        return -ENOSPC;
    uint8_t *p = buf;
    put32(&p, ARGUS_BUDGET_MAGIC);
    *p++ = ARGUS_BUDGET_VERSION;
    *p++ = (uint8_t)s->flags;
    put16(&p, (uint16_t)(nk + nf));
    put16(&p, (uint16_t)nd);
    put16(&p, 0);
    put64(&p, s->step);
    put64(&p, s->start_ns);
    put32(&p, sat32((s->end_ns - s->start_ns) / 1000));
    put32(&p, sat32(s->busy_ns / 1000));
    put32(&p, sat32(s->kernel_count));
    put32(&p, sat32(s->dropped));
    put32(&p, sat32(overhead_ns / 1000));
    put16(&p, s->coords.tp);
    put16(&p, s->coords.pp);
    put16(&p, s->coords.dp);
    put16(&p, s->coords.ep);
    for (unsigned ph = 0; ph < ARGUS_PH_COUNT; ph++)
        put32(&p, sat32(s->phase_wall_ns[ph] / 1000));
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        if (keep[i] && isnew[i]) {
            put16(&p, ids[i]);
            put64(&p, s->kmodes[i].name_hash);
        }
    }
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        if (keep[i])
            put_mode(&p, ids[i], &s->kmodes[i]);
    for (unsigned c = 0; c < ARGUS_KC_COUNT; c++)
        if (fold[c].count)
            put_mode(&p, ARGUS_BUDGET_FOLD_ID, &fold[c]);
    put32(&p, argus_crc32c(buf, (size_t)(p - buf)));
    return (long)(p - buf);
}

int argus_budget_check(const uint8_t *buf, size_t len)
{
    if (!buf || len < ARGUS_BUDGET_HDR + 4)
        return -EINVAL;
    uint32_t magic = buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24;
    unsigned n = buf[6] | buf[7] << 8, nd = buf[8] | buf[9] << 8;
    size_t want = ARGUS_BUDGET_HDR + (size_t)nd * ARGUS_BUDGET_DICT +
                  (size_t)n * ARGUS_BUDGET_MODE + 4;
    if (magic != ARGUS_BUDGET_MAGIC || buf[4] != ARGUS_BUDGET_VERSION || want != len)
        return -EINVAL;
    const uint8_t *t = buf + len - 4;
    uint32_t crc = t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24;
    return crc == argus_crc32c(buf, len - 4) ? (int)n : -EINVAL;
}
