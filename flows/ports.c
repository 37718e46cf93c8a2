/* ports.c — switch port-counter series and their link view (flows/ports.h). Allocates in
 * add (a new port, the sample array's growth) and per analysis.
 */
#include "flows/ports.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/grow.h"
#include "common/hash.h"
#include "flows/flows_int.h"

#define MIN_PER_WINDOW 5

void fl_ports_init(struct argus_ports *ps, size_t max_samples)
{
    memset(ps, 0, sizeof *ps);
    ps->max_samples = max_samples;
    ps->t_first = UINT64_MAX;
}

void fl_ports_free(struct argus_ports *ps)
{
    free(ps->p);
    free(ps->s);
    free(ps->slot);
    fl_ports_init(ps, ps->max_samples);
}

static uint64_t name_hash(const char *d, size_t dl, const char *p, size_t pl)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < dl; i++)
        h = (h ^ (unsigned char)d[i]) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t i = 0; i < pl; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return argus_mix64(h);
}

static int rehash(struct argus_ports *ps)
{
    size_t cap = ps->slot_mask ? 2 * (ps->slot_mask + 1) : 64;
    uint64_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < ps->n; i++) {
        const struct fl_port *p = &ps->p[i];
        size_t k = name_hash(p->device, strlen(p->device), p->port, strlen(p->port)) & (cap - 1);
        while (s[k])
            k = (k + 1) & (cap - 1);
        s[k] = i + 1;
    }
    free(ps->slot);
    ps->slot = s, ps->slot_mask = cap - 1;
    return 0;
}

/* the index of (device, port), or -1 with *slot the free slot for it */
static long port_find(const struct argus_ports *ps, const char *d, size_t dl, const char *p,
                      size_t pl, size_t *slot)
{
    size_t k = name_hash(d, dl, p, pl) & ps->slot_mask;
    for (; ps->slot[k]; k = (k + 1) & ps->slot_mask) {
        const struct fl_port *x = &ps->p[ps->slot[k] - 1];
        if (strlen(x->device) == dl && memcmp(x->device, d, dl) == 0 &&
            strlen(x->port) == pl && memcmp(x->port, p, pl) == 0)
            return (long)(ps->slot[k] - 1);
    }
    *slot = k;
    return -1;
}

/* the index of (device, port), added when new; -ENOMEM */
static long port_index(struct argus_ports *ps, const char *d, size_t dl, const char *p,
                       size_t pl)
{
    if (!ps->slot && rehash(ps))
        return -ENOMEM;
    size_t k;
    long i = port_find(ps, d, dl, p, pl, &k);
    if (i >= 0)
        return i;
    if (argus_grow(&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p, 64))
        return -ENOMEM;
    struct fl_port *x = &ps->p[ps->n];
    memset(x, 0, sizeof *x);
    memcpy(x->device, d, dl), memcpy(x->port, p, pl);
    ps->slot[k] = ++ps->n;
    if (2 * ps->n > ps->slot_mask && rehash(ps))
        return -ENOMEM;
    return (long)(ps->n - 1);
}

static int u64_of(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 20)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        unsigned dg = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - dg) / 10)
            return -ERANGE;
        v = v * 10 + dg;
    }
    *out = v;
    return 0;
}

/* ns, or seconds (a fraction, or below 10^14) */
static int time_of(const char *s, size_t n, uint64_t *out)
{
    const char *dot = memchr(s, '.', n);
    size_t il = dot ? (size_t)(dot - s) : n;
    uint64_t sec, frac = 0;
    if (u64_of(s, il, &sec))
        return -EINVAL;
    if (dot) {
        size_t fl = n - il - 1;
        if (fl == 0 || fl > 9 || u64_of(dot + 1, fl, &frac))
            return -EINVAL;
        for (size_t i = fl; i < 9; i++)
            frac *= 10;
    } else if (sec >= 100000000000000ull) {
        *out = sec;
        return 0;
    }
    if (sec > UINT64_MAX / 1000000000u - 1)
        return -ERANGE;
    *out = sec * 1000000000u + frac;
    return 0;
}

