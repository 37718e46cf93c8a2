/* test_wire_rows.c — the rows record (common/wire_rows.h): rows round-trip exactly
 * (every field, extreme values, flags), records are accepted by argus_record_peek and by
 * the job store (each row a thin summary with the row's values), every truncation and a
 * flipped byte are refused without reading out of bounds, the row count is bounded, and
 * rows out of canonical order or bytes after the last row are refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/aggrow.h"
#include "store/jobstore.h"
#include "common/wire_rows.h"
#include "common/wire_io.h"

#define N 300

static struct argus_agg_row rows[ARGUS_ROWS_PER_RECORD + 1];

/* N rows in canonical order (step, then rank): two steps, odd values at the edges. */
static void make_rows(void)
{
    memset(rows, 0, sizeof rows);
    for (size_t i = 0; i < N; i++) {
        struct argus_agg_row *r = &rows[i];
        r->step = i < N / 2 ? 7 : UINT64_MAX - 3;
        r->rank = (uint32_t)(i < N / 2 ? i * 3 : (i - N / 2) * 5 + 1);
        r->flags = i % 7 == 0 ? ARGUS_SF_EXEMPLAR | 0x40000000u : 0;
        r->start_ns = i == 1 ? 0 : i == 2 ? UINT64_MAX : 1000000000ull * r->step + i * 977;
        for (int k = 0; k < 8; k++)
            r->us[k] = i == 3 ? UINT32_MAX : (uint32_t)(900000 + i * 13 + (size_t)k * 101);
    }
}

static long encode(uint8_t **buf, size_t n)
{
    *buf = malloc(argus_rows_encoded_max(n));
    assert_non_null(*buf);
    return argus_rows_encode(rows, n, *buf, argus_rows_encoded_max(n));
}

/* 0 when every row decodes to rows[i]; else the first error. */
static int read_back(const uint8_t *rec, size_t len, size_t n)
{
    char err[160];
    struct argus_rows_reader rd;
    struct argus_agg_row r;
    int rc = argus_rows_open(rec, len, &rd, err, sizeof err);
    size_t i = 0;
    while (rc == 0 && (rc = argus_rows_next(&rd, &r, err, sizeof err)) > 0) {
        if (i >= n || memcmp(&r, &rows[i], sizeof r) != 0)
            return -1000;
        i++;
        rc = 0;
    }
    return rc < 0 ? rc : i == n ? 0 : -1001;
}

static void test_round_trip(void **state)
{
    (void)state;
    char err[160];
    uint8_t *buf;
    make_rows();
    long n = encode(&buf, N);
    assert_true(n > 0 && (size_t)n <= argus_rows_encoded_max(N));
    int type = 0;
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_ROWS);
    assert_int_equal(read_back(buf, (size_t)n, N), 0);
    /* realistic rows (rows 10..N/2 of one step) code in well under 56 bytes each */
    assert_true((size_t)n < (size_t)N * 32);
    free(buf);
}

static void test_job_store_takes_rows(void **state)
{
    (void)state;
    char err[160];
    uint8_t *buf;
    struct argus_jobstore *js;
    struct argus_step_summary want;
    make_rows();
    for (size_t i = 0; i < N; i++) /* a job store's steps are small numbers */
        rows[i].step = i < N / 2 ? 3 : 4;
    long n = encode(&buf, N);
    assert_true(n > 0);
    assert_int_equal(argus_jobstore_create(1024, &js), 0);
    assert_int_equal(argus_jobstore_ingest_buffer(js, buf, (size_t)n, 0, err, sizeof err), 0);
    assert_int_equal(argus_jobstore_count(js), N);
    for (size_t i = 0; i < N; i++) {
        const struct argus_step_summary *s = argus_jobstore_get(js, rows[i].rank,
                                                                rows[i].step);
        assert_non_null(s);
        argus_aggrow_thin(&rows[i], &want);
        assert_true(s->flags & ARGUS_SF_THIN);
        assert_int_equal(s->n_kmodes, 0);
        assert_memory_equal(s, &want, offsetof(struct argus_step_summary, kmodes));
    }
    argus_jobstore_free(js);
    /* a job too small for the ranks: refused with a line that says why */
    assert_int_equal(argus_jobstore_create(8, &js), 0);
    assert_true(argus_jobstore_ingest_buffer(js, buf, (size_t)n, 0, err, sizeof err) < 0);
    assert_non_null(strstr(err, "rank outside job"));
    argus_jobstore_free(js);
    free(buf);
}

