/* reduce_scale.c — rank 0's cost of the condensing reduction (reduce/condense.h) at
 * scale, in one process: P virtual ranks (8 per node, tp 8 x pp 4 x dp P/32 in Megatron
 * order) each have a window of W step summaries (K kernel-modes each: compute kernels,
 * TP/DP collectives, pipeline send/recv; each rank a steady speed within +-1 %) as raw
 * encoded records. Along the node-aware tree the runtime builds (reduce/tree.c, fan-in
 * 32), processed depth-first (children's buffers freed after use, so memory is O(depth)
 * messages), every node with children condenses as reduce/agent.c does: its children's
 * encoded aggregates merged (argus_condense_merge), then argus_condense_run over its own
 * raw records and its children's records (leaf children: raw summaries; condensing
 * children: exemplars); it sends c.enc + c.out. Names and rank info went up in an earlier
 * window (steady state): the records are summaries only. Rank 0 condenses as the root.
 * Rank 0's condensing children hold their extreme cells (ARGUS_CONDENSE_HOLD) and rank 0
 * pulls the ones it keeps, as the live tree does (reduce/pull.h).
 * Rank 0's inbound bytes: its children's aggregates, exemplar records (references),
 * answers to its pull and (its leaf children on its own node) raw summaries, reported
 * apart; the pull requests it sends are reported too. Rank 0's CPU: merge, condense
 * (fold + select, then the answers' fold + exemplars + rows records), then what it wrote
 * into the job store as reduce/rank0.c stores it ("store": summary records decoded and
 * added, the rows of its rows records added from the root's decoded rows) and
 * argus_analyze ("analyze").
 *
 * Two views of rank 0's analysis:
 *   - first window (rank0_*_ms_per_step): a fresh job store takes one window of P x W
 *     summaries (exemplars and thin) and the analysis runs over it; every page is
 *     touched for the first time;
 *   - job (rank0_*_steady_ms_per_step): what rank 0 pays per step for the rest of a job.
 *     One job store over a job of windows, each window's summaries added and the job
 *     analysed after every window, as reduce/rank0.c does; the store keeps its default
 *     retention (store/jobstore.h), so the analysis covers the horizon and the store's
 *     memory is reused once the horizon is full. The job runs until STEADY (5) windows
 *     after that; the figures are the medians over those windows (robust to a busy
 *     machine).
 * The condense step is timed in a fresh struct and again in the reset one (warm: as every
 * later window of a job runs; the median of STEADY such windows). Page faults are counted
 * for each part. Rank 0 also spools what it keeps (summaries.argus, zstd): timed apart
 * (rank0_spool_steady_ms_per_step, the same records every window, to a scratch file in
 * TMPDIR) and not in the goal's figure, which the issue defines as merge plus analysis.
 * The rank-0 job (store, spool, analysis) is bench/reduce_job.c, through rank 0's pipeline
 * (pipeline/pipeline.h). The in-band forecast that pipeline runs after each window's
 * analysis is timed on its own (rank0_forecast_ms_per_window, goal 0.5 ms at P = 16,384):
 * bench/reduce_fc.c. The random numbers and rank speeds: bench/reduce_synth.c.
 * Prints one JSON line through yajl_gen (docs/STYLE.md, "Benchmarks"), each run's object
 * flushed as it is done. Usage: reduce_scale [P ...] (default 1024 4096 16384 65536). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchline.h"
#include "bench/reduce_fc.h"
#include "bench/reduce_job.h"
#include "bench/reduce_synth.h"
#include "common/aggregate.h"
#include "common/jsongen.h"
#include "reduce/condense.h"
#include "common/wire.h"
#include "reduce/bytebuf.h"
#include "reduce/tree.h"
#include "store/jobstore.h"

#define W 10
#define K 40
#define FANIN 32
#define PER_NODE 8
#define TP 8
#define PP 4

static struct argus_step_summary *sum;
static int P, *parent, *kid_start, *kids;

/* Rank `rank`'s summary of `step` in a tp TP x pp PP x dp P/(TP*PP) job (Megatron order).
 * K kernel-modes: 28 compute kernels (the stage's layers; 4 of them in two modes: two
 * shapes), TP all-reduce in two modes, DP reduce-scatter and all-gather, pipeline send and
 * recv (not on the first / last stage's missing side: replaced by two more compute
 * kernels there). Each duration: kernel base x the rank's speed x noise. */
