/* test_spoolcap.c — issue 16, item 16: rank 0's spool stays under ARGUS_SPOOL_MAX. A
 * simulated job of ARGUS_TEST_SPOOLCAP_STEPS steps (default 200,000 in make check; the
 * 1,000,000-step run takes ~50 s: ARGUS_TEST_SPOOLCAP_STEPS=1000000) of 2 ranks, fed as
 * wire records through argus_pipeline_spool a window (10 steps) at a time, as rank 0's
 * pipeline takes them in, with a 4 MiB cap (ARGUS_TEST_SPOOLCAP_MAX, bytes): the job
 * directory (summaries.argus and summaries.d/) never exceeds the cap (checked every 1,000
 * windows and at the end), and the spool that is left reads whole: both ranks, the old
 * steps named as downsampled and, when segments were removed, as dropped (import/spool.c
 * describes the marks).
 * Also: without a cap nothing is rotated; with a cap, the steps of an anomaly of the
 * latest analysis keep their full summaries when their segment is thinned. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/wire.h"
#include "import/import.h"
#include "pipeline/pipeline.h"

static uint64_t CAP = 4ull << 20;
#define RANKS 2
#define WINDOW 10

static char dir[256];
static uint64_t du_total;

static int du_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)p;
    (void)f;
    if (flag == FTW_F)
        du_total += (uint64_t)st->st_size;
    return 0;
}

static uint64_t du(const char *d)
{
    du_total = 0;
    assert_int_equal(nftw(d, du_one, 16, FTW_PHYS), 0);
    return du_total;
}

static void open_pl(struct argus_pipeline *pl, const char *sub, uint64_t max)
{
    char d[512], err[512];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    const struct argus_pipeline_opts o = {
        .nranks = RANKS, .dir = d, .jobid = "cap", .spool = 1, .spool_max = max,
        .window = WINDOW, .prog = "test_spoolcap",
    };
    if (argus_pipeline_open(pl, &o, err, sizeof err) != 0)
        fail_msg("open: %s", err);
    assert_non_null(pl->spool);
}

/* One window's records: a summary per rank and step (2 kernel modes each), a name and
 * rank info in the first. */
static size_t window_records(uint64_t w, uint8_t *buf, size_t cap, uint64_t *st)
{
    static struct argus_step_summary s;
    size_t len = 0;
    if (w == 0) {
        for (uint32_t r = 0; r < RANKS; r++) {
            struct argus_rank_info ri = {.rank = r, .world_size = RANKS, .device = (int)r};
            snprintf(ri.host, sizeof ri.host, "node%u", r);
            long n = argus_rankinfo_encode(&ri, buf + len, cap - len);
            assert_true(n > 0);
            len += (size_t)n;
        }
        long n = argus_name_encode(42, "gemm_kernel", buf + len, cap - len);
        assert_true(n > 0);
        len += (size_t)n;
    }
    for (uint64_t k = 0; k < WINDOW; k++)
        for (uint32_t r = 0; r < RANKS; r++) {
            tg_summary(st, &s, 2);
            s.step = w * WINDOW + k;
            s.rank = r;
            s.flags = 0;
            s.start_ns = 1000000000ull + s.step * 100000000ull + r * 1000;
            s.end_ns = s.start_ns + 90000000ull + (tg_rand(st) % 1000) * 1000;
            s.clock_offset_ns = 0;
            long n = argus_summary_encode(&s, buf + len, cap - len);
            assert_true(n > 0);
            len += (size_t)n;
        }
    return len;
}

