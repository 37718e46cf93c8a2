/* detect_job.c — the job store one run of the detection suite analyses (bench/detect_job.h):
 * the synthetic job (tests/synth/synth.h), with --condense the store rank 0 builds from what
 * the condensing root keeps of it (reduce/condense.h, a batch per WINDOW steps), then cut
 * to a data level (bench/README.md, "Data levels").
 * Must not change the summaries it is given beyond the level's cut; keeps the totals of
 * what condensing kept over all runs, nothing else.
 */
#include "bench/detect_job.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "reduce/bytebuf.h"
#include "reduce/condense.h"

const char *const detect_level_name[LV_N] = { "kernels", "phases", "steps" };

/* --condense: on, and what the condensing root kept over all runs */
static struct detect_condensed cond;

void detect_job_condense(int on)
{
    cond.on = on;
}

const struct detect_condensed *detect_job_condensed(void)
{
    return &cond;
}

/* Append one encoded record (enc: 0 summary, 1 name, 2 rank info). 0 or -1. */
static int eput(struct argus_bytebuf *b, int enc, const void *x, uint64_t h)
{
    const size_t room = enc == 0 ? argus_summary_encoded_max(
                                       ((const struct argus_step_summary *)x)->n_kmodes)
                                 : 4096;
    uint8_t *p = argus_bytebuf_reserve(b, room) ? NULL : b->p + b->len;
    long n = !p ? -1
             : enc == 0 ? argus_summary_encode(x, p, room)
             : enc == 1 ? argus_name_encode(h, x, p, room)
                        : argus_rankinfo_encode(x, p, room);
    if (n <= 0)
        return -1;
    b->len += (size_t)n;
    return 0;
}

/* Replace *js by the store rank 0 builds when every summary of *js goes through the
 * condensing root, a batch per WINDOW steps. 0 or -1 (*js untouched). */
static int condense_job(struct argus_jobstore **js)
{
    const struct argus_jobstore *src = *js;
    const uint32_t n = argus_jobstore_nranks(src);
    struct argus_jobstore *dst = NULL;
    struct argus_condense c;
    struct argus_bytebuf b = { 0 };
    uint64_t first, last, bad = 0, *seen = NULL;
    size_t nseen = 0, *cur = calloc(n, sizeof *cur);
    char err[256] = "out of memory";
    int rc = -1;

    if (!cur || argus_jobstore_step_range(src, &first, &last) ||
        argus_jobstore_create(n, &dst) || argus_condense_init(&c, n))
        goto out_nocd;
    *argus_jobstore_meta(dst) = *argus_jobstore_meta_c(src);
    for (uint32_t q = 0; q < n; q++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(src, q);
        if (ri && eput(&b, 2, ri, 0))
            goto out;
        if (argus_jobstore_missing_since(src, q) != UINT64_MAX)
            argus_jobstore_mark_missing(dst, q, argus_jobstore_missing_since(src, q));
    }
    for (uint64_t w = first; w <= last; w += WINDOW) {
        for (uint32_t q = 0; q < n; q++) {
            const struct argus_step_summary *const *ss;
            const size_t ns = argus_jobstore_rank_steps(src, q, &ss);
            for (; cur[q] < ns && ss[cur[q]]->step < w + WINDOW; cur[q]++) {
                const struct argus_step_summary *s = ss[cur[q]];
                for (uint32_t k = 0; k < s->n_kmodes; k++) { /* names the first time */
                    const uint64_t h = s->kmodes[k].name_hash;
                    size_t i = 0;
                    while (i < nseen && seen[i] != h)
                        i++;
                    if (i < nseen)
                        continue;
                    uint64_t *ns2 = realloc(seen, (nseen + 1) * sizeof *seen);
                    if (!ns2)
                        goto out;
                    seen = ns2;
                    seen[nseen++] = h;
                    const char *nm = argus_jobstore_name(src, h);
                    if (nm && eput(&b, 1, nm, h))
                        goto out;
                }
                if (eput(&b, 0, s, 0))
                    goto out;
            }
        }
        if (argus_condense_run(&c, b.p, b.len, 1, &bad) ||
            argus_jobstore_ingest_buffer(dst, c.out, c.outlen, 0, err, sizeof err)) {
            fprintf(stderr, "detect: condense: %s\n", err);
            goto out;
        }
        b.len = 0;
    }
    cond.exemplars += (double)c.st.exemplars;
    cond.thin += (double)c.st.thin;
    cond.bad += (double)bad;
    argus_jobstore_free(*js);
    *js = dst;
    dst = NULL;
    rc = 0;
out:
    argus_condense_free(&c);
out_nocd:
    argus_jobstore_free(dst);
    free(b.p);
    free(seen);
    free(cur);
    return rc;
}

