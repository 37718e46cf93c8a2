/* test_condense.c — the condensing tree node (reduce/condense.h) on a 96-rank job (tp 2,
 * pp 2, dp 24) with one compute straggler: trees of fan-in 2, 8 and 32 and a single root
 * over every raw summary hand rank 0 byte-identical records; every (rank, step) arrives
 * exactly once; reference ranks and extreme cells arrive in full and bit-exact; every
 * other cell is a thin summary with its row's values; names are forwarded once; damaged
 * input is counted and skipped; the reference rule without a layout is bounded; rank 0
 * pulling the extreme cells from its holding children gets the same records for fewer
 * bytes, and a holding node answers from its last two batches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reduce/condense.h"
#include "common/wire.h"
#include "common/wire_rows.h"
#include "reduce/tree.h"
#include "tests/common/testgen.h"

#define NR 96
#define NS 10
#define NK 6
#define STRAGGLER 37u

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    return tg_rand(&rng);
}

static struct argus_step_summary *orig; /* [NR * NS] */
static uint8_t *leaf[NR];               /* each rank's raw records: names, then summaries */
static size_t leaflen[NR];

static struct argus_step_summary *cell(uint32_t r, uint64_t s)
{
    return &orig[r * NS + s];
}

static void make_summary(struct argus_step_summary *x, uint32_t r, uint64_t step)
{
    memset(x, 0, sizeof *x);
    x->rank = r;
    x->step = step;
    x->coords = (struct argus_coords){.tp_size = 2, .pp_size = 2, .dp_size = 24,
                                      .tp = (uint16_t)(r % 2), .dp = (uint16_t)(r / 2 % 24),
                                      .pp = (uint16_t)(r / 48)};
    x->clock_offset_ns = (int64_t)(rnd() % 2000) - 1000;
    x->start_ns = 1000000000ull * step + rnd() % 1000000;
    x->end_ns = x->start_ns + 900000000ull + rnd() % 1000000;
    x->phase_wall_ns[ARGUS_PH_FORWARD] = 300000000ull + rnd() % 1000;
    x->phase_wall_ns[ARGUS_PH_BACKWARD] = 500000000ull + rnd() % 1000;
    x->host_gap_ns = rnd() % 10000000;
    x->collective_ns = 50000000ull + rnd() % 1000000;
    x->p2p_ns = 3000000ull;
    const double slow = r == STRAGGLER && step >= 3 ? 2.0 : 1.0;
    x->n_kmodes = NK;
    for (int k = 0; k < NK; k++) {
        struct argus_kmode_stats *m = &x->kmodes[k];
        m->name_hash = 0x1000 + (uint64_t)k * 7919;
        m->kclass = k < 4 ? ARGUS_KC_COMPUTE : ARGUS_KC_COLLECTIVE;
        argus_qsketch_init(&m->sketch);
        m->min_ns = UINT64_MAX;
        for (int i = 0; i < 3; i++) {
            uint64_t base = 100000ull << k, d = base + rnd() % (base / 2);
            if (m->kclass == ARGUS_KC_COMPUTE)
                d = (uint64_t)((double)d * slow);
            m->count++;
            m->sum_ns += d;
            m->min_ns = d < m->min_ns ? d : m->min_ns;
            m->max_ns = d > m->max_ns ? d : m->max_ns;
            argus_qsketch_add(&m->sketch, d);
        }
        x->compute_ns += m->kclass == ARGUS_KC_COMPUTE ? m->sum_ns : 0;
    }
}

static int setup(void **state)
{
    (void)state;
    orig = calloc(NR * NS, sizeof *orig);
    assert_non_null(orig);
    for (uint32_t r = 0; r < NR; r++) {
        leaf[r] = malloc(NS * argus_summary_encoded_max(NK) + NK * 64);
        size_t n = 0;
        for (int k = 0; k < NK; k++) {
            char name[32];
            snprintf(name, sizeof name, "kernel_%d", k);
            n += (size_t)argus_name_encode(0x1000 + (uint64_t)k * 7919, name, leaf[r] + n, 64);
        }
        for (uint64_t s = 0; s < NS; s++) {
            make_summary(cell(r, s), r, s);
            long e = argus_summary_encode(cell(r, s), leaf[r] + n, argus_summary_encoded_max(NK));
            assert_true(e > 0);
            n += (size_t)e;
        }
        leaflen[r] = n;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int r = 0; r < NR; r++)
        free(leaf[r]);
    free(orig);
    return 0;
}

