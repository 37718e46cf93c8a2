/* test_thin.c — the analysis on a job store where most cells are thin (ARGUS_SF_THIN: the
 * row values a condensing reduction sends, without kernel modes nor phase compute split;
 * reduce/condense.h). Each synthetic fault is analysed twice: as built, and after every
 * cell of the ranks that are neither reference ranks (coords.dp < 2) nor the fault's
 * sources/affected ranks was replaced by its thin version. Both analyses must give the
 * same verdicts: same kinds, same source ranks and groups, same named kernel. Kernel
 * references come only from the cells with kernel detail, so a thin cell never reads as
 * zero kernel time (which would flag every full rank of a class). Also the sources
 * themselves thin on every other step (exemplars cover part of a window only), and
 * report.json's raw bytes per rank-step, which only cells with kernel detail make.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"
#include "tests/common/tmpdir.h"

static uint64_t us(uint64_t ns)
{
    return (ns + 500) / 1000 * 1000;
}

/* The thin summary of f as the condensing reduction builds it: row values at us
 * resolution, start on rank 0's clock, coordinates from the rank info (zero here: the
 * synthetic job's rank infos carry none), everything kernel-level zero. */
static void thin_of(const struct argus_jobstore *js, const struct argus_step_summary *f,
                    struct argus_step_summary *t)
{
    static const int ph[] = { ARGUS_PH_FORWARD, ARGUS_PH_BACKWARD, ARGUS_PH_OPTIMIZER,
                              ARGUS_PH_COMM };
    const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, f->rank);
    const uint64_t wall = us(f->end_ns > f->start_ns ? f->end_ns - f->start_ns : 0);
    const uint64_t host = us(f->host_gap_ns ? f->host_gap_ns : f->phase_wall_ns[ARGUS_PH_HOST]);
    memset(t, 0, offsetof(struct argus_step_summary, kmodes));
    t->step = f->step;
    t->rank = f->rank;
    t->flags = f->flags | ARGUS_SF_THIN;
    t->start_ns = us((uint64_t)((int64_t)f->start_ns + f->clock_offset_ns));
    t->end_ns = t->start_ns + wall;
    t->clock_offset_ns = 0;
    if (ri)
        t->coords = ri->coords;
    for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
        t->phase_wall_ns[ph[i]] = us(f->phase_wall_ns[ph[i]]);
    t->phase_wall_ns[ARGUS_PH_HOST] = host;
    t->host_gap_ns = host;
    t->compute_ns = us(f->compute_ns);
    t->collective_ns = us(f->collective_ns + f->p2p_ns);
    t->busy_ns = wall > host ? wall - host : 0;
}

/* Replace the cells of js by thin ones: every cell of a rank that is neither a reference
 * rank (coords.dp < 2) nor in keep[]; with `alternate`, also the odd steps of the ranks in
 * keep[] (reference ranks or not). Returns the number of cells thinned. */
static size_t thin_job(struct argus_jobstore *js, const uint32_t *keep, size_t nkeep,
                       int alternate)
{
    struct argus_step_summary *t = calloc(1, sizeof *t);
    size_t done = 0;
    assert_non_null(t);
    for (uint32_t r = 0; r < argus_jobstore_nranks(js); r++) {
        const uint64_t *ids;
        const size_t m = argus_jobstore_rank_step_ids(js, r, &ids);
        uint64_t *steps = malloc((m ? m : 1) * sizeof *steps);
        assert_non_null(steps);
        memcpy(steps, ids, m * sizeof *steps); /* the store's list changes as we add */
        int kept = 0;
        for (size_t i = 0; i < nkeep; i++)
            kept |= keep[i] == r;
        for (size_t i = 0; i < m; i++) {
            const struct argus_step_summary *f = argus_jobstore_get(js, r, steps[i]);
            assert_non_null(f);
            const int ref = f->coords.dp_size && f->coords.dp < 2;
            if (kept ? !alternate || steps[i] % 2 == 0 : ref)
                continue;
            thin_of(js, f, t);
            assert_int_equal(argus_jobstore_add_summary(js, t), 0);
            done++;
        }
        free(steps);
    }
    free(t);
    return done;
}

