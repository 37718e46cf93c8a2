/* synth.c — the synthetic Megatron-style job of tests/synth/synth.h. Virtual time per rank; every
 * wait sits inside a communication kernel: a collective ends at the latest member's
 * arrival plus a transfer shared by all members, a pipeline receive ends at the sender's
 * send time plus a transfer. Test-only; deterministic.
 */
#include "tests/synth/synth_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct kdef kdefs[K_N] = {
    [K_EMBED_FWD] = { "indexSelectLargeIndex<c10::BFloat16, long, unsigned int>", 35, 0 },
    [K_LN_FWD] = { "vectorized_layer_norm_kernel<c10::BFloat16, float>", 30, 0 },
    [K_QKV_FWD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 320, 0 },
    [K_FLASH_FWD] = { "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", 380, 0 },
    [K_PROJ_FWD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64", 140, 0 },
    [K_ADD_FWD] = { "vectorized_elementwise_kernel<4, CUDAFunctor_add<c10::BFloat16>>", 22, 0 },
    [K_FC1_FWD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64", 560, 0 },
    [K_GELU_FWD] = { "vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>", 48, 0 },
    [K_FC2_FWD] = { "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_tn>", 520, 0 },
    [K_LOGITS_FWD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_logits", 260, 0 },
    [K_SOFTMAX_BWD] = { "cunn_SoftMaxBackward<4, float, float, float>", 50, 0 },
    [K_FC2_DGRAD] = { "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_nn>", 520, 0 },
    [K_FC1_DGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64", 580, 0 },
    [K_WGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64", 600, 0 },
    [K_LN_BWD] = { "layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>", 40, 0 },
    [K_FLASH_BWD] = { "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>",
                      560, 0 },
    [K_QKV_DGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", 330, 0 },
    [K_EMBED_BWD] = { "embedding_backward_feature_kernel<c10::BFloat16, float, long>", 70, 0 },
    [K_ADAM] = { "multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>", 1400,
                 0 },
    [K_TP_AR] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 80, ARGUS_KC_COLLECTIVE },
    [K_P2P] = { "ncclDevKernel_SendRecv", 70, ARGUS_KC_P2P },
    [K_DP_RS] = { "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 3200, ARGUS_KC_COLLECTIVE },
    [K_DP_AG] = { "ncclDevKernel_AllGather_RING_LL", 2400, ARGUS_KC_COLLECTIVE },
};


static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t next(uint64_t *s)
{
    *s = mix(*s, 0x632be59bd9b4e019ull);
    return *s;
}

static double unit(uint64_t *s)
{
    return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double lognormal(uint64_t *s, double sigma)
{
    if (sigma <= 0)
        return 1.0;
    double u1 = unit(s), u2 = unit(s);
    return exp(sigma * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

void synth_default(struct synth_opts *o, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->tp = 2;
    o->pp = 2;
    o->dp = 4;
    o->steps = 60;
    o->microbatches = 4;
    o->layers = 2;
    o->seed = seed;
    o->noise = 0.03;
}

struct synth_fault *synth_add(struct synth_opts *o, int kind, int lo, int hi, double factor)
{
    struct synth_fault *f = &o->f[o->nf++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->lo = lo;
    f->hi = hi;
    f->factor = factor;
    return f;
}

const char *synth_kernel_name(const char *sub)
{
    for (int k = 0; k < K_N; k++)
        if (strstr(kdefs[k].name, sub))
            return kdefs[k].name;
    return NULL;
}

static int rank_of(const struct synth_opts *o, int tp, int dp, int pp)
{
    return tp + o->tp * (dp + o->dp * pp);
}

static int has(const struct synth_fault *f, int rank)
{
    for (int i = 0; i < f->nranks; i++)
        if (f->ranks[i] == rank)
            return 1;
    return 0;
}

static void set_factors(struct job *j, struct rk *r)
{
    const struct synth_opts *o = j->o;
    double cf = 1.0;
    for (int k = 0; k < K_N; k++) {
        r->kf[k] = 1.0;
        r->kdup[k] = 1;
    }
    r->tpf = r->dpf = 1.0;
    r->stall = r->late = r->nc_late = 0;
    r->nc_link = 0;
    for (int i = 0; i < o->nf; i++) {
        const struct synth_fault *f = &o->f[i];
        if (j->step < f->lo || j->step > f->hi)
            continue;
        if (f->period > 0 && (j->step - f->lo) % f->period != 0)
            continue;
        switch (f->kind) {
        case SY_STRAGGLER:
            if (has(f, r->rank))
                cf *= f->factor;
            break;
        case SY_BUBBLE:
            if (r->pp == f->stage)
                cf *= f->factor;
            break;
        case SY_REGRESSION:
        case SY_JITTER:
            cf *= f->factor;
            break;
        case SY_COMM:
            if (!f->group_tp && f->group_index == r->tp + o->tp * r->pp)
                r->dpf *= f->factor;
            if (f->group_tp && f->group_index == r->dp + o->dp * r->pp)
                r->tpf *= f->factor;
            break;
        case SY_HOST:
            if (has(f, r->rank))
                r->stall += (uint64_t)(f->ms * 1e6);
            break;
        case SY_KERNEL:
            if (has(f, r->rank))
                for (int k = 0; k < K_N; k++)
                    if (kdefs[k].kclass == ARGUS_KC_COMPUTE && strstr(kdefs[k].name, f->kernel))
                        r->kf[k] *= f->factor;
            break;
        case SY_CRASH:
            if (has(f, r->rank))
                r->dead = 1;
            break;
        case SY_LATE:
            if (has(f, r->rank))
                r->late += (uint64_t)(f->ms * 1e6);
            break;
        case SY_NCCL_LATE:
            if (has(f, r->rank))
                r->nc_late += (uint64_t)(f->ms * 1e6);
            break;
        case SY_NCCL_LINK:
            if (f->nranks > 0 && f->ranks[0] == r->rank)
                r->nc_link = f->factor;
            break;
        case SY_EXTRA:
            if (has(f, r->rank))
                for (int k = 0; k < K_N; k++)
                    if (kdefs[k].kclass == ARGUS_KC_COMPUTE && strstr(kdefs[k].name, f->kernel))
                        r->kdup[k] = (int)f->factor;
            break;
        }
    }
    if (o->step_sigma > 0) {
        /* step-time variability: a job-wide factor per step (data-dependent work) and a
         * smaller per-rank one (GPU-to-GPU variation) */
        uint64_t sj = mix(o->seed ^ 0x5157ull, (uint64_t)j->step);
        uint64_t sr = mix(sj, (uint64_t)r->rank + 1);
        cf *= lognormal(&sj, o->step_sigma) * lognormal(&sr, o->step_sigma / 3);
    }
    for (int k = 0; k < K_N; k++)
        if (kdefs[k].kclass == ARGUS_KC_COMPUTE)
            r->kf[k] *= cf;
}

static void emit(struct rk *r, int kid, uint64_t start, uint64_t end)
{
    struct acc *a = &r->acc[kid];
    uint64_t d = end - start;
    if (a->count == 0)
        a->phase = r->phase;
    if (a->count < MAX_CALLS)
        a->d[a->count++] = d;
    a->last_end = end > a->last_end ? end : a->last_end;
    r->busy += d;
    r->nk++;
    if (kdefs[kid].kclass == ARGUS_KC_COMPUTE) {
        r->comp += d;
        r->ph_comp[r->phase] += d;
    } else if (kdefs[kid].kclass == ARGUS_KC_COLLECTIVE) {
        r->coll += d;
    } else {
        r->p2p += d;
    }
    r->t = end;
}

static void gap(struct rk *r)
{
    r->t += 2000 + next(&r->rng) % 4000;
}

static void compute1(struct job *j, struct rk *r, int kid);

static void compute(struct job *j, struct rk *r, int kid)
{
    for (int i = 0; i < r->kdup[kid]; i++)
        compute1(j, r, kid);
}

static void compute1(struct job *j, struct rk *r, int kid)
{
    gap(r);
    double d = kdefs[kid].us * 1e3 * lognormal(&r->rng, j->o->noise) * r->kf[kid];
    if (j->o->tail > 0 && unit(&r->rng) < j->o->tail) {
        double p = pow(unit(&r->rng), -1.0 / 1.5); /* Pareto, alpha 1.5, >= 1 */
        d *= p > 20 ? 20 : p;
    }
    emit(r, kid, r->t, r->t + (uint64_t)(d < 1000 ? 1000 : d));
}

static uint64_t xfer(struct job *j, int kid, uint64_t who, uint64_t idx, double factor)
{
    uint64_t s = mix(mix(mix(mix(j->o->seed, (uint64_t)j->step), (uint64_t)kid), who), idx);
    double d = kdefs[kid].us * 1e3 * lognormal(&s, j->o->noise) * factor;
    return (uint64_t)(d < 1000 ? 1000 : d);
}

/* What NCCL's plugin would see of a DP collective (synth_opts.nccl): each member waits
 * for the latest arrival, then the transfer x0 (x with a slow link of member lk: the
 * extra on lk's transfer with its ring peer, the others wait for it). */
static void nccl_note(struct job *j, struct rk **g, int n, int kid, uint64_t latest,
                      uint64_t x0, uint64_t x, int lk)
{
    for (int i = 0; i < n; i++) {
        struct rk *r = g[i];
        const uint64_t wait = latest - r->t, half = x0 / 2;
        r->nc_colls++;
        r->nc_gpu += (uint64_t)(20e3 * lognormal(&r->rng, j->o->noise));
        r->nc_xfer += i == lk ? x : x0;
        r->nc_wait += wait + (i == lk ? 0 : x - x0);
        r->nc_pxfer += i == lk ? half + (x - x0)
                               : (uint64_t)((double)half * lognormal(&r->rng, j->o->noise));
        if (kid == K_DP_AG) {
            r->nc_seq = 2 * (uint64_t)j->step + 1;
            r->nc_arr = r->t;
        }
    }
}

/* A collective over members g[0..n): ends at the latest arrival plus a shared transfer. */
static void collective(struct job *j, struct rk **g, int n, int kid, uint64_t who,
                       uint64_t idx, double factor)
{
    const int dp = kid == K_DP_RS || kid == K_DP_AG;
    uint64_t latest = 0;
    int lk = -1;
    for (int i = 0; i < n; i++) {
        gap(g[i]);
        if (dp && kid == K_DP_AG)
            g[i]->t += g[i]->nc_late;
        if (dp && g[i]->nc_link > 1)
            lk = i;
        latest = g[i]->t > latest ? g[i]->t : latest;
    }
    const uint64_t x0 = xfer(j, kid, who, idx, factor);
    const uint64_t x = lk >= 0 ? (uint64_t)((double)x0 * g[lk]->nc_link) : x0;
    if (dp && j->o->nccl)
        nccl_note(j, g, n, kid, latest, x0, x, lk);
    uint64_t end = latest + x;
    for (int i = 0; i < n; i++)
        emit(g[i], kid, g[i]->t, end);
}

static void phase_begin(struct rk *r, int p)
{
    r->phase = p;
    r->phase_t0 = r->t;
}

static void phase_end(struct rk *r)
{
    r->ph_wall[r->phase] += r->t - r->phase_t0;
}

static void layer_block(struct job *j, struct rk **g, int n, const int *kids, int nk,
                        uint64_t who, uint64_t *ar)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nk; k++)
            compute(j, g[i], kids[k]);
    if (n > 1)
        collective(j, g, n, K_TP_AR, who, (*ar)++, g[0]->tpf);
}

static void forward(struct job *j, struct rk **g, int n, int mb, uint64_t *ar)
{
    const struct synth_opts *o = j->o;
    static const int attn[] = { K_LN_FWD, K_QKV_FWD, K_FLASH_FWD, K_PROJ_FWD };
    static const int mlp[] = { K_ADD_FWD, K_LN_FWD, K_FC1_FWD, K_GELU_FWD, K_FC2_FWD };
    const uint64_t who = (uint64_t)(g[0]->dp + o->dp * g[0]->pp);
    for (int i = 0; i < n; i++) {
        struct rk *r = g[i];
        phase_begin(r, ARGUS_PH_FORWARD);
        if (r->pp > 0) {
            struct rk *s = &j->r[rank_of(o, r->tp, r->dp, r->pp - 1)];
            gap(r);
            uint64_t ready = r->t, sent = s->fsent[mb];
            emit(r, K_P2P, ready, (sent > ready ? sent : ready) +
                                      xfer(j, K_P2P, (uint64_t)s->rank, (uint64_t)mb * 2, 1));
        } else {
            compute(j, r, K_EMBED_FWD);
        }
    }
    for (int l = 0; l < o->layers; l++) {
        layer_block(j, g, n, attn, 4, who, ar);
        layer_block(j, g, n, mlp, 5, who, ar);
    }
    for (int i = 0; i < n; i++) {
        struct rk *r = g[i];
        if (r->pp < o->pp - 1) {
            gap(r);
            r->fsent[mb] = r->t;
            emit(r, K_P2P, r->t, r->t + xfer(j, K_P2P, (uint64_t)r->rank, (uint64_t)mb * 2, 1));
        } else {
            compute(j, r, K_LN_FWD);
            compute(j, r, K_LOGITS_FWD);
        }
        phase_end(r);
    }
}

static void backward(struct job *j, struct rk **g, int n, int mb, uint64_t *ar)
{
    const struct synth_opts *o = j->o;
    static const int mlp[] = { K_FC2_DGRAD, K_WGRAD, K_FC1_DGRAD, K_WGRAD };
    static const int attn[] = { K_LN_BWD, K_WGRAD, K_FLASH_BWD, K_QKV_DGRAD, K_WGRAD };
    const uint64_t who = (uint64_t)(g[0]->dp + o->dp * g[0]->pp);
    for (int i = 0; i < n; i++) {
        struct rk *r = g[i];
        phase_begin(r, ARGUS_PH_BACKWARD);
        if (r->pp < o->pp - 1) {
            struct rk *s = &j->r[rank_of(o, r->tp, r->dp, r->pp + 1)];
            gap(r);
            uint64_t ready = r->t, sent = s->bsent[mb];
            emit(r, K_P2P, ready, (sent > ready ? sent : ready) +
                                      xfer(j, K_P2P, (uint64_t)s->rank, (uint64_t)mb * 2 + 1, 1));
        } else {
            compute(j, r, K_SOFTMAX_BWD);
            compute(j, r, K_WGRAD);
        }
    }
    for (int l = 0; l < o->layers; l++) {
        layer_block(j, g, n, mlp, 4, who, ar);
        layer_block(j, g, n, attn, 5, who, ar);
    }
    for (int i = 0; i < n; i++) {
        struct rk *r = g[i];
        if (r->pp > 0) {
            gap(r);
            r->bsent[mb] = r->t;
            emit(r, K_P2P, r->t,
                 r->t + xfer(j, K_P2P, (uint64_t)r->rank, (uint64_t)mb * 2 + 1, 1));
        } else {
            compute(j, r, K_EMBED_BWD);
        }
        phase_end(r);
    }
}

int synth_job(const struct synth_opts *o, struct argus_jobstore **out)
{
    const int n = o->tp * o->pp * o->dp;
    struct job j = { o, calloc((size_t)n, sizeof(struct rk)), n, 0 };
    struct argus_step_summary *s = malloc(sizeof *s);
    struct rk **g = calloc((size_t)n, sizeof *g);
    struct argus_jobstore *js = NULL;
    const uint64_t t0 = 1790000000ull * 1000000000ull;
    int rc = (j.r && s && g && o->microbatches <= MAX_MB) ? 0 : -ENOMEM;

    synth_khash_init();

    if (!rc)
        rc = argus_jobstore_create((uint32_t)n, &js);
    for (int q = 0; !rc && q < n; q++) {
        struct rk *r = &j.r[q];
        r->rank = q;
        r->tp = q % o->tp;
        r->dp = (q / o->tp) % o->dp;
        r->pp = q / (o->tp * o->dp);
        r->t = t0;
        r->rng = mix(o->seed, (uint64_t)q + 1);
        r->nc_hash = mix((uint64_t)(r->tp + o->tp * r->pp), 99); /* the NCCL DP id below */
        struct argus_rank_info ri = { 0 };
        ri.rank = (uint32_t)q;
        ri.world_size = (uint32_t)n;
        ri.device = q % 8;
        ri.pid = 1000u + (uint32_t)q;
        ri.started_ns = t0;
        snprintf(ri.host, sizeof ri.host, "node%03d", q / 8);
        if (o->comm_groups) {
            /* TP group = dp + dp_size * pp, DP group = tp + tp_size * pp, PP = tp + tp*dp */
            const uint32_t key[3] = {(uint32_t)(r->dp + o->dp * r->pp),
                                     (uint32_t)(r->tp + o->tp * r->pp),
                                     (uint32_t)(r->tp + o->tp * r->dp)};
            const int size[3] = {o->tp, o->dp, o->pp}, idx[3] = {r->tp, r->dp, r->pp};
            for (int k = 0; k < 3; k++)
                if (size[k] > 1)
                    ri.groups[ri.n_groups++] = (struct argus_comm_group){
                        mix(key[k], (uint64_t)k + 77), 1u + (uint32_t)k, (uint32_t)size[k],
                        (uint32_t)idx[k], ARGUS_COMM_MPI};
            if (o->comm_groups > 1 && o->dp > 1) /* and an NCCL copy of the DP one */
                ri.groups[ri.n_groups++] = (struct argus_comm_group){
                    mix(key[1], 99), 1, (uint32_t)o->dp, (uint32_t)r->dp, ARGUS_COMM_NCCL};
        }
        rc = argus_jobstore_set_rankinfo(js, &ri);
    }
    for (int k = 0; !rc && k < K_N; k++)
        rc = argus_jobstore_add_name(js, argus_name_hash(kdefs[k].name), kdefs[k].name);
    int crashed = 0;
    for (j.step = 0; !rc && j.step < o->steps; j.step++) {
        for (int q = 0; q < n; q++) {
            struct rk *r = &j.r[q];
            set_factors(&j, r);
            synth_reset_step(r);
            r->t += r->late;
            r->start = r->t;
            r->t += (uint64_t)(200e3 * lognormal(&r->rng, o->noise)) + r->stall;
        }
        uint64_t ar[256] = { 0 };
        for (int p = 0; p < o->pp; p++)
            for (int d = 0; d < o->dp; d++) {
                for (int t = 0; t < o->tp; t++)
                    g[t] = &j.r[rank_of(o, t, d, p)];
                for (int mb = 0; mb < o->microbatches; mb++)
                    forward(&j, g, o->tp, mb, &ar[(d + o->dp * p) % 256]);
            }
        for (int p = o->pp - 1; p >= 0; p--)
            for (int d = 0; d < o->dp; d++) {
                for (int t = 0; t < o->tp; t++)
                    g[t] = &j.r[rank_of(o, t, d, p)];
                for (int mb = 0; mb < o->microbatches; mb++)
                    backward(&j, g, o->tp, mb, &ar[(d + o->dp * p) % 256]);
            }
        for (int p = 0; p < o->pp; p++)
            for (int t = 0; t < o->tp; t++) {
                for (int d = 0; d < o->dp; d++) {
                    g[d] = &j.r[rank_of(o, t, d, p)];
                    phase_begin(g[d], ARGUS_PH_OPTIMIZER);
                }
                const uint64_t who = (uint64_t)(t + o->tp * p);
                if (o->dp > 1)
                    collective(&j, g, o->dp, K_DP_RS, who, 0, g[0]->dpf);
                for (int d = 0; d < o->dp; d++)
                    compute(&j, g[d], K_ADAM);
                if (o->dp > 1)
                    collective(&j, g, o->dp, K_DP_AG, who, 1, g[0]->dpf);
                for (int d = 0; d < o->dp; d++)
                    phase_end(g[d]);
            }
        for (int q = 0; !rc && q < n; q++) {
            if (j.r[q].dead) {
                if (!crashed)
                    argus_jobstore_mark_missing(js, (uint32_t)q, (uint64_t)j.step);
                continue;
            }
            rc = synth_emit_summary(&j, &j.r[q], s, js);
        }
        for (int q = 0; q < n; q++)
            crashed |= j.r[q].dead;
    }
    if (!rc) {
        struct argus_job_meta *m = argus_jobstore_meta(js);
        snprintf(m->id, sizeof m->id, "synth-%llu", (unsigned long long)o->seed);
        m->source = ARGUS_SRC_REPLAY;
        m->started_ns = t0;
        m->ended_ns = j.r[0].t;
        m->complete = !crashed;
        *out = js;
    } else {
        argus_jobstore_free(js);
    }
    free(j.r);
    free(s);
    free(g);
    return rc;
}