int fl_ports_add_line(struct argus_ports *ps, const char *line, size_t len, char *errbuf,
                      size_t errlen)
{
    static const char *const cols[] = {"time", "device", "port", "in_octets", "out_octets"};
    const char *f[6];
    size_t fl[6], start = 0;
    unsigned nf = 0;

    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#' || (len >= 4 && memcmp(line, "time", 4) == 0))
        return 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || line[i] == ',') {
            if (nf == 6)
                break;
            f[nf] = line + start, fl[nf] = i - start, nf++;
            start = i + 1;
        }
    if (nf != 5) {
        argus_seterr(errbuf, errlen, "%s5 columns needed (time,device,port,in_octets,"
                     "out_octets)", nf > 5 ? "more than " : "");
        return -EINVAL;
    }
    for (unsigned i = 1; i < 3; i++) {
        if (fl[i] == 0 || fl[i] >= ARGUS_TOPO_NAME) {
            argus_seterr(errbuf, errlen, "%s: %s", cols[i], fl[i] ? "longer than 63 bytes"
                                                                  : "empty");
            return -EINVAL;
        }
        for (size_t j = 0; j < fl[i]; j++)
            if ((unsigned char)f[i][j] < 0x20 || f[i][j] == '"') {
                argus_seterr(errbuf, errlen, "%s: control character or quote", cols[i]);
                return -EINVAL;
            }
    }
    struct fl_psample x;
    if (time_of(f[0], fl[0], &x.t)) {
        argus_seterr(errbuf, errlen, "time: \"%.*s\" is neither ns nor seconds",
                     (int)(fl[0] < 40 ? fl[0] : 40), f[0]);
        return -EINVAL;
    }
    for (unsigned i = 3; i < 5; i++)
        if (u64_of(f[i], fl[i], i == 3 ? &x.in : &x.out)) {
            argus_seterr(errbuf, errlen, "%s: not an unsigned 64-bit integer", cols[i]);
            return -EINVAL;
        }
    ps->lines++;
    if (ps->ns == ps->max_samples) {
        ps->dropped++;
        return 0;
    }
    long pi = port_index(ps, f[1], fl[1], f[2], fl[2]);
    if (pi < 0 || argus_grow(&ps->s, &ps->scap, ps->ns + 1, sizeof *ps->s, 4096))
        return -ENOMEM;
    x.port = (uint32_t)pi;
    ps->s[ps->ns++] = x;
    ps->p[pi].samples++;
    if (x.t < ps->t_first)
        ps->t_first = x.t;
    if (x.t > ps->t_last)
        ps->t_last = x.t;
    return 1;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct fl_psample *x = a, *y = b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

struct rate {
    uint64_t t;
    double in, out;   /* bytes/s; both 0: idle */
    int full;         /* busy, and so are the intervals on both sides */
};

/* the peak of the full intervals of r[n] starting in [t0, t1): *nb how many */
static double peak_in(const struct rate *r, size_t n, uint64_t t0, uint64_t t1, double *tmp,
                      size_t *nb)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].t >= t0 && r[i].t < t1 && r[i].full)
            tmp[k++] = r[i].in;
    *nb = k;
    if (k == 0)
        return NAN;
    double a = fl_quantile(tmp, k, 0.9);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].t >= t0 && r[i].t < t1 && r[i].full)
            tmp[k++] = r[i].out;
    double b = fl_quantile(tmp, k, 0.9);
    return a > b ? a : b;
}

