/* period.c — automatic step detection by period finding over kernel ids (period.h).
 * No allocation after create; detection works in preallocated scratch arrays. One thread.
 */
#include "tracer/period.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/modes.h" /* argus_sort_pairs */

#define MIN_WINDOW 4096
#define MAX_CANDS 256
#define MAX_TRIES 16
#define MAX_PAIRS 64
#define LOOKAHEAD 4
#define FIRST_DETECT 1024

struct cand {
    size_t gap;    /* mean anchor spacing */
    size_t g0, k;  /* group start in the sorted pairs, occurrences */
    int coll;
};

struct argus_period {
    size_t max_period, cap; /* cap = window length L */
    uint64_t *win;          /* circular [cap] */
    uint8_t *coll;          /* [cap] */
    size_t head;            /* next write position */
    uint64_t n;             /* pushes so far */
    uint64_t next_detect;
    uint64_t *lin;          /* [cap] linearised window */
    uint8_t *lcoll;         /* [cap] */
    struct argus_sort_pair *pa, *pb; /* [cap] */
    struct cand cands[MAX_CANDS];

    int locked, boundary_next;
    uint64_t anchor;
    int anchor_coll;
    size_t period, since, max_gap;
    unsigned locks;
};

int argus_period_create(size_t max_period, struct argus_period **out)
{
    struct argus_period *p;

    if (!out || max_period < 2 || max_period > (SIZE_MAX >> 6))
        return -EINVAL;
    p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->max_period = max_period;
    p->cap = 4 * max_period < MIN_WINDOW ? MIN_WINDOW : 4 * max_period;
    p->win = calloc(p->cap, sizeof *p->win);
    p->coll = calloc(p->cap, 1);
    p->lin = calloc(p->cap, sizeof *p->lin);
    p->lcoll = calloc(p->cap, 1);
    p->pa = calloc(p->cap, sizeof *p->pa);
    p->pb = calloc(p->cap, sizeof *p->pb);
    if (!p->win || !p->coll || !p->lin || !p->lcoll || !p->pa || !p->pb) {
        argus_period_free(p);
        return -ENOMEM;
    }
    p->next_detect = FIRST_DETECT;
    *out = p;
    return 0;
}

void argus_period_free(struct argus_period *p)
{
    if (!p)
        return;
    free(p->win);
    free(p->coll);
    free(p->lin);
    free(p->lcoll);
    free(p->pa);
    free(p->pb);
    free(p);
}

size_t argus_period_get(const struct argus_period *p) { return p && p->locked ? p->period : 0; }
unsigned argus_period_locks(const struct argus_period *p) { return p ? p->locks : 0; }

/* Matched ids of a against b, skipping insertions on either side (greedy, lookahead). */
static size_t align(const uint64_t *a, size_t la, const uint64_t *b, size_t lb)
{
    size_t i = 0, j = 0, m = 0;

    while (i < la && j < lb) {
        if (a[i] == b[j]) {
            m++, i++, j++;
            continue;
        }
        size_t d;
        for (d = 1; d <= LOOKAHEAD; d++) {
            if (i + d < la && a[i + d] == b[j]) {
                i += d;
                break;
            }
            if (j + d < lb && a[i] == b[j + d]) {
                j += d;
                break;
            }
        }
        if (d > LOOKAHEAD)
            i++, j++;
    }
    return m;
}

/* Confirm candidate c over the linearised window; returns the period or 0. */
static size_t confirm(struct argus_period *p, const struct cand *c)
{
    size_t ms[MAX_PAIRS], nm = 0, sum_m = 0, sum_l = 0;
    size_t first = c->k > MAX_PAIRS + 2 ? c->k - (MAX_PAIRS + 2) : 0;

    for (size_t j = first; j + 2 < c->k; j++) {
        size_t p0 = p->pa[c->g0 + j].val, p1 = p->pa[c->g0 + j + 1].val;
        size_t p2 = p->pa[c->g0 + j + 2].val;
        size_t la = p1 - p0, lb = p2 - p1;
        size_t m = align(p->lin + p0, la, p->lin + p1, lb);
        sum_m += m;
        sum_l += la > lb ? la : lb;
        /* insertion into the sorted ms */
        size_t at = nm++;
        while (at > 0 && ms[at - 1] > m) {
            ms[at] = ms[at - 1];
            at--;
        }
        ms[at] = m;
    }
    /* >= 95 % of ids repeat over all pairs (one pair may hold a burst of noise). */
    if (nm == 0 || (double)sum_m < 0.95 * (double)sum_l)
        return 0;
    size_t per = ms[nm / 2];
    return per >= 2 && per <= p->max_period ? per : 0;
}