static void fill_summary(int rank, int step)
{
    const int dp = P / (TP * PP) > 0 ? P / (TP * PP) : 1;
    const uint64_t speed = rs_rank_speed(rank);
    memset(sum, 0, offsetof(struct argus_step_summary, kmodes));
    sum->rank = (uint32_t)rank;
    sum->step = (uint64_t)step;
    sum->coords = (struct argus_coords){ .tp_size = TP, .pp_size = PP, .dp_size = (uint16_t)dp,
                                         .tp = (uint16_t)(rank % TP),
                                         .dp = (uint16_t)(rank / TP % dp),
                                         .pp = (uint16_t)(rank / (TP * dp) % PP) };
    sum->start_ns = 1000000000ull * (uint64_t)step;
    sum->end_ns = sum->start_ns + 900000000ull + rs_rnd() % 1000000;
    sum->phase_wall_ns[0] = 300000000 + rs_rnd() % 100000;
    sum->phase_wall_ns[1] = 500000000 + rs_rnd() % 100000;
    sum->compute_ns = 700000000 * speed / 1000 + rs_rnd() % 100000;
    sum->collective_ns = 150000000 + rs_rnd() % 100000;
    sum->n_kmodes = K;
    const int pp = sum->coords.pp;
    for (int k = 0; k < K; k++) {
        struct argus_kmode_stats *m = &sum->kmodes[k];
        memset(m, 0, sizeof *m);
        int name = k, kc = ARGUS_KC_COMPUTE, mode = 0;
        if (k >= 28 && k < 32) { /* second modes of kernels 0..3 */
            name = k - 28;
            mode = 1;
        } else if (k == 32 || k == 33) {
            name = 32, kc = ARGUS_KC_COLLECTIVE, mode = k - 32; /* TP all-reduce */
        } else if (k == 34 || k == 35) {
            kc = ARGUS_KC_COLLECTIVE; /* DP reduce-scatter, all-gather */
        } else if ((k == 36 && pp < PP - 1) || (k == 37 && pp > 0)) {
            kc = ARGUS_KC_P2P; /* pipeline send (not last stage), recv (not first) */
        }
        m->name_hash = 0xabc000 + (uint64_t)name * 104729;
        m->kclass = (uint8_t)kc;
        m->mode = (uint8_t)mode;
        m->phase = k % 2 ? ARGUS_PH_BACKWARD : ARGUS_PH_FORWARD;
        uint64_t base = (20000ull + 5000ull * (uint64_t)k) * (mode ? 3 : 1);
        if (kc == ARGUS_KC_COMPUTE)
            base = base * speed / 1000;
        m->min_ns = UINT64_MAX;
        for (int i = 0; i < 8; i++) {
            uint64_t d = base + rs_rnd() % (base / (kc == ARGUS_KC_COMPUTE ? 20 : 4));
            m->count++;
            m->sum_ns += d;
            m->min_ns = d < m->min_ns ? d : m->min_ns;
            m->max_ns = d > m->max_ns ? d : m->max_ns;
            argus_qsketch_add(&m->sketch, d);
        }
    }
}

/* Rank r's raw records of the window: W encoded summaries. */
static int put_raw(struct argus_bytebuf *b, int r)
{
    uint8_t tmp[65536];
    for (int s = 0; s < W; s++) {
        fill_summary(r, s);
        long n = argus_summary_encode(sum, tmp, sizeof tmp);
        if (n <= 0 || argus_bytebuf_append(b, tmp, (size_t)n))
            return -1;
    }
    return 0;
}

/* What a rank sends its parent for one window: a leaf its raw records (agg NULL), a
 * condensing node its encoded aggregate and its records (exemplars). */
struct msg {
    struct argus_bytebuf agg, rec;
};

static void msg_free(struct msg *m)
{
    free(m->agg.p);
    free(m->rec.p);
}

static struct argus_condense *cd; /* one per tree level (reused by the nodes of a level) */

/* r's message (depth-first, children's buffers freed after use: memory O(depth x fan-in
 * x message)). hold: a child of rank 0 with its own condensing state, which holds its
 * extreme cells for rank 0's pull. 0 or -1. */
