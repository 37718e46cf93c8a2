/* period.c — the step period from the autocorrelation of the byte rate, and step
 * boundaries tracked with it (flows/period.h).
 */
#include "flows/period.h"

#include <math.h>

double fl_acf_period(double *x, size_t n, double *r, double *peak)
{
    *peak = 0;
    if (n < 8)
        return 0;
    /* a [1 2 1] / 4 smoothing first: a period between bins splits its peaks less */
    double prev = x[0];
    for (size_t i = 1; i + 1 < n; i++) {
        double cur = x[i];
        x[i] = 0.25 * prev + 0.5 * cur + 0.25 * x[i + 1];
        prev = cur;
    }
    double m = 0, v = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        x[i] -= m, v += x[i] * x[i];
    if (!(v > 0))
        return 0;
    size_t maxlag = n / 3;
    double best = -1;
    for (size_t L = 0; L <= maxlag + 1; L++) {
        double s = 0;
        for (size_t i = 0; i + L < n; i++)
            s += x[i] * x[i + L];
        r[L] = s / v * (double)n / (double)(n - L);   /* unbiased */
    }
    for (size_t L = 2; L <= maxlag; L++)
        if (r[L] >= r[L - 1] && r[L] > r[L + 1] && r[L] > best)
            best = r[L];
    if (best < 0.3)
        return 0;
    size_t bl = 0;   /* the first local maximum near the best */
    for (size_t L = 2; L <= maxlag && !bl; L++)
        if (r[L] >= r[L - 1] && r[L] > r[L + 1] && r[L] >= FL_ACF_NEAR * best)
            bl = L;
    /* a multiple of the period can score above it when the period falls between bins:
     * the fundamental is the smallest L/k (k up to 6) with a local maximum within 1.5
     * bins of it scoring FL_ACF_SUB of L's at least */
    for (size_t k = 6, done = 0; k >= 2 && !done; k--) {
        double t = (double)bl / (double)k;
        for (size_t L = t > 3.5 ? (size_t)(t - 1.5) : 2; (double)L <= t + 1.5 && !done; L++)
            if (L >= 2 && r[L] >= r[L - 1] && r[L] > r[L + 1] && r[L] >= FL_ACF_SUB * r[bl])
                bl = L, done = 1;
    }
    *peak = r[bl];
    double den = r[bl - 1] - 2 * r[bl] + r[bl + 1];
    double off = den < 0 ? 0.5 * (r[bl - 1] - r[bl + 1]) / den : 0;
    if (off > 0.5 || off < -0.5)
        off = 0;
    return (double)bl + off;
}

/* the median of v[n] (n <= 16), by insertion into a copy */
static double small_median(const double *v, size_t n)
{
    double w[16];
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && w[j - 1] > v[i]; j--)
            w[j] = w[j - 1];
        w[j] = v[i];
    }
    return n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
}

size_t fl_track_steps(const struct fl_iv *iv, size_t n, double period_ns, uint64_t *end,
                      uint64_t *start, size_t cap)
{
    if (n == 0 || cap == 0)
        return 0;
    double T = period_ns, b = (double)iv[0].ts;
    double last = (double)iv[n - 1].te, typ[16];
    size_t s = 0, p = 0, ntyp = 0;   /* p: the first gap after the last boundary */
    start[0] = iv[0].ts;
    while (p + 1 < n && s + 1 < cap) {
        double lo = b + 0.75 * T, near = b + 1.25 * T, far = b + 2 * T;
        if (s == 0)   /* the first window: the first burst to 1.25 T after it */
            lo = (double)iv[0].ts, near = far = lo + 1.25 * T;
        double typical = ntyp >= 3 ? small_median(typ, ntyp < 16 ? ntyp : 16) : 0;
        size_t bi = n, first = n;
        double bg = -1;
        for (size_t i = p; i + 1 < n; i++) {
            double mid = 0.5 * ((double)iv[i].te + (double)iv[i + 1].ts);
            if (mid > far)
                break;
            double g = (double)iv[i + 1].ts - (double)iv[i].te;
            /* after the last boundary at least half a period of traffic: a step */
            if (mid < lo || last - (double)iv[i + 1].ts < 0.5 * T)
                continue;
            if (typical > 0 && g >= 0.8 * typical) {   /* a boundary's gap: the first */
                first = i;
                break;
            }
            if (mid <= near && g > bg)
                bg = g, bi = i;
        }
        if (first < n)
            bi = first;
        if (bi == n) {   /* none: the expected boundary, traffic on */
            b += T;
            while (p + 1 < n && 0.5 * ((double)iv[p].te + (double)iv[p + 1].ts) < b + 0.75 * T)
                p++;
            if (b > last)
                break;
            continue;
        }
        end[s++] = iv[bi].te;
        start[s] = iv[bi + 1].ts;
        typ[ntyp++ % 16] = (double)iv[bi + 1].ts - (double)iv[bi].te;
        b = 0.5 * ((double)iv[bi].te + (double)iv[bi + 1].ts);
        p = bi + 1;
    }
    end[s++] = iv[n - 1].te;
    return s;
}
