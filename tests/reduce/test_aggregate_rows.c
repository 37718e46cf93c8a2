/* test_aggregate_rows.c — the window aggregate's compact rows (common/aggrow.h, through
 * common/aggregate.h's encode/decode): exact round trip of extreme values, every
 * truncation and random damage refused without reading out of bounds, non-canonical row
 * bytes refused, and a realistic window stays under its measured bytes per row. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/aggregate.h"
#include "common/aggrow.h"
#include "common/wire.h"
#include "reduce/tree.h"

#include "tests/reduce/aggtest.h"

static int row_order(const void *x, const void *y)
{
    const struct argus_agg_row *a = x, *b = y;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return memcmp(a, b, sizeof *a);
}

static uint64_t pick64(void)
{
    static const uint64_t ex[] = {0, 1, 2, 999, UINT64_MAX, UINT64_MAX - 1, 1ull << 63,
                                  (1ull << 63) - 1, UINT32_MAX, 1ull << 32};
    switch (rnd() % 3) {
    case 0: return ex[rnd() % 10];
    case 1: return rnd();
    default: return rnd() % 1000;
    }
}

static uint32_t pick32(void)
{
    static const uint32_t ex[] = {0, 1, 2, UINT32_MAX, UINT32_MAX - 1, 1u << 31, 1000000};
    switch (rnd() % 3) {
    case 0: return ex[rnd() % 7];
    case 1: return (uint32_t)rnd();
    default: return (uint32_t)(rnd() % 1000);
    }
}

/* Decode e, check it gives exactly rows[0..n) (sorted) and re-encodes to the same bytes. */
static void check_round_trip(const uint8_t *e, size_t len, const struct argus_agg_row *rows,
                             size_t n)
{
    struct argus_aggregate d;
    char err[128];
    size_t l2;
    argus_agg_init(&d);
    assert_int_equal(argus_agg_decode(&d, e, len, err, sizeof err), 0);
    assert_int_equal(d.nrows, n);
    assert_memory_equal(d.rows, rows, n * sizeof *rows);
    uint8_t *e2 = enc(&d, &l2);
    assert_int_equal(l2, len);
    assert_memory_equal(e2, e, len);
    free(e2);
    argus_agg_free(&d);
}

/* Random rows with extreme values (0 and UINT64_MAX starts and steps, non-monotone starts,
 * any flags, equal (step, rank) with different values), in random sorted runs plus a
 * leaf's rows and kmodes: exact round trip, canonical re-encoding. */
static void test_rows_extremes_round_trip(void **state)
{
    (void)state;
    for (int trial = 0; trial < 40; trial++) {
        const size_t n = 1 + rnd() % 700, nruns = 1 + rnd() % 9;
        struct argus_aggregate a;
        argus_agg_init(&a);
        assert_int_equal(argus_agg_reserve(&a, n, nruns + 1), 0);
        for (size_t i = 0; i < n; i++) {
            struct argus_agg_row *r = &a.rows[i];
            r->step = pick64();
            r->rank = pick32();
            r->flags = rnd() % 2 ? pick32() : 0;
            r->start_ns = pick64();
            for (int k = 0; k < 8; k++)
                r->us[k] = pick32();
            if (i && rnd() % 8 == 0) /* same cell as the row before, other values */
                r->step = r[-1].step, r->rank = r[-1].rank;
            if (i && rnd() % 16 == 0)
                *r = r[-1]; /* an exact duplicate */
        }
        size_t from = 0; /* runs: nruns - 1 random cuts, each run sorted */
        for (size_t j = 0; j < nruns; j++) {
            size_t to = j + 1 == nruns ? n : from + rnd() % (n - from + 1);
            if (to == from)
                continue;
            qsort(&a.rows[from], to - from, sizeof *a.rows, row_order);
            a.run[a.nruns++] = to;
            from = to;
        }
        a.nrows = n;
        assert_int_equal(argus_agg_merge(&a, &leaves[rnd() % NR]), 0);
        struct argus_agg_row *want = malloc(a.nrows * sizeof *want);
        memcpy(want, a.rows, a.nrows * sizeof *want);
        qsort(want, a.nrows, sizeof *want, row_order);
        size_t len;
        uint8_t *e = enc(&a, &len);
        check_round_trip(e, len, want, a.nrows);
        free(e);
        free(want);
        argus_agg_free(&a);
    }
}

