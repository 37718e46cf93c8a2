/* layout.c — the context's layout and peer classes: every slot's coordinates (from its
 * summaries, its rank info, or its rank id in Megatron order once the sizes are known),
 * else classes inferred from the compute kernels each rank runs, joined along the
 * program's communicators (groups.c, groups_infer.c) or split by speed (speed.c), and
 * the classes' members (CSR). Reads the context's cells and the store's rank infos;
 * writes only the context's coordinates, layout, groups and classes.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int coords_known(const struct argus_coords *x)
{
    return x->tp_size && x->pp_size && x->dp_size;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Without coordinates: ranks that launch the same set of compute kernels (those seen in
 * at least half of their steps) do the same work, as the ranks of one PP stage do (the
 * first stage has the embedding, the last the loss). Classes are numbered by their lowest
 * rank. Returns the number of classes (cls[r] filled), 0 on allocation failure. */
static uint32_t infer_classes(struct an_ctx *c, uint32_t *cls)
{
    const size_t K = c->names.n;
    uint32_t *cnt = calloc(K + 1, sizeof *cnt), *stamp = calloc(K + 1, sizeof *stamp);
    uint64_t *sig = calloc(c->n, sizeof *sig);
    uint32_t ncls = 0;

    if (!cnt || !stamp || !sig)
        goto out;
    for (uint32_t r = 0; r < c->n; r++) {
        uint32_t held = 0;
        if (!c->kmr[r]) { /* no kernel modes: the empty signature, nothing to count */
            uint32_t q = 0;
            while (q < r && sig[q] != 0)
                q++;
            cls[r] = q < r ? cls[q] : ncls++;
            continue;
        }
        memset(cnt, 0, (K + 1) * sizeof *cnt);
        memset(stamp, 0, (K + 1) * sizeof *stamp);
        for (size_t si = 0; si < c->S; si++) {
            const struct argus_step_summary *s = an_kcell(c, r, si); /* thin: no kernels */
            if (!s)
                continue;
            held++;
            for (uint32_t k = 0; k < s->n_kmodes && k < ARGUS_MAX_KMODES; k++) {
                long at = an_name_find(&c->names, s->kmodes[k].name_hash);
                if (at >= 0 && s->kmodes[k].kclass == ARGUS_KC_COMPUTE &&
                    stamp[at] != held) {
                    stamp[at] = held;
                    cnt[at]++;
                }
            }
        }
        for (size_t k = 0; k < K; k++)
            if (cnt[k] && 2 * cnt[k] >= held)
                sig[r] += mix64(c->names.hash[k]);
        uint32_t q = 0;
        while (q < r && sig[q] != sig[r])
            q++;
        cls[r] = q < r ? cls[q] : ncls++;
    }
out:
    free(cnt);
    free(stamp);
    free(sig);
    return ncls;
}

/* Coordinates of every slot: from its summaries (build_cells), else its rank info, else
 * from its rank id in Megatron order once the sizes are known; the layout when some
 * rank said where it sits. */
static void resolve_coords(struct an_ctx *c)
{
    struct argus_coords sizes = { 0 };
    uint8_t *have = c->co_have; /* co[r] from r's summaries (build_cells) */

    for (uint32_t r = 0; r < c->n; r++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(c->js, c->rank_of[r]);
        if (!have[r] && ri && coords_known(&ri->coords)) {
            c->co[r] = ri->coords;
            have[r] = 1;
        }
        if (have[r] && !coords_known(&sizes))
            sizes = c->co[r];
    }
    c->layout_known = coords_known(&sizes);
    if (c->layout_known) {
        c->lay.tp = sizes.tp_size;
        c->lay.pp = sizes.pp_size;
        c->lay.dp = sizes.dp_size;
        c->lay.ep = sizes.ep_size ? sizes.ep_size : 1;
        c->lay.inferred = 0;
        for (uint32_t r = 0; r < c->n; r++) {
            if (have[r] && c->co[r].tp_size == sizes.tp_size &&
                c->co[r].pp_size == sizes.pp_size && c->co[r].dp_size == sizes.dp_size)
                continue;
            struct argus_coords *x = &c->co[r];
            const uint32_t id = c->rank_of[r]; /* Megatron order is of rank ids */
            *x = sizes;
            x->tp = (uint16_t)(id % sizes.tp_size);
            x->dp = (uint16_t)((id / sizes.tp_size) % sizes.dp_size);
            x->pp = (uint16_t)(id / ((uint32_t)sizes.tp_size * sizes.dp_size));
            x->ep = 0;
        }
    }
    free(c->co_have);
    c->co_have = NULL;
}

/* Without a layout: peer classes from the kernels each rank runs (c->cls, n_cls), joined
 * along the program's communicators (groups.c) or else grouped by collective end times
 * (groups_infer.c); the classes are reported as stages when they split the ranks evenly.
 * 0 or -ENOMEM. */
static int infer_layout(struct an_ctx *c)
{
    c->n_cls = infer_classes(c, c->cls);
    if (c->n_cls == 0)
        return -ENOMEM;
    int rc = an_groups_build(c); /* groups from communicators; may merge classes */
    if (rc || (rc = an_groups_infer(c))) /* else from collective end times */
        return rc;
    uint32_t *size = calloc(c->n_cls, sizeof *size);
    if (!size)
        return -ENOMEM;
    for (uint32_t r = 0; r < c->n; r++)
        size[c->cls[r]]++;
    int even = c->n % c->n_cls == 0;
    for (uint32_t k = 0; k < c->n_cls; k++)
        even &= size[k] == c->n / c->n_cls;
    free(size);
    c->lay.tp = 1;
    c->lay.pp = even ? (int)c->n_cls : 1;
    c->lay.dp = (int)c->n / c->lay.pp;
    c->lay.ep = 1;
    c->lay.inferred = 1;
    return an_speed_classes(c); /* after the layout: speed classes are no stages */
}

/* The members of each peer class, ascending (CSR: cls_off, cls_mem). 0 or -ENOMEM. */
static int class_members(struct an_ctx *c)
{
    c->cls_off = calloc(c->n_cls + 1, sizeof *c->cls_off);
    c->cls_mem = calloc(c->n, sizeof *c->cls_mem);
    if (!c->cls_off || !c->cls_mem)
        return -ENOMEM;
    for (uint32_t r = 0; r < c->n; r++)
        c->cls_off[c->cls[r] + 1]++;
    for (uint32_t k = 0; k < c->n_cls; k++)
        c->cls_off[k + 1] += c->cls_off[k];
    uint32_t *fill = calloc(c->n_cls, sizeof *fill);
    if (!fill)
        return -ENOMEM;
    for (uint32_t r = 0; r < c->n; r++)
        c->cls_mem[c->cls_off[c->cls[r]] + fill[c->cls[r]]++] = r;
    free(fill);
    return 0;
}

/* Coordinates, layout and peer classes: the classes are the PP stages, or inferred from
 * the kernels each rank runs when no rank said where it sits (infer_layout). */
int an_build_layout(struct an_ctx *c)
{
    resolve_coords(c);
    c->cls = calloc(c->n, sizeof *c->cls);
    if (!c->cls)
        return -ENOMEM;
    if (c->layout_known) {
        c->n_cls = (uint32_t)c->lay.pp;
        for (uint32_t r = 0; r < c->n; r++)
            c->cls[r] = c->co[r].pp < c->n_cls ? c->co[r].pp : c->n_cls - 1;
    } else {
        int rc = infer_layout(c);
        if (rc)
            return rc;
    }
    return class_members(c);
}
