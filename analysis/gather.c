/* gather.c — an_class_gather (internal.h): the values of a rank x step table over the
 * members of one peer class, step by step, in columns that the medians per class and step
 * (ctx.c, episodes.c) select on in place. The tables are rank-major: gathering one step at a
 * time read one double of each member's row per pass (a cache line for 8 bytes); this
 * reads each row once for a block of steps. Scratch lives in the context, allocated once.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* an_class_gather's columns hold about this many doubles (512 KiB): a block of steps that
 * stays in cache while its columns are selected on, whatever the number of steps. */
#define AN_GATHER_DOUBLES ((size_t)1 << 16)

size_t an_class_gather(struct an_ctx *c, const double *v, uint32_t k, size_t s0)
{
    const size_t S = c->S, ns = S - s0 < c->gat_steps ? S - s0 : c->gat_steps;
    const size_t cap = c->gat_cap, nm = c->cls_off[k + 1] - c->cls_off[k];
    const uint32_t *mem = c->cls_mem + c->cls_off[k];
    double *restrict gat = c->gat;
    int holes = 0;
    /* a plain transpose first (no store waits on a count), holes squeezed out after */
    for (size_t i = 0; i < nm; i++) {
        const double *row = v + (size_t)mem[i] * S + s0;
        for (size_t j = 0; j < ns; j++) {
            const double x = row[j];
            gat[j * cap + i] = x;
            holes |= isnan(x);
        }
    }
    for (size_t j = 0; j < ns; j++) {
        double *col = gat + j * cap;
        size_t m = nm;
        if (holes) {
            m = 0;
            for (size_t i = 0; i < nm; i++) {
                const double x = col[i];
                col[m] = x;
                m += !isnan(x);
            }
        }
        c->gat_n[j] = m;
    }
    return ns;
}

int an_gather_alloc(struct an_ctx *c)
{
    size_t most = 1;
    for (uint32_t k = 0; k < c->n_cls; k++)
        if (c->cls_off[k + 1] - c->cls_off[k] > most)
            most = c->cls_off[k + 1] - c->cls_off[k];
    /* columns a cache line more than a whole number of lines apart: at a power-of-two
     * distance (classes of 4096 ranks) the transpose's stores all fell in one cache set */
    const size_t cap = (most + 7) / 8 * 8 + 8;
    /* an eighth to spare: the padding must not cost a class of 4096 its 16th step */
    size_t steps = (AN_GATHER_DOUBLES + AN_GATHER_DOUBLES / 8) / cap;
    steps = steps < 1 ? 1 : steps > c->S ? c->S : steps;
    c->gat = malloc(steps * cap * sizeof *c->gat);
    c->gat_n = malloc(steps * sizeof *c->gat_n);
    if (!c->gat || !c->gat_n)
        return -ENOMEM;
    c->gat_cap = cap;
    c->gat_steps = steps;
    return 0;
}