static int reduce(int r, int depth, struct msg *m, struct argus_condense *hold)
{
    char err[128];
    uint64_t bad = 0;

    memset(m, 0, sizeof *m);
    if (kid_start[r] == kid_start[r + 1])
        return put_raw(&m->rec, r);
    struct argus_condense *c = hold ? hold : &cd[depth];
    struct argus_bytebuf in = { 0 };
    int rc = put_raw(&in, r);
    for (int i = kid_start[r]; !rc && i < kid_start[r + 1]; i++) {
        struct msg km;
        rc = reduce(kids[i], depth + 1, &km, NULL);
        if (!rc && km.agg.len)
            rc = argus_condense_merge(c, km.agg.p, km.agg.len, err, sizeof err);
        if (!rc)
            rc = argus_bytebuf_append(&in, km.rec.p, km.rec.len);
        msg_free(&km);
    }
    if (!rc)
        rc = argus_condense_run(c, in.p, in.len, hold ? ARGUS_CONDENSE_HOLD : ARGUS_CONDENSE_UP,
                                &bad);
    if (!rc && (argus_bytebuf_append(&m->agg, c->enc, c->enclen) ||
                argus_bytebuf_append(&m->rec, c->out, c->outlen)))
        rc = -1;
    free(in.p);
    return rc || bad ? -1 : 0;
}

struct r0cost {
    double merge, run; /* CPU s */
    long flt_merge, flt_run;
    uint64_t exemplars, thin, wanted;
    size_t kpart, nkm; /* the children's merged aggregate: kernel part bytes, kmodes */
    size_t asked, req_bytes, ans_bytes; /* the pull: children asked, bytes each way */
    uint64_t ans_n;                     /* summaries in the answers */
};

/* Rank 0's window, as reduce/agent.c runs it: room for P x W rows (rank 0 knows the
 * job's size), each child's aggregate merged (argus_condense_merge: decode + merge), then
 * the condensing root over its own raw records and its children's records
 * (argus_condense_root_begin: fold, select, the cells to pull), each holding child's
 * answer (not rank 0's CPU) appended, and argus_condense_root_end (the answers' fold,
 * exemplars, rows records into c->out). The inbound records are concatenated before
 * the clock starts (the agent collects them as they arrive). in grows by the answers
 * (cut back before returning). Returns 0, or -1 when a child did not decode. */
static int rank0_window(struct argus_condense *c, const struct msg *km, int nkids,
                        struct argus_condense *holders, struct argus_bytebuf *in,
                        struct r0cost *rc0)
{
    char err[128];
    uint64_t bad = 0;
    const struct argus_condense_stats st0 = c->st;

    if (argus_agg_reserve(&c->agg, (size_t)P * W, (size_t)nkids + 1) != 0)
        return -1;
    long f0 = bench_minflt();
    double t0 = bench_cpu_s();
    for (int i = 0; i < nkids; i++)
        if (km[i].agg.len && argus_condense_merge(c, km[i].agg.p, km[i].agg.len, err,
                                                  sizeof err) != 0)
            return -1;
    double t1 = bench_cpu_s();
    long f1 = bench_minflt();
    rc0->kpart = argus_agg_encoded_size(&c->agg) - c->agg.nrows * ARGUS_AGG_ROW_BYTES;
    rc0->nkm = c->agg.nkm;
    double t2 = bench_cpu_s();
    long f2 = bench_minflt();
    if (argus_condense_root_begin(c, in->p, in->len, &bad) != 0 || bad)
        return -1;
    double t3 = bench_cpu_s();
    long f3 = bench_minflt();
    const size_t from = in->len;
    rc0->asked = rc0->req_bytes = 0;
    rc0->ans_n = 0;
    for (int i = 0; i < nkids; i++) {
        if (!km[i].agg.len)
            continue; /* a leaf child: it held nothing */
        rc0->asked++;
        rc0->req_bytes += 20 + c->nwant * sizeof *c->want; /* reduce/pull.h: the ask */
        const uint64_t a0 = holders[i].st.answered;
        int arc = argus_condense_answer(&holders[i], c->want, c->nwant);
        rc0->ans_n += holders[i].st.answered - a0;
        if (arc ||
            argus_bytebuf_append(in, holders[i].rep, holders[i].replen))
            return -1;
    }
    rc0->ans_bytes = in->len - from;
    double t4 = bench_cpu_s();
    long f4 = bench_minflt();
    if (argus_condense_root_end(c, in->p, from, in->len, &bad) != 0 || bad)
        return -1;
    in->len = from;
    rc0->run = (t3 - t2) + (bench_cpu_s() - t4);
    rc0->flt_run = (f3 - f2) + (bench_minflt() - f4);
    rc0->wanted = c->nwant;
    rc0->merge = t1 - t0;
    rc0->flt_merge = f1 - f0;
    rc0->exemplars = c->st.exemplars - st0.exemplars;
    rc0->thin = c->st.thin - st0.thin;
    return 0;
}

