/* carry.c — anomalies of evicted steps kept in later reports (pipeline/carry.h). */
#include "pipeline/carry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "report/report.h"

void argus_carry_init(struct argus_carry *c)
{
    memset(c, 0, sizeof *c);
}

void argus_carry_free(struct argus_carry *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

static int remember(struct argus_carry *c, const struct argus_anomaly *a)
{
    if (argus_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 16) != 0)
        return -ENOMEM;
    c->v[c->n++] = *a;
    return 0;
}

/* The remembered anomaly that a continues, or -1. */
static long continued(const struct argus_carry *c, const struct argus_anomaly *a, uint64_t h,
                      uint64_t first_held)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct argus_anomaly *m = &c->v[i];
        if (m->kind != a->kind || argus_anomaly_sources_hash(m) != h)
            continue;
        if (m->step_first <= a->step_last + 1 &&
            (a->step_first <= m->step_last + 1 || a->step_first <= first_held))
            return (long)i;
    }
    return -1;
}

long argus_carry_apply(struct argus_carry *c, struct argus_result *r, uint64_t first_held)
{
    const size_t own = r->n_anomalies;
    uint8_t *seen = calloc(c->n + own + 1, 1);
    long added = 0;

    if (!seen)
        return -ENOMEM;
    for (size_t i = 0; i < own; i++) {
        struct argus_anomaly *a = &r->anomalies[i];
        long m = continued(c, a, argus_anomaly_sources_hash(a), first_held);
        if (m >= 0) {
            if (c->v[m].step_first < a->step_first)
                a->step_first = c->v[m].step_first;
            c->v[m] = *a;
            seen[m] = 1;
        } else if (remember(c, a) == 0) {
            seen[c->n - 1] = 1;
        }
    }
    size_t extra = 0;
    for (size_t i = 0; i < c->n; i++)
        extra += !seen[i] && c->v[i].step_last < first_held;
    if (extra) {
        struct argus_anomaly *v = realloc(r->anomalies, (own + extra) * sizeof *v);
        if (!v) {
            free(seen);
            return -ENOMEM;
        }
        r->anomalies = v;
        for (size_t i = 0; i < c->n; i++)
            if (!seen[i] && c->v[i].step_last < first_held) {
                struct argus_anomaly *a = &r->anomalies[r->n_anomalies++];
                *a = c->v[i];
                a->id = (int)r->n_anomalies;
                added++;
            }
    }
    free(seen);
    return added;
}