static int same_ranks(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    if (na != nb)
        return 0;
    for (uint32_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* r holds a verdict like a: same kind, sources, group, phase, victim count and first
 * kernel (for kernel and link verdicts also the number of kernels). */
static int has_like(const struct argus_result *r, const struct argus_anomaly *a)
{
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *b = &r->anomalies[i];
        const int named = a->kind == ARGUS_AK_KERNEL_DEGRADATION ||
                          a->kind == ARGUS_AK_COMM_DEGRADATION;
        if (b->kind == a->kind && same_ranks(a->ranks, a->n_ranks, b->ranks, b->n_ranks) &&
            same_ranks(a->group, a->n_group, b->group, b->n_group) &&
            b->group_type == a->group_type && b->phase == a->phase &&
            b->n_victims == a->n_victims && (a->n_kernels == 0) == (b->n_kernels == 0) &&
            (a->n_kernels == 0 || a->kernels[0] == b->kernels[0]) &&
            (!named || a->n_kernels == b->n_kernels))
            return 1;
    }
    return 0;
}

/* Exactly one verdict of kind `kind` naming want[] (NULL: any), and, when kernel is set,
 * that kernel first. */
static void expect_verdict(const struct argus_jobstore *js, const struct argus_result *r,
                           int kind, const uint32_t *want, uint32_t n, const char *kernel)
{
    size_t found = 0;
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        if (a->kind != kind || (want && !same_ranks(a->ranks, a->n_ranks, want, n)))
            continue;
        found++;
        if (kernel)
            assert_true(a->n_kernels >= 1 &&
                        a->kernels[0] == argus_name_hash(synth_kernel_name(kernel)));
    }
    if (found != 1 || r->n_anomalies != 1)
        synth_dump(js, r);
    assert_int_equal(found, 1);
    assert_int_equal(r->n_anomalies, 1);
}

/* Analyse o as built and thinned (keep[]: the scenario's sources/affected ranks kept in
 * full, on even steps only with `alternate`); both must hold the same verdicts, the
 * thinned one checked against kind/want/kernel (kind -1: no anomaly at all). */
static void thin_case(const struct synth_opts *o, const uint32_t *keep, size_t nkeep,
                      int alternate, int kind, const uint32_t *want, uint32_t n,
                      const char *kernel)
{
    struct argus_result r0, r1;
    struct argus_jobstore *js = synth_run(o, &r0);
    const size_t full = argus_jobstore_count(js);
    const size_t thinned = thin_job(js, keep, nkeep, alternate);
    assert_true(thinned > 0 && thinned < full);
    assert_int_equal(argus_jobstore_count(js), full);
    assert_int_equal(argus_analyze(js, NULL, &r1), 0);
    if (getenv("ARGUS_TEST_VERBOSE")) {
        fprintf(stderr, "  thinned %zu of %zu cells:\n", thinned, full);
        synth_dump(js, &r1);
    }
    if (kind < 0) {
        if (r1.n_anomalies)
            synth_dump(js, &r1);
        assert_int_equal(r0.n_anomalies, 0);
        assert_int_equal(r1.n_anomalies, 0);
    } else {
        expect_verdict(js, &r0, kind, want, n, kernel);
        expect_verdict(js, &r1, kind, want, n, kernel);
    }
    if (r0.n_anomalies != r1.n_anomalies)
        synth_dump(js, &r1);
    assert_int_equal(r0.n_anomalies, r1.n_anomalies);
    for (size_t i = 0; i < r0.n_anomalies; i++)
        assert_true(has_like(&r1, &r0.anomalies[i]));
    assert_int_equal(r1.steps.count, r0.steps.count);
    assert_true(r1.kernels_seen > 0 && r1.kernels_seen < r0.kernels_seen);
    argus_result_free(&r0);
    argus_result_free(&r1);
    argus_jobstore_free(js);
}