static void test_million_steps(void **state)
{
    struct argus_pipeline pl;
    static uint8_t buf[1 << 16];
    uint64_t st = 9;
    const char *e = getenv("ARGUS_TEST_SPOOLCAP_STEPS");
    const uint64_t steps = e ? strtoull(e, NULL, 10) : 200000;
    const char *m = getenv("ARGUS_TEST_SPOOLCAP_MAX"); /* bytes */
    CAP = m ? strtoull(m, NULL, 10) : CAP;
    char d[512];
    (void)state;

    open_pl(&pl, "job", CAP);
    snprintf(d, sizeof d, "%s/job", dir);
    uint64_t peak = 0;
    for (uint64_t w = 0; w < steps / WINDOW; w++) {
        size_t len = window_records(w, buf, sizeof buf, &st);
        argus_pipeline_spool(&pl, buf, len);
        assert_non_null(pl.spool);
        if (w % 1000 == 999) {
            uint64_t t = du(d);
            peak = t > peak ? t : peak;
            if (t > CAP)
                fail_msg("window %llu: %llu bytes in %s, over the cap of %llu",
                         (unsigned long long)w, (unsigned long long)t, d,
                         (unsigned long long)CAP);
        }
    }
    struct argus_spoolcap_stats cs;
    argus_spoolcap_stats(pl.spoolcap, pl.spool, &cs);
    argus_pipeline_close(&pl);
    uint64_t t = du(d);
    printf("# %llu steps: %llu bytes at the end (peak %llu, cap %llu), %llu rotations, "
           "%llu rewrites, %llu segments dropped\n", (unsigned long long)steps,
           (unsigned long long)t, (unsigned long long)peak, (unsigned long long)CAP,
           (unsigned long long)cs.rotations, (unsigned long long)cs.rewrites,
           (unsigned long long)cs.dropped_segments);
    assert_true(t <= CAP);
    assert_true(cs.rotations > 16);

    char sp[600], err[1500];
    static struct argus_spool_info info;
    snprintf(sp, sizeof sp, "%s/summaries.argus", d);
    int rc = argus_spool_scan_info(sp, &info, err, sizeof err);
    assert_true(rc >= 0);
    assert_int_equal(info.n_ranks, RANKS);
    if (!strstr(info.thinned, "downsampled") && !strstr(info.thinned, "thinned further"))
        fail_msg("thinned: '%s'", info.thinned);
    if (cs.dropped_segments && !strstr(info.lost, "dropped"))
        fail_msg("lost: '%s'", info.lost);
    printf("# lost: %s\n# thinned: %s\n", info.lost, info.thinned);
    if (strstr(info.lost, "damaged") || strstr(info.lost, "truncated") ||
        strstr(info.lost, "missing"))
        fail_msg("the spool left is damaged: '%s'", info.lost);
}

/* No cap: one file, as before. */
static void test_unbounded(void **state)
{
    struct argus_pipeline pl;
    static uint8_t buf[1 << 16];
    uint64_t st = 5;
    char d[512];
    struct stat sb;
    (void)state;

    open_pl(&pl, "nocap", 0);
    for (uint64_t w = 0; w < 2000; w++)
        argus_pipeline_spool(&pl, buf, window_records(w, buf, sizeof buf, &st));
    assert_null(pl.spoolcap);
    argus_pipeline_close(&pl);
    snprintf(d, sizeof d, "%s/nocap/summaries.d", dir);
    assert_int_not_equal(stat(d, &sb), 0);
}

struct count {
    uint64_t full_in, full_old, rows;
};

static int count_rec(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct count *c = ctx;
    static struct argus_step_summary s;
    char err[256];
    if (type == ARGUS_REC_SUMMARY && argus_summary_decode(rec, len, &s, err, sizeof err) == 0) {
        if (s.step >= 3000 && s.step <= 3010)
            c->full_in++;
        else if (s.step < 2900)
            c->full_old++;
    } else if (type == ARGUS_REC_ROWS) {
        c->rows++;
    }
    return 0;
}

/* An anomaly at steps 3000..3010 in the latest analysis: when the old segments are
 * thinned, those steps keep their full summaries, the old steps away from it do not. */
static void test_anomaly_kept(void **state)
{
    struct argus_pipeline pl;
    static uint8_t buf[1 << 16];
    static struct argus_anomaly an;
    uint64_t st = 7;
    char d[512], err[512];
    (void)state;

    open_pl(&pl, "anom", 2ull << 20);
    an.step_first = 3000;
    an.step_last = 3010;
    pl.rep.res.anomalies = &an;
    pl.rep.res.n_anomalies = 1;
    pl.have_result = 1;
    for (uint64_t w = 0; w < 3000; w++)
        argus_pipeline_spool(&pl, buf, window_records(w, buf, sizeof buf, &st));
    pl.rep.res.anomalies = NULL; /* ours, not the pipeline's to free */
    pl.rep.res.n_anomalies = 0;
    pl.have_result = 0;
    assert_non_null(pl.spoolcap);
    argus_pipeline_close(&pl);
    struct count c = {0};
    const struct argus_spool_callbacks cb = {count_rec, NULL, NULL, &c};
    struct argus_spool_loss loss;
    for (int seq = 1; seq < 100; seq++) {
        snprintf(d, sizeof d, "%s/anom/summaries.d/%08d.argus", dir, seq);
        if (access(d, F_OK) != 0)
            continue;
        assert_int_equal(argus_spool_read_cb(d, &cb, &loss, err, sizeof err), 0);
        assert_int_equal(loss.regions + loss.truncated, 0);
    }
    assert_true(c.rows > 0);
    assert_int_equal(c.full_in, 11 * RANKS);
    assert_int_equal(c.full_old, 0);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/argus-test-spoolcap-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[512];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unbounded),
        cmocka_unit_test(test_anomaly_kept),
        cmocka_unit_test(test_million_steps),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
