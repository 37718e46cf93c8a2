/* qsketch.c — the log-bucket quantile sketch of qsketch.h. Bucket i holds values in
 * (gamma^(i-1), gamma^i]; its representative value is 2*gamma^i/(gamma+1), within a
 * relative error alpha of every value in the bucket. */
#include "common/qsketch.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

static double qs_gamma(void) { return (1.0 + ARGUS_QSKETCH_ALPHA) / (1.0 - ARGUS_QSKETCH_ALPHA); }

/* gamma^i for the indices of values 1 .. 2^64 (gamma^1110 > 2^64), filled once with the
 * pow() a read would call, so that a read gives the same bits either way: the analysis
 * reads quantiles of thousands of sketches per window, and pow() was a tenth of it. */
#define QS_POW_N 1152
static double qs_pow_tab[QS_POW_N];
static pthread_once_t qs_pow_once = PTHREAD_ONCE_INIT;

static void qs_pow_fill(void)
{
    const double g = qs_gamma();
    for (int i = 0; i < QS_POW_N; i++)
        qs_pow_tab[i] = pow(g, i);
}

static double qs_pow(int32_t i)
{
    if (i < 0 || i >= QS_POW_N)
        return pow(qs_gamma(), i);
    pthread_once(&qs_pow_once, qs_pow_fill);
    return qs_pow_tab[i];
}

static int32_t qs_index(uint64_t v)
{
    return (int32_t)ceil(log((double)v) / log(qs_gamma()));
}

void argus_qsketch_init(struct argus_qsketch *s)
{
    memset(s, 0, sizeof *s);
}

/* Make room for bucket idx: shift the span or collapse the lowest buckets so that
 * idx fits in [base, base + ARGUS_QSKETCH_BUCKETS). Returns the slot of idx. */
static int qs_slot(struct argus_qsketch *s, int32_t idx)
{
    const int32_t cap = ARGUS_QSKETCH_BUCKETS;

    if (s->nbuckets == 0) {
        s->base = idx;
        s->nbuckets = 1;
        return 0;
    }
    if (idx < s->base) {
        int32_t top = s->base + s->nbuckets - 1;
        if (top - idx + 1 <= cap) {
            int32_t shift = s->base - idx;
            memmove(&s->counts[shift], &s->counts[0], (size_t)s->nbuckets * sizeof s->counts[0]);
            memset(&s->counts[0], 0, (size_t)shift * sizeof s->counts[0]);
            s->base = idx;
            s->nbuckets = (uint16_t)(s->nbuckets + shift);
            return 0;
        }
        /* Too low to keep: widen the span down to its full width (base = top - cap + 1,
         * exactly where an add in the other order would have put it) and count the value
         * in that lowest bucket. Keeping base where it was would make the result depend
         * on insertion and merge order. */
        int32_t nbase = top - cap + 1;
        int32_t shift = s->base - nbase;
        if (shift > 0) {
            memmove(&s->counts[shift], &s->counts[0], (size_t)s->nbuckets * sizeof s->counts[0]);
            memset(&s->counts[0], 0, (size_t)shift * sizeof s->counts[0]);
            s->base = nbase;
            s->nbuckets = (uint16_t)cap;
        }
        s->flags |= ARGUS_QS_COLLAPSED;
        return 0;
    }
    int32_t off = idx - s->base;
    if (off < cap) {
        if (off >= s->nbuckets)
            s->nbuckets = (uint16_t)(off + 1);
        return off;
    }
    /* Collapse the lowest buckets into the new lowest one. */
    int32_t drop = off - cap + 1;
    uint32_t folded = 0;
    for (int32_t i = 0; i < drop && i < s->nbuckets; i++)
        folded += s->counts[i];
    if (drop >= s->nbuckets) {
        memset(s->counts, 0, sizeof s->counts);
        s->counts[0] = folded;
        s->base = idx - cap + 1;
        s->nbuckets = (uint16_t)cap;
    } else {
        memmove(&s->counts[0], &s->counts[drop],
                (size_t)(s->nbuckets - drop) * sizeof s->counts[0]);
        memset(&s->counts[s->nbuckets - drop], 0, (size_t)drop * sizeof s->counts[0]);
        s->counts[0] += folded;
        s->base += drop;
        s->nbuckets = (uint16_t)cap;
    }
    if (folded)
        s->flags |= ARGUS_QS_COLLAPSED;
    return cap - 1;
}

void argus_qsketch_add_n(struct argus_qsketch *s, uint64_t value_ns, uint32_t n)
{
    if (n == 0)
        return;
    if (value_ns == 0) {
        s->zeros += n;
        return;
    }
    int slot = qs_slot(s, qs_index(value_ns));
    assert(slot >= 0 && slot < ARGUS_QSKETCH_BUCKETS);
    s->counts[slot] += n;
}

void argus_qsketch_add(struct argus_qsketch *s, uint64_t value_ns)
{
    argus_qsketch_add_n(s, value_ns, 1);
}

void argus_qsketch_merge(struct argus_qsketch *dst, const struct argus_qsketch *src)
{
    dst->zeros += src->zeros;
    dst->flags |= src->flags;
    if (src->nbuckets == 0)
        return;
    /* Insert the highest bucket first so the span is fixed once, then the rest. */
    for (int32_t i = src->nbuckets - 1; i >= 0; i--) {
        if (!src->counts[i])
            continue;
        int slot = qs_slot(dst, src->base + i);
        dst->counts[slot] += src->counts[i];
    }
}

uint64_t argus_qsketch_count(const struct argus_qsketch *s)
{
    uint64_t n = s->zeros;

    for (int i = 0; i < s->nbuckets; i++)
        n += s->counts[i];
    return n;
}

double argus_qsketch_quantile(const struct argus_qsketch *s, double q)
{
    uint64_t n = argus_qsketch_count(s);

    if (n == 0)
        return 0.0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    uint64_t want = (uint64_t)floor(q * (double)(n - 1));
    uint64_t seen = s->zeros;
    if (want < seen)
        return 0.0;
    for (int i = 0; i < s->nbuckets; i++) {
        seen += s->counts[i];
        if (want < seen) {
            double g = qs_gamma();
            return 2.0 * qs_pow(s->base + i) / (g + 1.0);
        }
    }
    double g = qs_gamma();
    return 2.0 * qs_pow(s->base + s->nbuckets - 1) / (g + 1.0);
}

double argus_qsketch_quantile_with(const struct argus_qsketch *s, const double *v, size_t n,
                                   double q)
{
    const uint64_t tot = argus_qsketch_count(s) + n;

    if (tot == 0)
        return 0.0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    const uint64_t want = (uint64_t)floor(q * (double)(tot - 1));
    const double g = qs_gamma();
    uint64_t seen = 0;
    size_t j = 0;
    /* exact zeros and the sketch's zeros first */
    for (; j < n && v[j] <= 0; j++)
        if (seen++ == want)
            return v[j];
    seen += s->zeros;
    if (want < seen)
        return 0.0;
    double upper = s->nbuckets ? qs_pow(s->base) : 0;
    for (int i = 0; i < s->nbuckets; i++, upper *= g) {
        for (; j < n && v[j] <= upper; j++)
            if (seen++ == want)
                return v[j];
        seen += s->counts[i];
        if (want < seen)
            return 2.0 * qs_pow(s->base + i) / (g + 1.0);
    }
    for (; j < n; j++)
        if (seen++ == want)
            return v[j];
    return 0.0; /* not reached: want < tot */
}