static void test_thin_clean(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct synth_opts o;
        synth_default(&o, seed);
        thin_case(&o, NULL, 0, 0, -1, NULL, 0, NULL);
    }
}

/* Rank 5 (dp 2) computes 1.5x slower over steps 20-40 (test_detect's straggler). */
static void test_thin_straggler(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 7);
    synth_add(&o, SY_STRAGGLER, 20, 40, 1.5)->ranks[0] = 5;
    o.f[0].nranks = 1;
    const uint32_t src[] = { 5 };
    thin_case(&o, src, 1, 0, ARGUS_AK_COMPUTE_STRAGGLER, src, 1, NULL);
}

/* flash_bwd 2x slower on rank 6 (dp 3) over steps 20-40 (test_detect's kernel case). */
static void test_thin_kernel(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 13);
    struct synth_fault *f = synth_add(&o, SY_KERNEL, 20, 40, 2.0);
    f->ranks[f->nranks++] = 6;
    f->kernel = "flash_bwd";
    const uint32_t src[] = { 6 };
    thin_case(&o, src, 1, 0, ARGUS_AK_KERNEL_DEGRADATION, src, 1, "flash_bwd");
}

/* The collectives of DP group 8, 10, 12, 14 (pp 1, tp 0) 3x slower over steps 20-50
 * (test_detect_cases's W1 case); ranks 12 and 14 are dp 2 and 3. */
static void test_thin_link(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 51);
    synth_add(&o, SY_COMM, 20, 50, 3.0)->group_index = 2;
    const uint32_t grp[] = { 8, 10, 12, 14 };
    thin_case(&o, grp, 4, 0, ARGUS_AK_COMM_DEGRADATION, grp, 4, NULL);
}

/* ARGUS case 5 on 32 ranks (dp 8): both TP ranks of DP replicas 4 and 5 at stage 1 2x
 * slower; the other DP groups' reduce-scatter waits for them (test_detect_cases's masked
 * straggler): one compute straggler, no link verdict, with thin waiting ranks. */
static void test_thin_masked(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 61);
    o.dp = 8;
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 15, 59, 2.0);
    const uint32_t src[] = { 24, 25, 26, 27 };
    for (int i = 0; i < 4; i++)
        f->ranks[f->nranks++] = (int)src[i];
    thin_case(&o, src, 4, 0, ARGUS_AK_COMPUTE_STRAGGLER, src, 4, NULL);
}

/* Rank 5 (dp 2) idles 30 ms before each step's first launch over steps 20-40
 * (test_detect's host stall, on a non-reference rank): a row-level verdict, found with
 * the source itself thin on every step. */
static void test_thin_host(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 11);
    struct synth_fault *f = synth_add(&o, SY_HOST, 20, 40, 1.0);
    f->ranks[f->nranks++] = 5;
    f->ms = 30;
    const uint32_t src[] = { 5 };
    thin_case(&o, NULL, 0, 0, ARGUS_AK_HOST_STALL, src, 1, NULL);
}

/* flash_bwd 4x slower on rank 13 (dp 2) over steps 10-59: slow enough to push the whole
 * compute over the ratio (test_detect's big kernel case), still one kernel. */
static void test_thin_kernel_big(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 14);
    struct synth_fault *f = synth_add(&o, SY_KERNEL, 10, 59, 4.0);
    f->ranks[f->nranks++] = 13;
    f->kernel = "flash_bwd";
    const uint32_t src[] = { 13 };
    thin_case(&o, src, 1, 0, ARGUS_AK_KERNEL_DEGRADATION, src, 1, "flash_bwd");
    thin_case(&o, src, 1, 1, ARGUS_AK_KERNEL_DEGRADATION, src, 1, "flash_bwd");
}

