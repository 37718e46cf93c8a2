/* kineto_event.c — what one finished event of a Kineto trace becomes (import/kineto_parse.h):
 * kernels, memcpy and memset into the kernel table (interned names), CUDA/HIP runtime
 * launches (correlation -> CPU time), ProfilerStep#N ranges and phase annotations
 * (user_annotation, gpu_user_annotation; backward and optimizer cpu_ops), python_function
 * spans to the host stack collector (import/pystacks.h). Known kinds that are not needed
 * are dropped; anything else is counted by category (the first 16 named).
 * Must not trust the event: a field may be missing or of the wrong type, times absurd.
 */
#include "import/kineto_parse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/kclass.h"
#include "common/wire.h"
#include "import/pystacks.h"

static void count_unknown(struct parser *p, const char *cat)
{
    struct argus_kineto_info *in = p->t->info;

    in->skipped++;
    for (uint32_t i = 0; i < in->unknown_types && i < 16; i++)
        if (strcmp(p->unknown[i], cat) == 0)
            return;
    if (in->unknown_types < 16)
        snprintf(p->unknown[in->unknown_types], CAT_MAX, "%s", cat);
    in->unknown_types++;
}

static int is_cat(const struct ev *e, const char *c)
{
    return strcasecmp(e->cat, c) == 0;
}

/* ts and dur of a timed event usable: counted (and 0) when not. */
static int times_ok(struct parser *p, int kernel)
{
    const struct ev *e = &p->e;
    if (!e->bad_time && e->dur >= 0 && e->dur <= KT_MAX_DUR_NS &&
        e->ts > -KT_MAX_TS_NS && e->ts < KT_MAX_TS_NS &&
        p->base_ns + e->ts >= 0 && p->base_ns + e->ts < KT_MAX_TS_NS)
        return 1;
    p->t->info->bad_times++;
    p->t->info->bad_kernels += kernel;
    return 0;
}

void kt_event_end(struct parser *p)
{
    struct ev *e = &p->e;
    struct kt_trace *t = p->t;
    int kc = -1;

    t->info->events++;
    if (e->bad) {
        t->info->malformed++;
        return;
    }
    if (e->ph == 'M' || e->ph == 'i' || e->ph == 'I' || e->ph == 's' || e->ph == 'f' ||
        e->ph == 't' || e->ph == 'C')
        return; /* metadata, instants, flows, counters: known, not needed */
    if (is_cat(e, "kernel"))
        kc = argus_kclass_from_name(e->name);
    else if (is_cat(e, "gpu_memcpy"))
        kc = ARGUS_KC_MEMCPY;
    else if (is_cat(e, "gpu_memset"))
        kc = ARGUS_KC_MEMSET;
    if (kc >= 0) {
        if ((e->have & 7) != 7) {
            t->info->malformed++;
            return;
        }
        if (!times_ok(p, 1))
            return;
        struct kt_kernel k = {0};
        uint32_t off = kt_intern(t, e->name);
        if (off == UINT32_MAX)
            return;
        k.start = (uint64_t)(p->base_ns + e->ts);
        k.end = k.start + (uint64_t)e->dur;
        k.name = off;
        k.corr = (e->have & 16) ? (uint32_t)e->corr : 0;
        k.has_corr = (e->have & 16) && e->corr > 0 && e->corr <= UINT32_MAX;
        k.stream = (e->have & 32) ? (uint32_t)e->stream : 0;
        k.device = (e->have & 64) ? (uint32_t)e->device : 0;
        k.kclass = (uint8_t)kc;
        if (kt_vec_push(t, &t->kernels, &k) == 0) {
            t->info->kernels++;
            if (strncasecmp(e->name, "nccl", 4) == 0 || strncasecmp(e->name, "rccl", 4) == 0)
                t->info->nccl_kernels++;
        }
        return;
    }
    int cpu_ann = is_cat(e, "user_annotation"), gpu_ann = is_cat(e, "gpu_user_annotation");
    int cpu_op = is_cat(e, "cpu_op");
    if (cpu_ann || gpu_ann || cpu_op) {
        if ((e->have & 7) != 7) {
            t->info->malformed++;
            return;
        }
        if (!times_ok(p, 0))
            return;
        struct kt_range r = {0};
        r.start = (uint64_t)(p->base_ns + e->ts);
        r.end = r.start + (uint64_t)e->dur;
        r.gpu = (uint8_t)gpu_ann;
        if (!cpu_op && strncmp(e->name, "ProfilerStep#", 13) == 0) {
            int64_t n;
            if (kt_parse_int(e->name + 13, strlen(e->name + 13), &n) != 0 || n < 0) {
                t->info->malformed++;
                return;
            }
            r.step = (uint64_t)n;
            kt_vec_push(t, &t->steps, &r);
            return;
        }
        if (cpu_op) {
            if (strstr(e->name, "autograd::engine::evaluate_function"))
                r.phase = ARGUS_PH_BACKWARD;
            else if (strncmp(e->name, "Optimizer.", 10) == 0)
                r.phase = ARGUS_PH_OPTIMIZER;
            else
                return;
        } else {
            r.phase = (uint8_t)argus_phase_from_name(e->name);
            if (r.phase == ARGUS_PH_OTHER)
                return;
        }
        kt_vec_push(t, &t->ranges, &r);
        return;
    }
    if (is_cat(e, "cuda_runtime") || is_cat(e, "cuda_driver") || is_cat(e, "hip_runtime")) {
        if ((e->have & 17) == 17 && e->corr > 0 && e->corr <= UINT32_MAX) {
            struct kt_launch l = {(uint64_t)(p->base_ns + e->ts), (uint32_t)e->corr};
            kt_vec_push(t, &t->launches, &l);
        }
        return;
    }
    if (is_cat(e, "python_function")) { /* with_stack=True: host stacks (pystacks.h) */
        if (p->ps && (e->have & 7) == 7 && !e->bad_time && e->dur >= 0 &&
            e->dur <= KT_MAX_DUR_NS && p->base_ns + e->ts >= 0 &&
            p->base_ns + e->ts < KT_MAX_TS_NS)
            (void)argus_pystacks_span(p->ps, (uint64_t)(p->base_ns + e->ts), (uint64_t)e->dur,
                                      e->tid, e->name);
        return;
    }
    if (is_cat(e, "ac2g") || is_cat(e, "fwdbwd") || is_cat(e, "trace") ||
        is_cat(e, "cpu_instant_event") ||
        is_cat(e, "overhead") || is_cat(e, "cuda_sync"))
        return; /* known, not needed */
    count_unknown(p, e->cat[0] ? e->cat : "(no cat)");
}