static void test_damage_refused(void **state)
{
    (void)state;
    char err[160];
    uint8_t *buf;
    make_rows();
    long n = encode(&buf, 40);
    assert_true(n > 0);
    for (long cut = 0; cut < n; cut++) { /* every truncation */
        uint8_t *t = malloc((size_t)(cut ? cut : 1));
        memcpy(t, buf, (size_t)cut);
        int type = 0;
        assert_true(argus_record_peek(t, (size_t)cut, 0, &type, err, sizeof err) < 0);
        assert_true(read_back(t, (size_t)cut, 40) < 0);
        free(t);
    }
    for (long at = 0; at < n; at++) { /* a flipped byte: the checksum catches it */
        buf[at] ^= 0x21;
        int type = 0;
        assert_true(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err) < 0);
        buf[at] ^= 0x21;
    }
    free(buf);
}

/* A record written by hand: count, then coded bytes, framed and checksummed. */
static long frame(uint8_t *buf, size_t cap, uint32_t count, const uint8_t *body, size_t blen)
{
    struct wbuf w = {buf, 0, cap};
    argus_wire_rec_start(&w, ARGUS_REC_ROWS);
    put32(&w, count);
    memcpy(buf + w.pos, body, blen);
    w.pos += blen;
    return argus_wire_rec_finish(&w);
}

static void test_malformed_refused(void **state)
{
    (void)state;
    char err[160];
    uint8_t body[4 * ARGUS_AGGROW_MAX], rec[4096];
    struct argus_aggrow_coder c;
    make_rows();
    assert_int_equal(argus_rows_encode(rows, 0, rec, sizeof rec), -EINVAL);
    assert_int_equal(argus_rows_encode(rows, ARGUS_ROWS_PER_RECORD + 1, rec, sizeof rec),
                     -EINVAL);
    assert_int_equal(argus_rows_encode(rows, 3, rec, argus_rows_encoded_max(3) - 1), -ENOSPC);
    argus_aggrow_init(&c);
    size_t blen = (size_t)(argus_aggrow_put(&c, rows, 3, body) - body);
    long n = frame(rec, sizeof rec, 3, body, blen);
    assert_int_equal(read_back(rec, (size_t)n, 3), 0); /* the hand-made one is right */
    n = frame(rec, sizeof rec, 0, body, blen); /* no rows */
    assert_true(read_back(rec, (size_t)n, 0) < 0);
    n = frame(rec, sizeof rec, ARGUS_ROWS_PER_RECORD + 1, body, blen);
    int type = 0;
    assert_true(argus_record_peek(rec, (size_t)n, 0, &type, err, sizeof err) > 0);
    assert_true(read_back(rec, (size_t)n, 3) < 0); /* count past the bound */
    n = frame(rec, sizeof rec, 2, body, blen); /* bytes after the last row */
    assert_true(read_back(rec, (size_t)n, 2) < 0);
    n = frame(rec, sizeof rec, 4, body, blen); /* a row missing */
    assert_true(read_back(rec, (size_t)n, 4) < 0);
    /* a second row that claims a new step but moves 0 steps on: not canonical */
    argus_aggrow_init(&c);
    blen = (size_t)(argus_aggrow_put(&c, rows, 1, body) - body);
    body[blen++] = 2; /* rank delta 0, new step, no flags */
    body[blen++] = 0; /* step delta 0 */
    memset(body + blen, 0, 9); /* start and the 8 values: no change */
    blen += 9;
    n = frame(rec, sizeof rec, 2, body, blen);
    struct argus_rows_reader rd;
    struct argus_agg_row r;
    assert_int_equal(argus_rows_open(rec, (size_t)n, &rd, err, sizeof err), 0);
    int rc = argus_rows_next(&rd, &r, err, sizeof err);
    if (rc > 0)
        rc = argus_rows_next(&rd, &r, err, sizeof err);
    assert_true(rc < 0);
    assert_non_null(strstr(err, "rows: row"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_job_store_takes_rows),
        cmocka_unit_test(test_damage_refused),
        cmocka_unit_test(test_malformed_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