static size_t count_summaries(const struct argus_bytebuf *b)
{
    char err[128];
    size_t n = 0;
    for (size_t off = 0; off < b->len;) {
        int type = 0;
        long k = argus_record_peek(b->p + off, b->len - off, off, &type, err, sizeof err);
        if (k < 0)
            break;
        n += type == ARGUS_REC_SUMMARY;
        off += (size_t)k;
    }
    return n;
}

/* ---- the result line (docs/STYLE.md, "File formats and JSON") ---------------------- */

static int put_bool(yajl_gen g, const char *k, int v)
{
    ARGUS_JSON_TRY(argus_json_key(g, k));
    ARGUS_JSON_CK(yajl_gen_bool(g, v));
    return 0;
}

/* The line's object up to its "runs" array, left open. */
static int put_head(yajl_gen g)
{
    char dp[32];
    snprintf(dp, sizeof dp, "P/%d", TP * PP);
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "bench"));
    ARGUS_JSON_TRY(argus_json_str(g, "reduce_scale"));
    ARGUS_JSON_TRY(argus_bench_int(g, "window_steps", W));
    ARGUS_JSON_TRY(argus_bench_int(g, "kmodes_per_rank_step", K));
    ARGUS_JSON_TRY(argus_bench_int(g, "fanin", FANIN));
    ARGUS_JSON_TRY(argus_bench_int(g, "ranks_per_node", PER_NODE));
    ARGUS_JSON_TRY(argus_json_key(g, "layout"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_bench_int(g, "tp", TP));
    ARGUS_JSON_TRY(argus_bench_int(g, "pp", PP));
    ARGUS_JSON_TRY(argus_json_key(g, "dp"));
    ARGUS_JSON_TRY(argus_json_str(g, dp));
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    ARGUS_JSON_TRY(argus_json_key(g, "condense"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_bench_int(g, "ref_dp", ARGUS_CONDENSE_REF_DP));
    ARGUS_JSON_TRY(argus_bench_int(g, "extremes", ARGUS_CONDENSE_EXTREMES));
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    ARGUS_JSON_TRY(argus_json_key(g, "runs"));
    ARGUS_JSON_CK(yajl_gen_array_open(g));
    return 0;
}

/* What one P's run measured: the tree's shape, rank 0's inbound bytes by kind, its first
 * and warm windows, and its job. */
struct run {
    int depth, nkids, leafkids;
    size_t agg_b, ex_b, raw_b, ex_n;
    const struct r0cost *first, *warm;
    const struct job_cost *jc;
    const struct fc_cost *fc;
};

/* One run's object in the "runs" array. */
static int put_run(yajl_gen g, const struct run *r)
{
    const struct r0cost *first = r->first, *warm = r->warm;
    const struct an_cost *an = &r->jc->first, *st = &r->jc->steady;
    const double cond_first = first->merge + first->run, cond_warm = warm->merge + warm->run;
    const double cpu_first = cond_first + an->store + an->analyze;
    const double cpu_steady = cond_warm + st->store + st->analyze;
    const double bps = (double)(r->agg_b + r->ex_b + r->raw_b + first->ans_bytes) / W;
    const double goal_b = 64.0 * P + 65536;

    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_bench_int(g, "P", P));
    ARGUS_JSON_TRY(argus_bench_int(g, "dp", P / (TP * PP)));
    ARGUS_JSON_TRY(argus_bench_int(g, "depth", r->depth));
    ARGUS_JSON_TRY(argus_bench_int(g, "rank0_children", r->nkids));
    ARGUS_JSON_TRY(argus_bench_int(g, "rank0_leaf_children", r->leafkids));
    ARGUS_BENCH_PUT_F(g, "rank0_in_bytes_per_step", "%.0f", bps);
    ARGUS_BENCH_PUT_F(g, "rank0_in_agg_bytes_per_step", "%.0f", (double)r->agg_b / W);
    ARGUS_BENCH_PUT_F(g, "rank0_in_exemplar_bytes_per_step", "%.0f", (double)r->ex_b / W);
    ARGUS_BENCH_PUT_F(g, "rank0_in_raw_bytes_per_step", "%.0f", (double)r->raw_b / W);
    ARGUS_BENCH_PUT_F(g, "rank0_in_answer_bytes_per_step", "%.0f", (double)first->ans_bytes / W);
    ARGUS_JSON_TRY(argus_bench_uint(g, "rank0_pull_children", first->asked));
    ARGUS_BENCH_PUT_F(g, "rank0_pulled_cells_per_step", "%.1f", (double)first->wanted / W);
    ARGUS_BENCH_PUT_F(g, "rank0_out_pull_request_bytes_per_step", "%.0f",
                      (double)first->req_bytes / W);
    ARGUS_BENCH_PUT_F(g, "bytes_per_rank_step", "%.1f", bps / P);
    ARGUS_BENCH_PUT_F(g, "goal_bytes_per_step", "%.0f", goal_b);
    ARGUS_JSON_TRY(put_bool(g, "goal_bytes_met", bps <= goal_b));
    ARGUS_BENCH_PUT_F(g, "rank0_in_exemplars_per_step", "%.1f",
                      (double)(r->ex_n + first->ans_n) / W);
    ARGUS_BENCH_PUT_F(g, "rank0_exemplars_per_step", "%.1f", (double)first->exemplars / W);
    ARGUS_BENCH_PUT_F(g, "rank0_thin_per_step", "%.1f", (double)first->thin / W);
    ARGUS_BENCH_PUT_F(g, "full_share", "%.4f",
          (double)first->exemplars / (double)(first->exemplars + first->thin));
    ARGUS_JSON_TRY(argus_bench_uint(g, "root_kernel_part_bytes", first->kpart));
    ARGUS_JSON_TRY(argus_bench_uint(g, "kmode_entries", first->nkm));
    ARGUS_BENCH_PUT_F(g, "rank0_merge_ms_per_step", "%.3f", 1e3 * first->merge / W);
    ARGUS_BENCH_PUT_F(g, "rank0_condense_run_ms_per_step", "%.3f", 1e3 * first->run / W);
    ARGUS_BENCH_PUT_F(g, "rank0_condense_ms_per_step", "%.3f", 1e3 * cond_first / W);
    ARGUS_BENCH_PUT_F(g, "rank0_store_ms_per_step", "%.3f", 1e3 * an->store / W);
    ARGUS_BENCH_PUT_F(g, "rank0_analyze_ms_per_step", "%.3f", 1e3 * an->analyze / W);
    ARGUS_BENCH_PUT_F(g, "rank0_cpu_ms_per_step", "%.3f", 1e3 * cpu_first / W);
    ARGUS_JSON_TRY(argus_bench_uint(g, "job_horizon_steps", r->jc->horizon));
    ARGUS_JSON_TRY(argus_bench_uint(g, "job_windows", r->jc->windows));
    ARGUS_JSON_TRY(argus_bench_uint(g, "job_held_summaries", r->jc->held));
    ARGUS_BENCH_PUT_F(g, "rank0_merge_warm_ms_per_step", "%.3f", 1e3 * warm->merge / W);
    ARGUS_BENCH_PUT_F(g, "rank0_condense_run_warm_ms_per_step", "%.3f", 1e3 * warm->run / W);
    ARGUS_BENCH_PUT_F(g, "rank0_condense_warm_ms_per_step", "%.3f", 1e3 * cond_warm / W);
    ARGUS_BENCH_PUT_F(g, "rank0_store_steady_ms_per_step", "%.3f", 1e3 * st->store / W);
    ARGUS_BENCH_PUT_F(g, "rank0_analyze_steady_ms_per_step", "%.3f", 1e3 * st->analyze / W);
    ARGUS_BENCH_PUT_F(g, "rank0_cpu_steady_ms_per_step", "%.3f", 1e3 * cpu_steady / W);
    ARGUS_JSON_TRY(argus_bench_int(g, "goal_cpu_ms_per_step", 5));
    ARGUS_JSON_TRY(put_bool(g, "goal_cpu_met", 1e3 * cpu_steady / W <= 5));
    ARGUS_BENCH_PUT_F(g, "rank0_spool_steady_ms_per_step", "%.3f", 1e3 * st->spool / W);
    ARGUS_BENCH_PUT_F(g, "rank0_spool_bytes_per_step", "%.0f", r->jc->spool_bytes);
    /* ARGUS_SPOOL_MAX (pipeline/spoolcap.h): full detail for the newest half of the cap,
     * so for this many steps; the whole spool never past the cap */
    ARGUS_JSON_TRY(argus_bench_int(g, "rank0_spool_max_bytes", (long long)r->jc->spool_max));
    ARGUS_BENCH_PUT_F(g, "rank0_spool_full_detail_steps", "%.0f",
                      r->jc->spool_bytes > 0 ? (double)r->jc->spool_max / 2 /
                                               r->jc->spool_bytes : 0);
    ARGUS_JSON_TRY(put_bool(g, "rank0_spool_under_cap",
                            r->jc->spool_max == 0 ||
                            r->jc->spool_bytes * (double)r->jc->windows * W <=
                                (double)r->jc->spool_max));
    ARGUS_BENCH_PUT_F(g, "rank0_forecast_ms_per_window", "%.3f", r->fc->ms);
    ARGUS_BENCH_PUT_F(g, "rank0_forecast_max_ms_per_window", "%.3f", r->fc->ms_max);
    ARGUS_BENCH_PUT_F(g, "rank0_forecast_page_faults_per_window", "%.0f", (double)r->fc->flt);
    ARGUS_JSON_TRY(argus_bench_uint(g, "forecast_windows", r->fc->windows));
    ARGUS_JSON_TRY(argus_json_key(g, "goal_forecast_ms_per_window"));
    ARGUS_JSON_CK(yajl_gen_double(g, 0.5));
    ARGUS_JSON_TRY(put_bool(g, "goal_forecast_met", r->fc->ms <= 0.5 && !r->fc->rc));
    ARGUS_JSON_TRY(argus_json_key(g, "rank0_page_faults_per_step"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_BENCH_PUT_F(g, "merge", "%.1f", (double)first->flt_merge / W);
    ARGUS_BENCH_PUT_F(g, "merge_warm", "%.1f", (double)warm->flt_merge / W);
    ARGUS_BENCH_PUT_F(g, "condense_run", "%.1f", (double)first->flt_run / W);
    ARGUS_BENCH_PUT_F(g, "condense_run_warm", "%.1f", (double)warm->flt_run / W);
    ARGUS_BENCH_PUT_F(g, "store", "%.1f", (double)an->flt_store / W);
    ARGUS_BENCH_PUT_F(g, "analyze", "%.1f", (double)an->flt_analyze / W);
    ARGUS_BENCH_PUT_F(g, "store_steady", "%.1f", (double)st->flt_store / W);
    ARGUS_BENCH_PUT_F(g, "analyze_steady", "%.1f", (double)st->flt_analyze / W);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    ARGUS_JSON_TRY(argus_bench_int(g, "analysis_rc", an->rc | st->rc));
    ARGUS_JSON_TRY(argus_bench_int(g, "forecast_rc", r->fc->rc));
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

/* Close the line (g may be NULL) and report; 0, or 1 when it could not be generated. */
static int line_end(yajl_gen g, int bad)
{
    if (g) {
        putchar('\n');
        yajl_gen_free(g);
    }
    if (bad)
        fprintf(stderr, "reduce_scale: the result line could not be generated\n");
    return bad;
}

int main(int argc, char **argv)
{
    static const int defaults[] = {1024, 4096, 16384, 65536};
    int nP = argc > 1 ? argc - 1 : 4;

    sum = malloc(sizeof *sum);
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g || !yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout) ||
        put_head(g))
        return line_end(g, 1);
    for (int pi = 0; pi < nP; pi++) {
        P = argc > 1 ? atoi(argv[pi + 1]) : defaults[pi];
        int *node = malloc((size_t)P * sizeof *node);
        parent = malloc((size_t)P * sizeof *parent);
        kid_start = calloc((size_t)P + 2, sizeof *kid_start);
        kids = malloc((size_t)P * sizeof *kids);
        for (int r = 0; r < P; r++)
            node[r] = r / PER_NODE;
        argus_tree_build_topo(P, node, FANIN, parent);
        for (int r = 1; r < P; r++)
            kid_start[parent[r] + 2]++;
        for (int r = 0; r <= P; r++)
            kid_start[r + 1] += kid_start[r];
        for (int r = 1; r < P; r++)
            kids[kid_start[parent[r] + 1]++] = r;
        const int depth = argus_tree_depth_of(parent, P);
        cd = calloc((size_t)depth + 2, sizeof *cd);
        for (int d = 0; d < depth + 2; d++)
            argus_condense_init(&cd[d], (uint32_t)P);

        /* the subtrees under rank 0, depth-first; their messages kept for rank 0 */
        const int nkids = kid_start[1] - kid_start[0];
        struct msg *km = calloc((size_t)nkids + 1, sizeof *km);
        struct argus_condense *holders = calloc((size_t)nkids + 1, sizeof *holders);
        struct argus_bytebuf in = { 0 }, out = { 0 };
        size_t agg_b = 0, ex_b = 0, raw_b = 0, ex_n = 0;
        int leafkids = 0, bad = put_raw(&in, 0);
        for (int i = 0; !bad && i < nkids; i++) {
            argus_condense_init(&holders[i], (uint32_t)P);
            bad = reduce(kids[kid_start[0] + i], 1, &km[i], &holders[i]);
            if (km[i].agg.len) {
                agg_b += km[i].agg.len;
                ex_b += km[i].rec.len;
                ex_n += count_summaries(&km[i].rec);
            } else {
                raw_b += km[i].rec.len;
                leafkids++;
            }
            bad = bad || argus_bytebuf_append(&in, km[i].rec.p, km[i].rec.len);
        }
        for (int d = 0; d < depth + 2; d++)
            argus_condense_free(&cd[d]);
        free(cd);
        /* rank 0: the first window pays for fresh memory; later ones reuse it (warm) */
        struct argus_condense c0;
        struct r0cost first, warm;
        double wmerge[STEADY], wrun[STEADY];
        argus_condense_init(&c0, (uint32_t)P);
        bad = bad || rank0_window(&c0, km, nkids, holders, &in, &first);
        for (int k = 0; !bad && k < STEADY; k++) { /* warm: the median of STEADY windows */
            bad = rank0_window(&c0, km, nkids, holders, &in, &warm) != 0;
            wmerge[k] = warm.merge;
            wrun[k] = warm.run;
        }
        if (!bad) {
            warm.merge = median5(wmerge);
            warm.run = median5(wrun);
        }
        const struct argus_agg_row *rows;
        struct thin_rows thin = { .n = argus_condense_thin_rows(&c0, &rows) };
        thin.base = malloc((thin.n + 1) * sizeof *thin.base);
        thin.shifted = malloc((thin.n + 1) * sizeof *thin.shifted);
        if (bad || !thin.base || !thin.shifted ||
            argus_bytebuf_append(&out, c0.out, c0.outlen)) {
            fprintf(stderr, "reduce_scale: the condensing tree failed at P = %d\n", P);
            yajl_gen_free(g);
            return 1;
        }
        memcpy(thin.base, rows, thin.n * sizeof *rows);
        argus_condense_free(&c0);
        for (int i = 0; i < nkids; i++) {
            msg_free(&km[i]);
            argus_condense_free(&holders[i]);
        }
        free(km);
        free(holders);
        free(in.p);

        /* analysis at rank 0: the first window, then a job */
        struct job_cost jc;
        if (an_job(&out, &thin, P, W, &jc) != 0) {
            fprintf(stderr, "reduce_scale: out of memory at P = %d\n", P);
            yajl_gen_free(g);
            return 1;
        }
        free(out.p);
        free(thin.base);
        free(thin.shifted);
        struct fc_cost fcc;
        if (fc_job(P, W, &fcc) != 0) {
            fprintf(stderr, "reduce_scale: out of memory at P = %d (forecast)\n", P);
            yajl_gen_free(g);
            return 1;
        }
        const struct run run = {.depth = depth, .nkids = nkids, .leafkids = leafkids,
                                .agg_b = agg_b, .ex_b = ex_b, .raw_b = raw_b, .ex_n = ex_n,
                                .first = &first, .warm = &warm, .jc = &jc, .fc = &fcc};
        if (put_run(g, &run))
            return line_end(g, 1);
        fflush(stdout);
        free(node);
        free(parent);
        free(kid_start);
        free(kids);
    }
    free(sum);
    return line_end(g, yajl_gen_array_close(g) != yajl_gen_status_ok ||
                           yajl_gen_map_close(g) != yajl_gen_status_ok);
}