static uint8_t *with_crc(const uint8_t *body, size_t len) /* body + its CRC, exact size */
{
    uint8_t *b = malloc(len + 4);
    memcpy(b, body, len);
    uint32_t crc = argus_crc32c(b, len);
    memcpy(b + len, &crc, 4);
    return b;
}

/* Every truncation is refused, with a message: as is (checksum) and with the checksum
 * made right (the decoder itself); each into a buffer of exactly that size, so that a
 * sanitizer build sees any read past it. Random damage with a right checksum never
 * crashes, and whatever is accepted re-encodes to the same bytes (one encoding each). */
static void test_rows_truncation_and_damage(void **state)
{
    (void)state;
    struct argus_aggregate a, d;
    char err[128];
    size_t len;
    argus_agg_init(&a);
    argus_agg_init(&d);
    for (int r = 0; r < 40; r++)
        assert_int_equal(argus_agg_merge(&a, &leaves[(r * 37) % NR]), 0);
    uint8_t *e = enc(&a, &len);
    for (size_t l = 0; l < len; l++) {
        uint8_t *b = malloc(l ? l : 1);
        memcpy(b, e, l);
        err[0] = 0;
        assert_int_equal(argus_agg_decode(&d, b, l, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "aggregate: "));
        free(b);
        if (l < 4)
            continue;
        b = with_crc(e, l - 4);
        err[0] = 0;
        assert_int_equal(argus_agg_decode(&d, b, l, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "aggregate: "));
        assert_int_equal(d.nrows, 0);
        free(b);
    }
    /* counts past what the bytes can hold are refused before anything is allocated */
    for (int field = 8; field <= 12; field += 4) {
        uint8_t *b = with_crc(e, len - 4);
        const uint32_t huge = UINT32_MAX;
        memcpy(b + field, &huge, 4);
        uint32_t crc = argus_crc32c(b, len - 4);
        memcpy(b + len - 4, &crc, 4);
        assert_int_equal(argus_agg_decode(&d, b, len, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "malformed at offset 16"));
        free(b);
    }
    int accepted = 0;
    for (int t = 0; t < 3000; t++) {
        uint8_t *b = with_crc(e, len - 4);
        for (int f = 1 + (int)(rnd() % 3); f > 0; f--)
            b[rnd() % (len - 4)] ^= (uint8_t)(1u << rnd() % 8);
        uint32_t crc = argus_crc32c(b, len - 4);
        memcpy(b + len - 4, &crc, 4);
        if (argus_agg_decode(&d, b, len, err, sizeof err) == 0) {
            size_t l2;
            uint8_t *e2 = enc(&d, &l2);
            assert_int_equal(l2, len);
            assert_memory_equal(e2, b, len);
            free(e2);
            accepted++;
        }
        free(b);
    }
    assert_true(accepted > 0); /* some damage (a changed value) is still a valid encoding */
    free(e);
    argus_agg_free(&a);
    argus_agg_free(&d);
}

struct bytes {
    uint8_t b[256];
    size_t n;
};

static void uv(struct bytes *w, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        w->b[w->n++] = (uint8_t)(v | 0x80);
    w->b[w->n++] = (uint8_t)v;
}

