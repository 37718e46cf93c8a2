/* test_stacks.c — host call stacks on rank 0: the sample's wire message (common/stackrec.c)
 * round trip and its refusals, the bounded set, the merge per anomaly (analysis/
 * hoststacks.c: matching steps, sources versus peers, top stacks with sample and rank
 * counts, frames that differ) and report.json's "stacks" object (report/stacks.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "analysis/hoststacks.h"
#include "common/stackrec.h"
#include "report/report_int.h"

static struct argus_stackrec mk(uint32_t rank, uint64_t step, int lang, const char *folded)
{
    struct argus_stackrec r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    r.step = step;
    r.lang = (uint8_t)lang;
    r.why = ARGUS_STACK_WHY_STALL;
    r.cost_ns = 50000;
    snprintf(r.folded, sizeof r.folded, "%s", folded);
    return r;
}

static void test_wire(void **state)
{
    (void)state;
    struct argus_stackrec r = mk(3, 42, ARGUS_STACK_PYTHON, "main (a.py:3);slow (a.py:9)"), d;
    uint8_t buf[ARGUS_STACKREC_WIRE_MAX];
    char err[128];
    r.nframes = 2;
    r.stalled_ms = 250;
    long n = argus_stackrec_encode(&r, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_stackrec_decode(buf, (size_t)n, &d, err, sizeof err), 0);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.step, 42);
    assert_int_equal(d.stalled_ms, 250);
    assert_int_equal(d.nframes, 2);
    assert_string_equal(d.folded, r.folded);
    r.why = ARGUS_STACK_WHY_PEER;
    r.for_rank = 9;
    r.for_step = 1u << 20;
    n = argus_stackrec_encode(&r, buf, sizeof buf);
    assert_int_equal(argus_stackrec_decode(buf, (size_t)n, &d, err, sizeof err), 0);
    assert_int_equal(d.why, ARGUS_STACK_WHY_PEER);
    assert_int_equal(d.for_rank, 9);
    assert_int_equal(d.for_step, 1u << 20);
    uint8_t q[ARGUS_STACKREQ_WIRE];
    uint32_t fr;
    uint64_t fs;
    argus_stackreq_encode(4, 77, q);
    assert_int_equal(argus_stackreq_decode(q, sizeof q, &fr, &fs, err, sizeof err), 0);
    assert_int_equal(fr, 4);
    assert_int_equal(fs, 77);
    q[12] ^= 1;
    assert_int_equal(argus_stackreq_decode(q, sizeof q, &fr, &fs, err, sizeof err), -EINVAL);
    assert_int_equal(argus_stackreq_decode(q, 5, &fr, &fs, err, sizeof err), -EINVAL);
    assert_int_equal(argus_stackrec_encode(&r, buf, 10), -ENOSPC);
    /* every refusal names what is wrong */
    assert_int_equal(argus_stackrec_decode(buf, 10, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "shorter"));
    assert_int_equal(argus_stackrec_decode(buf, (size_t)n - 1, &d, err, sizeof err), -EINVAL);
    buf[45] ^= 1;
    assert_int_equal(argus_stackrec_decode(buf, (size_t)n, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "checksum"));
    buf[45] ^= 1;
    buf[0] ^= 1;
    assert_int_equal(argus_stackrec_decode(buf, (size_t)n, &d, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "magic"));
}

static void test_set_bound(void **state)
{
    (void)state;
    struct argus_stackset s;
    struct argus_stackrec r = mk(0, 1, ARGUS_STACK_NATIVE, "f (x)");
    assert_int_equal(argus_stackset_init(&s, 2), 0);
    assert_int_equal(argus_stackset_add(&s, &r), 1);
    assert_int_equal(argus_stackset_add(&s, &r), 1);
    assert_int_equal(argus_stackset_add(&s, &r), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.dropped, 1);
    argus_stackset_free(&s);
}

/* rank 2 stalls in slow() at steps 10 and 20 (4 samples), once elsewhere; rank 5 stalls
 * in slow() too at step 20; peer rank 1 is in work() at step 10, and so is peer rank 3
 * when rank 0 asked it; rank 2's step 15 is not an affected step. */