/* ---- data levels ----------------------------------------------------------------- */

/* s at a lower level, in place: phases = every figure that comes from kernels gone
 * (class times, busy time, kernel modes and count, the phase compute split, the COMM and
 * HOST phase walls, which the summariser derives from kernels; host_gap_ns 0), the walls
 * of the marked phases kept; steps = the phase walls gone too, only the step's interval
 * left. Coordinates and rank infos stay. */
static void degrade_summary(struct argus_step_summary *s, int level)
{
    s->compute_ns = s->collective_ns = s->p2p_ns = s->memcpy_ns = s->busy_ns = 0;
    s->host_gap_ns = 0;
    s->kernel_count = 0;
    s->n_kmodes = 0;
    memset(s->phase_compute_ns, 0, sizeof s->phase_compute_ns);
    s->phase_wall_ns[ARGUS_PH_COMM] = s->phase_wall_ns[ARGUS_PH_HOST] = 0;
    if (level == LV_STEPS)
        memset(s->phase_wall_ns, 0, sizeof s->phase_wall_ns);
}

/* Replace *js by a store of its summaries at `level` (LV_KERNELS: untouched). 0 or -1
 * (*js untouched). */
static int degrade_job(struct argus_jobstore **js, int level)
{
    const struct argus_jobstore *src = *js;
    const uint32_t n = argus_jobstore_nranks(src);
    struct argus_jobstore *dst = NULL;
    struct argus_step_summary *tmp = NULL;
    int rc = -1;

    if (level == LV_KERNELS)
        return 0;
    if (argus_jobstore_create(n, &dst) || !(tmp = malloc(sizeof *tmp)))
        goto out;
    *argus_jobstore_meta(dst) = *argus_jobstore_meta_c(src);
    for (uint32_t q = 0; q < n; q++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(src, q);
        const struct argus_step_summary *const *ss;
        const size_t ns = argus_jobstore_rank_steps(src, q, &ss);
        if (ri && argus_jobstore_set_rankinfo(dst, ri))
            goto out;
        for (size_t i = 0; i < ns; i++) {
            memcpy(tmp, ss[i], offsetof(struct argus_step_summary, kmodes));
            degrade_summary(tmp, level);
            if (argus_jobstore_add_summary(dst, tmp))
                goto out;
        }
        if (argus_jobstore_missing_since(src, q) != UINT64_MAX)
            argus_jobstore_mark_missing(dst, q, argus_jobstore_missing_since(src, q));
    }
    argus_jobstore_free(*js);
    *js = dst;
    dst = NULL;
    rc = 0;
out:
    argus_jobstore_free(dst);
    free(tmp);
    return rc;
}

/* synth_job, then (--condense) the condensed store, then the data level. */
int detect_make_job(const struct synth_opts *o, int level, struct argus_jobstore **js)
{
    if (synth_job(o, js))
        return -1;
    if ((cond.on && condense_job(js)) || degrade_job(js, level)) {
        argus_jobstore_free(*js);
        *js = NULL;
        return -1;
    }
    return 0;
}