static void detect(struct argus_period *p)
{
    size_t n = p->n < p->cap ? (size_t)p->n : p->cap;
    size_t start = p->n < p->cap ? 0 : p->head, nc = 0;

    for (size_t i = 0; i < n; i++) {
        size_t s = (start + i) % p->cap;
        p->lin[i] = p->win[s];
        p->lcoll[i] = p->coll[s];
        p->pa[i].key = p->win[s];
        p->pa[i].val = i;
    }
    argus_sort_pairs(p->pa, p->pb, n); /* stable: positions ascend within an id */
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && p->pa[e].key == p->pa[g].key)
            e++;
        size_t k = e - g;
        if (k >= 2 && nc < MAX_CANDS) {
            size_t mn = SIZE_MAX, mx = 0;
            for (size_t j = g + 1; j < e; j++) {
                size_t d = p->pa[j].val - p->pa[j - 1].val;
                mn = d < mn ? d : mn;
                mx = d > mx ? d : mx;
            }
            size_t mean = (p->pa[e - 1].val - p->pa[g].val) / (k - 1);
            if (mean >= 2 && (double)(mx - mn) <= 0.1 * (double)mean + 2.0 &&
                mean <= p->max_period + p->max_period / 5) {
                struct cand c = {mean, g, k, p->lcoll[p->pa[g].val]};
                size_t at = nc++;
                while (at > 0 && (p->cands[at - 1].gap > c.gap ||
                                  (p->cands[at - 1].gap == c.gap && c.coll &&
                                   !p->cands[at - 1].coll))) {
                    p->cands[at] = p->cands[at - 1];
                    at--;
                }
                p->cands[at] = c;
            }
        }
        g = e;
    }
    size_t tried = 0, last_failed = 0;
    for (size_t i = 0; i < nc && tried < MAX_TRIES; i++) {
        const struct cand *c = &p->cands[i];
        if (c->k < 3)
            continue; /* two occurrences give no pair of segments to compare */
        if (last_failed && (double)c->gap < 1.02 * (double)last_failed)
            continue; /* the same spacing already failed with another anchor */
        tried++;
        size_t per = confirm(p, c);
        if (!per) {
            last_failed = c->gap;
            continue;
        }
        /* Prefer a collective anchor of the same spacing (the gradient sync). */
        for (size_t j = 0; !c->coll && j < nc; j++) {
            double r = (double)p->cands[j].gap / (double)c->gap;
            if (p->cands[j].coll && r > 0.98 && r < 1.02) {
                c = &p->cands[j];
                break;
            }
        }
        size_t mx = 0;
        for (size_t j = c->g0 + 1; j < c->g0 + c->k; j++) {
            size_t d = p->pa[j].val - p->pa[j - 1].val;
            mx = d > mx ? d : mx;
        }
        p->locked = 1;
        p->locks++;
        p->period = per;
        p->anchor = p->pa[c->g0].key;
        p->anchor_coll = c->coll;
        p->max_gap = mx;
        p->since = n - 1 - p->pa[c->g0 + c->k - 1].val;
        p->boundary_next = 0;
        return;
    }
}

int argus_period_push(struct argus_period *p, uint64_t id, int is_collective)
{
    int boundary = 0;

    if (!p)
        return 0;
    p->win[p->head] = id;
    p->coll[p->head] = (uint8_t)(is_collective != 0);
    p->head = (p->head + 1) % p->cap;
    p->n++;
    if (p->locked) {
        if (p->boundary_next) {
            p->boundary_next = 0;
            boundary = 1;
        }
        if (id == p->anchor) {
            if (p->since + 1 > p->max_gap)
                p->max_gap = p->since + 1;
            p->since = 0;
            if (p->anchor_coll)
                p->boundary_next = 1;
            else
                boundary = 1;
        } else if (++p->since > p->max_gap + p->max_gap / 2 + 16) {
            p->locked = 0; /* the anchor went away: detect again soon */
            p->next_detect = p->n + (p->cap / 4 < FIRST_DETECT ? p->cap / 4 : FIRST_DETECT);
        }
        return boundary;
    }
    if (p->n >= p->next_detect) {
        detect(p);
        p->next_detect = p->n < p->cap ? p->n * 2 : p->n + p->cap / 4;
        if (p->next_detect > p->cap && p->n < p->cap)
            p->next_detect = p->cap;
    }
    return 0;
}