static void fill(struct argus_stackset *s)
{
    const char *slow = "main (t.py:1);step (t.py:5);slow (t.py:9)";
    const char *other = "main (t.py:1);step (t.py:5);gc (t.py:30)";
    const char *work = "main (t.py:1);step (t.py:5);work (t.py:7)";
    struct argus_stackrec v[] = {
        mk(2, 10, ARGUS_STACK_PYTHON, slow), mk(2, 10, ARGUS_STACK_PYTHON, slow),
        mk(2, 20, ARGUS_STACK_PYTHON, slow), mk(2, 20, ARGUS_STACK_PYTHON, other),
        mk(5, 20, ARGUS_STACK_PYTHON, slow), mk(2, 15, ARGUS_STACK_PYTHON, work),
        mk(1, 10, ARGUS_STACK_PYTHON, work), mk(2, 10, ARGUS_STACK_NATIVE, "a (x);b (x)"),
        mk(2, 99, ARGUS_STACK_PYTHON, other),
        /* peers rank 0 asked: rank 3 during rank 2's stall at step 10 (its own step 11),
         * rank 3 for step 15 (not affected), source rank 5 for rank 2 (not a peer) */
        mk(3, 11, ARGUS_STACK_PYTHON, work), mk(3, 16, ARGUS_STACK_PYTHON, other),
        mk(5, 10, ARGUS_STACK_PYTHON, other),
    };
    const size_t npeer = 3, n = sizeof v / sizeof v[0];
    for (size_t i = n - npeer; i < n; i++) {
        v[i].why = ARGUS_STACK_WHY_PEER;
        v[i].for_rank = 2;
        v[i].for_step = i == n - 2 ? 15 : 10;
    }
    assert_int_equal(argus_stackset_init(s, 64), 0);
    for (size_t i = 0; i < n; i++)
        argus_stackset_add(s, &v[i]);
}

static struct argus_anomaly stall_anomaly(void)
{
    struct argus_anomaly a;
    memset(&a, 0, sizeof a);
    a.id = 1;
    a.kind = ARGUS_AK_HOST_STALL;
    a.step_first = 10;
    a.step_last = 20;
    a.n_ranks = 2;
    a.ranks[0] = 2;
    a.ranks[1] = 5;
    a.n_hits = a.n_hits_total = 2;
    a.hits[0] = 10;
    a.hits[1] = 20;
    return a;
}

static void test_merge(void **state)
{
    (void)state;
    struct argus_stackset s;
    struct argus_anomaly_stacks st;
    struct argus_anomaly a = stall_anomaly();
    size_t off[8], len[8];
    fill(&s);
    assert_int_equal(argus_hoststacks_for(&s, &a, &st), 1);
    const struct argus_stack_side *py = &st.src[0];
    assert_int_equal(py->samples, 5);          /* not step 15 (not affected), not step 99 */
    assert_int_equal(py->ranks, 2);
    assert_int_equal(py->n, 2);
    assert_string_equal(py->top[0].folded, "main (t.py:1);step (t.py:5);slow (t.py:9)");
    assert_int_equal(py->top[0].samples, 4);
    assert_int_equal(py->top[0].ranks, 2);
    assert_int_equal(py->top[1].samples, 1);
    assert_int_equal(st.src[1].samples, 1);    /* the native sample */
    assert_int_equal(st.peer[0].samples, 2);   /* rank 1 at step 10, rank 3 asked for it */
    assert_int_equal(st.peer[0].ranks, 2);
    assert_int_equal(st.peer[0].n, 1);
    assert_string_equal(st.peer[0].top[0].folded, "main (t.py:1);step (t.py:5);work (t.py:7)");
    assert_int_equal(st.peer[0].top[0].ranks, 2);
    assert_int_equal(st.cost_n, 1);
    /* the frames that differ from the peer's: only the innermost */
    size_t nd = argus_hoststacks_differ(&st, 0, off, len, 8);
    assert_int_equal(nd, 1);
    assert_memory_equal(py->top[0].folded + off[0], "slow (t.py:9)", len[0]);
    /* a span without the full list of steps: step 15 counts too */
    a.n_hits_total = 40;
    assert_int_equal(argus_hoststacks_for(&s, &a, &st), 1);
    assert_int_equal(st.src[0].samples, 6);
    /* an anomaly of other ranks or other steps: nothing */
    a = stall_anomaly();
    a.ranks[0] = 7;
    a.ranks[1] = 8;
    assert_int_equal(argus_hoststacks_for(&s, &a, &st), 0);
    a = stall_anomaly();
    a.n_ranks = 0;
    assert_int_equal(argus_hoststacks_for(&s, &a, &st), 0);
    argus_stackset_free(&s);
}