static void raw_bytes(struct bytes *w, const char *s, size_t n)
{
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

/* The us part of a row: us[0] difference zz0, the other us unchanged; row_tail: the rest
 * of a row after its header, start difference 0 and then that. */
static void us_tail(struct bytes *w, uint64_t zz0)
{
    for (int k = 0; k < 8; k++)
        uv(w, k ? 0 : zz0);
}
#define row_tail(w, zz0) (uv((w), 0), us_tail((w), (zz0)))

/* A whole encoding of nr rows (no kmodes) around the row bytes w; 0 or the error. */
static int decode_rows(const struct bytes *w, uint32_t nr, char *err, size_t errlen)
{
    uint8_t body[16 + sizeof w->b];
    const struct { uint32_t magic; uint16_t ver, flags; uint32_t nr, nk; } head = {
        ARGUS_AGG_MAGIC, ARGUS_AGG_VERSION, 0, nr, 0}; /* 16 bytes, host order, no kmodes */
    memcpy(body, &head, 16);
    memcpy(body + 16, w->b, w->n);
    uint8_t *b = with_crc(body, 16 + w->n);
    struct argus_aggregate d;
    argus_agg_init(&d);
    int rc = argus_agg_decode(&d, b, 16 + w->n + 4, err, errlen);
    argus_agg_free(&d);
    free(b);
    return rc;
}

/* Row bytes that are not what the encoder writes are refused: rows out of order, empty
 * step and flag fields, overlong and too long varints, ranks, steps and values past their
 * field. */
static void test_rows_noncanonical(void **state)
{
    (void)state;
    char err[128];
    struct bytes w;
#define CASE(nr, want, build)                                                         \
    do {                                                                              \
        memset(&w, 0, sizeof w);                                                      \
        build;                                                                        \
        assert_int_equal(decode_rows(&w, nr, err, sizeof err), want);                 \
    } while (0)
    CASE(2, 0, (uv(&w, 0), row_tail(&w, 8), uv(&w, 0), row_tail(&w, 2))); /* us 4, 5 */
    CASE(2, -EINVAL, (uv(&w, 0), row_tail(&w, 10), uv(&w, 0), row_tail(&w, 1))); /* 5, 4 */
    assert_non_null(strstr(err, "malformed or out of order at offset 26"));
    CASE(1, -EINVAL, (uv(&w, 2), uv(&w, 0), row_tail(&w, 0)));   /* new step, +0 */
    CASE(1, -EINVAL, (uv(&w, 1), uv(&w, 0), row_tail(&w, 0)));   /* flags, 0 */
    CASE(1, 0, (uv(&w, 1), uv(&w, UINT32_MAX), row_tail(&w, 0)));
    CASE(1, -EINVAL, (uv(&w, 1), uv(&w, 1ull << 32), row_tail(&w, 0)));
    CASE(1, -EINVAL, (raw_bytes(&w, "\x80\x00", 2), row_tail(&w, 0))); /* overlong 0 */
    CASE(1, 0, (uv(&w, 0), raw_bytes(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10),
                us_tail(&w, 0)) /* start 2^63 */);
    CASE(1, -EINVAL, (uv(&w, 0), raw_bytes(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10),
                      us_tail(&w, 0)));
    CASE(1, -EINVAL, (uv(&w, 0), raw_bytes(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00",
                                     11), us_tail(&w, 0)));
    CASE(1, -EINVAL, (uv(&w, 1ull << 34), row_tail(&w, 0)));       /* header past 34 bits */
    CASE(2, 0, (uv(&w, (uint64_t)UINT32_MAX << 2), row_tail(&w, 0), uv(&w, 2), uv(&w, 1),
                row_tail(&w, 0))); /* rank UINT32_MAX, then rank 0 of step 1 */
    CASE(2, -EINVAL, (uv(&w, (uint64_t)UINT32_MAX << 2), row_tail(&w, 0), uv(&w, 4),
                      row_tail(&w, 0))); /* rank past UINT32_MAX */
    CASE(2, -EINVAL, (uv(&w, 2), uv(&w, UINT64_MAX), row_tail(&w, 0), uv(&w, 2), uv(&w, 1),
                      row_tail(&w, 0))); /* step past UINT64_MAX */
    CASE(1, -EINVAL, (uv(&w, 0), row_tail(&w, 1)));                /* us[0] = -1 */
    CASE(1, -EINVAL, (uv(&w, 0), row_tail(&w, 1ull << 33)));       /* us[0] = 2^32 */
    CASE(1, -EINVAL, (uv(&w, 0), row_tail(&w, 0), uv(&w, 0)));     /* a byte left over */
    CASE(2, -EINVAL, (uv(&w, 0), row_tail(&w, 0)));                /* a row missing */
#undef CASE
}

/* Ranks of one window as bench/reduce_scale makes them (steps of ~0.9 s, phases within
 * 100 us across ranks, compute within +-1 %), and noisier: starts spread over +-50 us
 * (clock offsets), host gaps up to 2 ms, some flags. */
static size_t realistic_rows(int noisy, struct argus_aggregate *acc)
{
    argus_agg_init(acc);
    for (uint32_t r = 0; r < 4096; r++) {
        const uint64_t speed = 990 + rnd() % 21;
        for (uint64_t s = 100; s < 104; s++) {
            memset(sum, 0, offsetof(struct argus_step_summary, kmodes));
            sum->rank = r;
            sum->step = s;
            sum->start_ns = 1000000000ull * s;
            sum->end_ns = sum->start_ns + 900000000ull + rnd() % 1000000;
            sum->phase_wall_ns[0] = 300000000 + rnd() % 100000;
            sum->phase_wall_ns[1] = 500000000 + rnd() % 100000;
            sum->compute_ns = 700000000 * speed / 1000 + rnd() % 100000;
            sum->collective_ns = 150000000 + rnd() % 100000;
            if (noisy) {
                sum->clock_offset_ns = (int64_t)(rnd() % 100000) - 50000;
                sum->host_gap_ns = rnd() % 2000000;
                sum->flags = rnd() % 10 == 0 ? ARGUS_SF_PARTIAL : 0;
            }
            assert_int_equal(argus_agg_add_summary(acc, sum), 0);
        }
    }
    return argus_agg_rows_encoded_size(acc);
}

/* Realistic rows take ~12-15 bytes (56 as memory images). Measured: 12.44 bytes per row
 * for the bench's data, 15.29 for the noisier one; the bounds leave ~8 % room. */
static void test_rows_realistic_size(void **state)
{
    (void)state;
    struct argus_aggregate acc;
    for (int noisy = 0; noisy < 2; noisy++) {
        double per = (double)realistic_rows(noisy, &acc) / (double)acc.nrows;
        print_message("realistic rows (%s): %.2f bytes per row\n", noisy ? "noisy" : "bench",
                      per);
        assert_true(per <= (noisy ? 16.5 : 13.5));
        size_t len;
        uint8_t *e = enc(&acc, &len);
        assert_int_equal(argus_agg_sort_rows(&acc), 0);
        check_round_trip(e, len, acc.rows, acc.nrows);
        free(e);
        argus_agg_free(&acc);
    }
}

static uint8_t *put_leb(uint8_t *p, uint64_t v, int len) /* exactly len bytes, canonical */
{
    for (int i = 0; i < len - 1; i++, v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

/* The longest row a decoder can be made to read before it refuses it: every field at its
 * widest valid length (rank delta, a new step 10 bytes on, flags, start, seven step-time
 * fields), then a 10-byte eighth field, far past 32 bits: 75 bytes. Cut to
 * ARGUS_AGGROW_MAX bytes that end where the process cannot read, it must be refused
 * without a read past that end (the decoder's unchecked path used to take it, and read
 * on: 40 bytes past with every field 10 bytes long). */
static void test_rows_long_fields_stay_in_bounds(void **state)
{
    (void)state;
    const long pg = sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
    uint8_t row[128], *q = row;
    q = put_leb(q, (uint64_t)0xfffffff0u << 2 | 3, 5); /* rank, new step, flags follow */
    q = put_leb(q, (uint64_t)1 << 63, 10);             /* steps on */
    q = put_leb(q, 0x80000000u, 5);                    /* flags */
    q = put_leb(q, (uint64_t)1 << 63, 10);             /* start as predicted + 2^62 */
    for (int k = 0; k < 7; k++)
        q = put_leb(q, (uint64_t)1 << 32, 5);          /* +2^31 µs each */
    q = put_leb(q, (uint64_t)1 << 63, 10);             /* the eighth: far past 32 bits */
    assert_int_equal(q - row, 75);
    for (size_t cut = ARGUS_AGGROW_MAX; cut <= 75; cut++) {
        uint8_t *at = map + pg - cut;
        memcpy(at, row, cut);
        struct argus_aggrow_coder c;
        struct argus_agg_row out;
        const uint8_t *p = at;
        argus_aggrow_init(&c);
        assert_int_equal(argus_aggrow_get(&c, &p, map + pg, &out, 1), -EINVAL);
    }
    munmap(map, 2 * (size_t)pg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_extremes_round_trip),
        cmocka_unit_test(test_rows_truncation_and_damage),
        cmocka_unit_test(test_rows_noncanonical),
        cmocka_unit_test(test_rows_realistic_size),
        cmocka_unit_test(test_rows_long_fields_stay_in_bounds),
    };
    return cmocka_run_group_tests_name("reduce_aggregate_rows", tests, setup, teardown);
}