/* The sources themselves thin on every odd step: the kernel and straggler verdicts come
 * from the exemplars (even steps) and the rows. */
static void test_thin_sources_alternate(void **state)
{
    (void)state;
    struct synth_opts o;
    synth_default(&o, 13);
    struct synth_fault *f = synth_add(&o, SY_KERNEL, 20, 40, 2.0);
    f->ranks[f->nranks++] = 6;
    f->kernel = "flash_bwd";
    const uint32_t k6[] = { 6 };
    thin_case(&o, k6, 1, 1, ARGUS_AK_KERNEL_DEGRADATION, k6, 1, "flash_bwd");

    synth_default(&o, 7);
    synth_add(&o, SY_STRAGGLER, 20, 40, 1.5)->ranks[0] = 5;
    o.f[0].nranks = 1;
    const uint32_t s5[] = { 5 };
    thin_case(&o, s5, 1, 1, ARGUS_AK_COMPUTE_STRAGGLER, s5, 1, NULL);

    synth_default(&o, 51);
    synth_add(&o, SY_COMM, 20, 50, 3.0)->group_index = 2;
    const uint32_t grp[] = { 8, 10, 12, 14 };
    thin_case(&o, grp, 4, 1, ARGUS_AK_COMM_DEGRADATION, grp, 4, NULL);
}

/* report.json's collection.raw_bytes_per_rank_step for js and r (written into a
 * temporary directory, removed after). */
static double raw_bytes(const struct argus_jobstore *js, const struct argus_result *r)
{
    char dir[256], p[1024], err[256];
    assert_non_null(argus_test_tmpdir(dir, sizeof dir, "thin"));
    assert_int_equal(argus_report_write(dir, js, r, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/report.json", dir);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    static char txt[1 << 20];
    const size_t n = fread(txt, 1, sizeof txt - 1, f);
    fclose(f);
    txt[n] = '\0';
    yajl_val root = yajl_tree_parse(txt, err, sizeof err);
    assert_non_null(root);
    const char *path[] = { "collection", "raw_bytes_per_rank_step", NULL };
    yajl_val v = yajl_tree_get(root, path, yajl_t_number);
    assert_true(v && YAJL_IS_INTEGER(v));
    const double x = (double)YAJL_GET_INTEGER(v);
    yajl_tree_free(root);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    assert_int_equal(rmdir(dir), 0);
    return x;
}

/* The raw trace bytes per rank-step that the summaries stand for: thin cells saw kernels
 * that kernels_seen does not count, so they are left out of the rank-steps too, and the
 * figure stays that of the job (not halved when half of the cells are thin). */
static void test_thin_report(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r0, r1;
    synth_default(&o, 2);
    struct argus_jobstore *js = synth_run(&o, &r0);
    const double full = raw_bytes(js, &r0);
    assert_true(thin_job(js, NULL, 0, 0) > 0);
    assert_int_equal(argus_analyze(js, NULL, &r1), 0);
    const double thin = raw_bytes(js, &r1);
    if (getenv("ARGUS_TEST_VERBOSE"))
        fprintf(stderr, "  raw bytes per rank-step: %.0f full, %.0f thinned\n", full, thin);
    assert_true(full > 0);
    assert_true(thin > 0.9 * full && thin < 1.1 * full);
    argus_result_free(&r0);
    argus_result_free(&r1);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thin_clean),
        cmocka_unit_test(test_thin_straggler),
        cmocka_unit_test(test_thin_kernel),
        cmocka_unit_test(test_thin_kernel_big),
        cmocka_unit_test(test_thin_link),
        cmocka_unit_test(test_thin_masked),
        cmocka_unit_test(test_thin_host),
        cmocka_unit_test(test_thin_sources_alternate),
        cmocka_unit_test(test_thin_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