static void test_json(void **state)
{
    (void)state;
    struct argus_stackset s;
    struct argus_anomaly a = stall_anomaly();
    const unsigned char *buf;
    size_t len;
    char text[16384], err[128];
    fill(&s);
    yajl_gen g = yajl_gen_alloc(NULL);
    assert_int_equal(yajl_gen_map_open(g), yajl_gen_status_ok);
    assert_int_equal(an_gen_stacks(g, &s, &a), 0);
    assert_int_equal(yajl_gen_map_close(g), yajl_gen_status_ok);
    assert_int_equal(yajl_gen_get_buf(g, &buf, &len), yajl_gen_status_ok);
    assert_true(len < sizeof text);
    memcpy(text, buf, len);
    text[len] = '\0';
    yajl_val root = yajl_tree_parse(text, err, sizeof err);
    assert_non_null(root);
    const char *pf[] = {"stacks", "python", "sources", "top", NULL};
    yajl_val top = yajl_tree_get(root, pf, yajl_t_array);
    assert_non_null(top);
    yajl_val t0 = top->u.array.values[0];
    const char *fn[] = {"leaf", "function", NULL}, *fl[] = {"leaf", "file", NULL},
               *ln[] = {"leaf", "line", NULL}, *sm[] = {"samples", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t0, fn, yajl_t_string)), "slow");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t0, fl, yajl_t_string)), "t.py");
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(t0, ln, yajl_t_number)), 9);
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(t0, sm, yajl_t_number)), 4);
    const char *df[] = {"stacks", "python", "differ", NULL};
    yajl_val d = yajl_tree_get(root, df, yajl_t_array);
    assert_int_equal(d->u.array.len, 1);
    const char *nl[] = {"stacks", "native", "sources", "top", NULL};
    yajl_val nt = yajl_tree_get(root, nl, yajl_t_array);
    const char *ob[] = {"leaf", "object", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(nt->u.array.values[0], ob,
                                                      yajl_t_string)), "x");
    yajl_tree_free(root);
    yajl_gen_free(g);
    /* no sample for the anomaly: no key at all */
    a.ranks[0] = 7;
    a.ranks[1] = 8;
    g = yajl_gen_alloc(NULL);
    yajl_gen_map_open(g);
    assert_int_equal(an_gen_stacks(g, &s, &a), 0);
    yajl_gen_map_close(g);
    yajl_gen_get_buf(g, &buf, &len);
    assert_int_equal(len, 2); /* {} */
    yajl_gen_free(g);
    argus_stackset_free(&s);
}

static void test_markdown(void **state)
{
    (void)state;
    struct argus_stackset s;
    struct argus_anomaly a = stall_anomaly();
    char *text = NULL;
    size_t len = 0;
    fill(&s);
    FILE *f = open_memstream(&text, &len);
    an_md_stacks(f, &s, &a);
    fclose(f);
    /* the frame that differs from the peers, with the counts */
    assert_non_null(strstr(text, "- Host stack (python, 4 of 5 samples, 2 ranks; peers 2 "
                                 "samples): `slow (t.py:9)`"));
    assert_non_null(strstr(text, "- Host stack (native"));
    free(text);
    argus_stackset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire),
        cmocka_unit_test(test_set_bound),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_markdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