int fl_ports_analyse(struct argus_ports *ps, const struct argus_topo *topo, double k,
                     double drop, unsigned windows)
{
    unsigned W = windows;
    size_t np = ps->n;
    struct rate *r = malloc((ps->ns + 1) * sizeof *r);
    double *tmp = malloc((ps->ns + np + 1) * sizeof *tmp);
    double *pk = malloc((np + 1) * (W + 1) * sizeof *pk);
    size_t *first = malloc((np + 1) * sizeof *first);
    int rc = -ENOMEM;

    if (!r || !tmp || !pk || !first)
        goto out;
    ps->analysed = 1;
    qsort(ps->s, ps->ns, sizeof *ps->s, cmp_sample);
    uint64_t span = ps->t_last > ps->t_first ? ps->t_last - ps->t_first : 1;
    size_t nr = 0;
    for (size_t i = 0; i < ps->ns;) {
        size_t j = i;
        struct fl_port *p = &ps->p[ps->s[i].port];
        first[ps->s[i].port] = nr;
        double busy_ns = 0, in = 0, out = 0;
        while (j + 1 < ps->ns && ps->s[j + 1].port == ps->s[i].port) {
            const struct fl_psample *a = &ps->s[j], *b = &ps->s[j + 1];
            j++;
            if (b->t == a->t)
                continue;
            if (b->in < a->in || b->out < a->out) {
                ps->resets++;
                continue;
            }
            double dt = (double)(b->t - a->t) / 1e9;
            struct rate x = {a->t, (double)(b->in - a->in) / dt, (double)(b->out - a->out) / dt,
                             0};
            in += (double)(b->in - a->in), out += (double)(b->out - a->out);
            p->intervals++;
            if (x.in > 0 || x.out > 0)
                p->busy++, busy_ns += dt * 1e9;
            r[nr++] = x;
        }
        double pspan = (double)(ps->s[j].t - ps->s[i].t);
        p->mean_in = pspan > 0 ? in * 1e9 / pspan : 0;
        p->mean_out = pspan > 0 ? out * 1e9 / pspan : 0;
        p->busy_frac = pspan > 0 ? busy_ns / pspan : 0;
        size_t nb;
        struct rate *pr = r + first[ps->s[i].port];
        size_t pn = nr - first[ps->s[i].port];
        for (size_t q = 1; q + 1 < pn; q++) {
#define BUSY(x) ((x).in > 0 || (x).out > 0)
            pr[q].full = BUSY(pr[q - 1]) && BUSY(pr[q]) && BUSY(pr[q + 1]);
#undef BUSY
            p->full += (size_t)pr[q].full;
        }
        p->peak = peak_in(pr, pn, 0, UINT64_MAX, tmp, &nb);
        if (nb < MIN_PER_WINDOW)
            p->peak = NAN;
        double *row = pk + (size_t)ps->s[i].port * (W + 1);
        row[0] = p->peak;
        for (unsigned w = 0; w < W; w++) {
            uint64_t t0 = ps->t_first + span * w / W;
            uint64_t t1 = w + 1 == W ? UINT64_MAX : ps->t_first + span * (w + 1) / W;
            double c = peak_in(pr, pn, t0, t1, tmp, &nb);
            row[1 + w] = nb >= MIN_PER_WINDOW ? c : NAN;
        }
        i = j + 1;
    }
    for (size_t i = 0; i < np; i++)   /* the tiers: NIC-facing when the topology names it */
        ps->p[i].tier = topo ? 1 : 0;
    for (size_t e = 0; topo && ps->slot && e < topo->n; e++) {
        size_t free_slot;
        long i = port_find(ps, topo->e[e].leaf, strlen(topo->e[e].leaf), topo->e[e].port,
                           strlen(topo->e[e].port), &free_slot);
        if (i >= 0)
            ps->p[i].tier = 0;
    }
    for (size_t i = 0; i < np; i++) {
        struct fl_port *p = &ps->p[i];
        if (p->samples < 2)
            for (unsigned w = 0; w <= W; w++)
                pk[i * (W + 1) + w] = NAN;
    }
    for (int tier = 0; tier < 2; tier++)
        for (unsigned w = 0; w <= W; w++) {
            size_t nv = 0;
            for (size_t i = 0; i < np; i++)
                if (ps->p[i].tier == tier && !isnan(pk[i * (W + 1) + w]))
                    tmp[nv++] = pk[i * (W + 1) + w];
            if (nv < 3)
                continue;
            double med = fl_median(tmp, nv);
            double sc = 1.4826 * fl_mad(tmp, nv, med);
            if (sc < 0.01 * med)
                sc = 0.01 * med;
            for (size_t i = 0; i < np; i++) {
                struct fl_port *p = &ps->p[i];
                double x = pk[i * (W + 1) + w];
                if (p->tier != tier || isnan(x) || !(sc > 0))
                    continue;
                double z = (x - med) / sc, dr = 1 - x / med;
                int flag = z <= -k && dr >= drop;
                if (w == 0)
                    p->z = z, p->drop = dr, p->degraded = flag;
                else
                    p->win_used++, p->win_flagged += flag;
            }
        }
    for (size_t i = 0; i < np; i++)
        ps->p[i].degraded &= 2 * ps->p[i].win_flagged >= ps->p[i].win_used;
    rc = 0;
out:
    free(r);
    free(tmp);
    free(pk);
    free(first);
    return rc;
}