struct node_out {
    uint8_t *agg, *rec;
    size_t agglen, reclen;
};

static uint8_t *dup(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

/* Rank 0's side of a pull: begin over in[0..n), each holding child's answer appended,
 * end. *in may grow. Returns the bytes the answers added. */
static size_t root_pull(struct argus_condense *cd, struct argus_condense **holder,
                        uint8_t **in, size_t n)
{
    uint64_t bad = 0;
    assert_int_equal(argus_condense_root_begin(cd, *in, n, &bad), 0);
    assert_int_equal(bad, 0);
    for (size_t i = 1; i < cd->nwant; i++)
        assert_true(cd->want[i - 1] < cd->want[i]); /* ascending, distinct */
    size_t len = n;
    for (int c = 1; c < NR; c++) {
        if (!holder[c])
            continue;
        assert_int_equal(argus_condense_answer(holder[c], cd->want, cd->nwant), 0);
        *in = realloc(*in, len + holder[c]->replen + 1);
        memcpy(*in + len, holder[c]->rep, holder[c]->replen);
        len += holder[c]->replen;
        argus_condense_free(holder[c]);
        free(holder[c]);
        holder[c] = NULL;
    }
    assert_int_equal(argus_condense_root_end(cd, *in, n, len, &bad), 0);
    assert_int_equal(bad, 0);
    return len - n;
}

/* The root's thin rows (argus_condense_thin_rows) are its rows records' rows, in order. */
static void root_thin_rows_match(const struct argus_condense *cd)
{
    const struct argus_agg_row *rows;
    const size_t n = argus_condense_thin_rows(cd, &rows);
    size_t k = 0;
    char err[160];
    assert_int_equal(n, cd->st.thin);
    for (size_t off = 0; off < cd->outlen;) {
        int type = 0;
        long len = argus_record_peek(cd->out + off, cd->outlen - off, off, &type, err,
                                     sizeof err);
        assert_true(len > 0);
        struct argus_rows_reader rd;
        struct argus_agg_row row;
        if (type == ARGUS_REC_ROWS) {
            assert_int_equal(argus_rows_open(cd->out + off, (size_t)len, &rd, err,
                                             sizeof err), 0);
            while (argus_rows_next(&rd, &row, err, sizeof err) > 0) {
                assert_true(k < n);
                assert_memory_equal(&row, &rows[k], sizeof row);
                k++;
            }
        }
        off += (size_t)len;
    }
    assert_int_equal(k, n);
}

/* Deepest ranks first (children before parents); leaves send raw records, every node
 * with children condenses its own raw records and its children's messages. pull: rank
 * 0's condensing children hold their extreme cells and rank 0 pulls the ones it keeps
 * (*inbound then counts the answers too). Returns the root's records; *inbound: the
 * bytes of records that reached rank 0. */
static uint8_t *tree_condense_how(int fanin, int pull, size_t *len,
                                  struct argus_condense_stats *root_st, size_t *inbound)
{
    struct node_out *o = calloc(NR, sizeof *o);
    struct argus_condense *holder[NR] = { 0 };
    for (int r = NR - 1; r >= 0; r--) {
        int nk = 0;
        for (int c = r + 1; c < NR; c++)
            nk += argus_tree_parent(c, fanin) == r;
        if (nk == 0 && r > 0) {
            o[r].rec = dup(leaf[r], leaflen[r]);
            o[r].reclen = leaflen[r];
            continue;
        }
        struct argus_condense cd;
        const int hold = pull && r > 0 && argus_tree_parent(r, fanin) == 0;
        assert_int_equal(argus_condense_init(&cd, NR), 0);
        size_t cap = leaflen[r], n = 0;
        for (int c = r + 1; c < NR; c++)
            if (argus_tree_parent(c, fanin) == r)
                cap += o[c].reclen;
        uint8_t *in = malloc(cap);
        memcpy(in, leaf[r], leaflen[r]);
        n = leaflen[r];
        for (int c = r + 1; c < NR; c++) {
            if (argus_tree_parent(c, fanin) != r)
                continue;
            char err[160];
            if (o[c].agglen)
                assert_int_equal(argus_condense_merge(&cd, o[c].agg, o[c].agglen, err,
                                                      sizeof err), 0);
            memcpy(in + n, o[c].rec, o[c].reclen);
            n += o[c].reclen;
            free(o[c].agg);
            free(o[c].rec);
        }
        uint64_t bad = 0;
        if (r == 0)
            *inbound = n - leaflen[0];
        if (r == 0 && pull) {
            *inbound += root_pull(&cd, holder, &in, n);
        } else {
            assert_int_equal(argus_condense_run(&cd, in, n, r == 0 ? ARGUS_CONDENSE_ROOT :
                                                hold ? ARGUS_CONDENSE_HOLD : ARGUS_CONDENSE_UP,
                                                &bad), 0);
            assert_int_equal(bad, 0);
        }
        o[r].rec = dup(cd.out, cd.outlen);
        o[r].reclen = cd.outlen;
        o[r].agg = dup(cd.enc, cd.enclen);
        o[r].agglen = cd.enclen;
        assert_true(r == 0 ? cd.enclen == 0 : cd.enclen > 0);
        if (r == 0) {
            *root_st = cd.st;
            root_thin_rows_match(&cd);
        }
        if (hold) { /* kept until rank 0 pulls */
            holder[r] = malloc(sizeof cd);
            *holder[r] = cd;
        } else {
            argus_condense_free(&cd);
        }
        free(in);
    }
    uint8_t *res = o[0].rec;
    *len = o[0].reclen;
    free(o[0].agg);
    free(o);
    return res;
}

#define THIN_MAX 512 /* room for a thin summary's record */

struct got {
    uint8_t *rec[NR * NS];
    size_t len[NR * NS];
    int names, rowrecs;
    uint8_t thin[NR * NS][THIN_MAX]; /* rows records' cells, as thin summary records */
};

/* Split the root's records: every summary by (rank, step), exactly once; every row of a
 * rows record becomes its thin summary's record (argus_aggrow_thin), as the job store
 * takes it. */
static void split(const uint8_t *buf, size_t len, struct got *g)
{
    static struct argus_step_summary s;
    char err[160];
    memset(g, 0, sizeof *g);
    assert_true(argus_summary_encoded_max(0) <= THIN_MAX);
    for (size_t off = 0; off < len;) {
        int type = 0;
        long n = argus_record_peek(buf + off, len - off, off, &type, err, sizeof err);
        assert_true(n > 0);
        if (type == ARGUS_REC_NAME) {
            g->names++;
        } else if (type == ARGUS_REC_ROWS) {
            struct argus_rows_reader rd;
            struct argus_agg_row row;
            int rc;
            g->rowrecs++;
            assert_int_equal(argus_rows_open(buf + off, (size_t)n, &rd, err, sizeof err), 0);
            while ((rc = argus_rows_next(&rd, &row, err, sizeof err)) > 0) {
                assert_true(row.rank < NR && row.step < NS);
                size_t at = row.rank * NS + row.step;
                assert_null(g->rec[at]); /* once */
                argus_aggrow_thin(&row, &s);
                long k = argus_summary_encode(&s, g->thin[at], THIN_MAX);
                assert_true(k > 0);
                g->rec[at] = g->thin[at];
                g->len[at] = (size_t)k;
            }
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(type, ARGUS_REC_SUMMARY);
            assert_int_equal(argus_summary_decode(buf + off, (size_t)n, &s, err, sizeof err), 0);
            assert_true(s.rank < NR && s.step < NS);
            size_t at = s.rank * NS + s.step;
            assert_null(g->rec[at]); /* once */
            g->rec[at] = (uint8_t *)buf + off;
            g->len[at] = (size_t)n;
        }
        off += (size_t)n;
    }
    for (size_t i = 0; i < NR * NS; i++)
        assert_non_null(g->rec[i]);
    assert_int_equal(g->names, NK);
}

static uint8_t *tree_condense(int fanin, size_t *len, struct argus_condense_stats *root_st)
{
    size_t inbound;
    return tree_condense_how(fanin, 0, len, root_st, &inbound);
}

/* Rank 0's records t (freed) hold exactly ref's cells, bit for bit. */
static void same_records(uint8_t *t, size_t len, const struct argus_condense_stats *st,
                         const struct argus_condense_stats *st0, const struct got *ref,
                         struct got *g)
{
    split(t, len, g);
    assert_int_equal(st->exemplars, st0->exemplars);
    assert_int_equal(st->thin, st0->thin);
    for (size_t i = 0; i < NR * NS; i++) {
        assert_int_equal(g->len[i], ref->len[i]);
        assert_memory_equal(g->rec[i], ref->rec[i], ref->len[i]);
    }
    free(t);
}

static void test_tree_shapes_identical(void **state)
{
    (void)state;
    static struct got ref, g;
    struct argus_condense_stats st0, st;
    size_t len0, len;
    uint8_t *flat = tree_condense(NR + 1, &len0, &st0); /* one root over every rank */
    split(flat, len0, &ref);
    assert_true(ref.rowrecs > 0); /* thin cells travel as rows records */
    assert_true(st0.exemplars > 0 && st0.thin > 0);
    assert_int_equal(st0.exemplars + st0.thin, NR * NS);
    const int fanins[] = {2, 8, 32};
    for (int f = 0; f < 3; f++) {
        uint8_t *t = tree_condense(fanins[f], &len, &st);
        same_records(t, len, &st, &st0, &ref, &g);
    }
    /* pulled: the same records at rank 0, fewer bytes in */
    for (int f = 0; f < 3; f++) {
        size_t in_push, in_pull;
        uint8_t *t = tree_condense_how(fanins[f], 0, &len, &st, &in_push);
        free(t);
        t = tree_condense_how(fanins[f], 1, &len, &st, &in_pull);
        same_records(t, len, &st, &st0, &ref, &g);
        assert_true(st.wanted > 0); /* every fan-in here gives rank 0 holding children */
        assert_true(in_pull < in_push);
    }
    free(flat);
}

static void test_exemplars_exact_thin_rows(void **state)
{
    (void)state;
    static struct got g;
    static struct argus_step_summary s, want;
    struct argus_condense_stats st;
    char err[160];
    size_t len;
    uint8_t *t = tree_condense(8, &len, &st);
    split(t, len, &g);
    size_t straggler_full = 0, ref_full = 0;
    for (uint32_t r = 0; r < NR; r++)
        for (uint64_t k = 0; k < NS; k++) {
            const size_t at = r * NS + k;
            assert_int_equal(argus_summary_decode(g.rec[at], g.len[at], &s, err, sizeof err), 0);
            const struct argus_step_summary *o = cell(r, k);
            if (!(s.flags & ARGUS_SF_THIN)) {
                assert_true(s.flags & ARGUS_SF_EXEMPLAR);
                want = *o;
                want.flags |= ARGUS_SF_EXEMPLAR;
                assert_memory_equal(&s, &want, offsetof(struct argus_step_summary, kmodes) +
                                                   NK * sizeof s.kmodes[0]);
                straggler_full += r == STRAGGLER;
                ref_full += o->coords.dp < ARGUS_CONDENSE_REF_DP;
                continue;
            }
            assert_true(o->coords.dp >= ARGUS_CONDENSE_REF_DP); /* references are full */
            assert_int_equal(s.n_kmodes, 0);
            assert_int_equal(s.clock_offset_ns, 0);
            const uint64_t st0 = (uint64_t)((int64_t)o->start_ns + o->clock_offset_ns);
            assert_int_equal(s.start_ns, st0);
            assert_true(s.end_ns - s.start_ns <= o->end_ns - o->start_ns &&
                        o->end_ns - o->start_ns - (s.end_ns - s.start_ns) < 1000);
            assert_true(o->compute_ns - s.compute_ns < 1000 && s.compute_ns <= o->compute_ns);
            assert_true(o->collective_ns + o->p2p_ns - s.collective_ns < 1000);
            assert_true(o->host_gap_ns - s.host_gap_ns < 1000);
            assert_true(o->phase_wall_ns[ARGUS_PH_BACKWARD] -
                        s.phase_wall_ns[ARGUS_PH_BACKWARD] < 1000);
        }
    /* every cell of the 4 reference ranks of each (pp, tp) position (dp 0 and 1) */
    assert_int_equal(ref_full, 2 * 2 * ARGUS_CONDENSE_REF_DP * NS);
    /* the straggler is the slowest of its stage in each compute kernel on its slow steps */
    assert_true(straggler_full >= ARGUS_CONDENSE_EXTREMES);
    /* bounded: references + at most 2 x extremes per (kernel, mode, stage) */
    assert_true(st.exemplars <= ref_full + 2 * 2 * ARGUS_CONDENSE_EXTREMES * NK);
    free(t);
}

static void test_damaged_input_counted(void **state)
{
    (void)state;
    struct argus_condense cd;
    uint8_t *in = dup(leaf[5], leaflen[5]);
    in[leaflen[5] - 3] ^= 0x40; /* the last summary's checksum */
    assert_int_equal(argus_condense_init(&cd, NR), 0);
    uint64_t bad = 0;
    assert_int_equal(argus_condense_run(&cd, in, leaflen[5], 0, &bad), 0);
    assert_int_equal(bad, 1);
    assert_int_equal(cd.st.rows, NS - 1); /* the others were folded */
    assert_true(cd.enclen > 0);
    argus_condense_free(&cd);
    free(in);
}

/* The held records of `c` among rank r's cells (asked for in one sorted ask). */
static size_t answered_of(struct argus_condense *c, uint32_t r)
{
    static struct argus_step_summary s;
    uint64_t keys[NS];
    char err[160];
    for (uint64_t k = 0; k < NS; k++)
        keys[k] = argus_condense_key(r, k);
    assert_int_equal(argus_condense_answer(c, keys, NS), 0);
    size_t n = 0;
    for (size_t off = 0; off < c->replen;) {
        int type = 0;
        long len = argus_record_peek(c->rep + off, c->replen - off, off, &type, err, sizeof err);
        assert_true(len > 0 && type == ARGUS_REC_SUMMARY);
        assert_int_equal(argus_summary_decode(c->rep + off, (size_t)len, &s, err, sizeof err), 0);
        assert_int_equal(s.rank, r);
        assert_true(s.flags & ARGUS_SF_EXEMPLAR);
        assert_memory_equal(s.kmodes, cell(r, s.step)->kmodes, NK * sizeof s.kmodes[0]);
        off += (size_t)len;
        n++;
    }
    return n;
}

/* Hold mode keeps the extreme cells of the last two batches for a pull and forwards
 * none of them; an older batch's are gone. */
static void test_hold_two_batches(void **state)
{
    (void)state;
    struct argus_condense cd;
    uint64_t bad = 0, held[3];
    const uint32_t r[3] = {10, 12, 14}; /* dp 5, 6, 7: no reference ranks */
    assert_int_equal(argus_condense_init(&cd, NR), 0);
    for (int b = 0; b < 3; b++) {
        const uint64_t h0 = cd.st.held, e0 = cd.st.exemplars;
        assert_int_equal(argus_condense_run(&cd, leaf[r[b]], leaflen[r[b]],
                                            ARGUS_CONDENSE_HOLD, &bad), 0);
        held[b] = cd.st.held - h0;
        assert_true(held[b] > 0);
        assert_int_equal(cd.st.exemplars, e0); /* nothing went up in full */
        assert_true(cd.enclen > 0);
        assert_int_equal(answered_of(&cd, r[b]), held[b]);
        if (b > 0)
            assert_int_equal(answered_of(&cd, r[b - 1]), held[b - 1]);
    }
    assert_int_equal(answered_of(&cd, r[0]), 0); /* two batches later */
    assert_int_equal(argus_condense_answer(&cd, NULL, 0), 0);
    assert_int_equal(cd.replen, 0);
    assert_int_equal(bad, 0);
    argus_condense_free(&cd);
}

static void test_reference_rule_without_layout(void **state)
{
    (void)state;
    static struct argus_step_summary s;
    memset(&s, 0, sizeof s);
    size_t n = 0;
    for (uint32_t r = 0; r < 4096; r++) {
        s.rank = r;
        n += (size_t)argus_condense_reference(&s, 4096);
    }
    assert_true(n > 0 && n <= 2 * ARGUS_CONDENSE_REF_MAX);
    s.rank = 7;
    assert_true(argus_condense_reference(&s, ARGUS_CONDENSE_REF_MAX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_shapes_identical),
        cmocka_unit_test(test_exemplars_exact_thin_rows),
        cmocka_unit_test(test_damaged_input_counted),
        cmocka_unit_test(test_hold_two_batches),
        cmocka_unit_test(test_reference_rule_without_layout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
