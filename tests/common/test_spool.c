/* test_spool.c — unit tests of common/spool.c: write/read round trip of summaries, names
 * and rank info; a crash after a flush keeps every flushed record; truncated or damaged
 * files deliver the records before the damage and report it by offset; non-spool files,
 * bad headers, O_EXCL and the callback's stop value. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/wire.h"

#define NREC 400

static char dir[256];
static uint8_t recs[NREC][4096]; /* the encoded records, in file order */
static size_t lens[NREC];
static uint64_t offs[NREC + 1];   /* decompressed-stream offset of each record */

struct seen {
    int n;      /* records delivered */
    int bad;    /* a delivered record differed from what was written */
    int stop_at;
};

static int on_record(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct seen *s = ctx;
    if (s->n >= NREC || len != lens[s->n] || memcmp(rec, recs[s->n], len) != 0 ||
        type != rec[6])
        s->bad = 1;
    s->n++;
    return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

/* Records: every 10th a name, one rank info, the rest small random summaries. */
static void make_records(void)
{
    uint64_t st = 77;
    static struct argus_step_summary s;
    offs[0] = 0;
    for (int i = 0; i < NREC; i++) {
        long n;
        if (i % 10 == 0) {
            char name[64];
            snprintf(name, sizeof name, "kernel_%d_%llu", i, (unsigned long long)tg_rand(&st));
            n = argus_name_encode(argus_name_hash(name), name, recs[i], sizeof recs[i]);
        } else if (i == 5) {
            struct argus_rank_info ri = {.rank = 3, .world_size = 8, .device = 1};
            snprintf(ri.host, sizeof ri.host, "node-%d", i);
            n = argus_rankinfo_encode(&ri, recs[i], sizeof recs[i]);
        } else {
            tg_summary(&st, &s, (int)(tg_rand(&st) % 12));
            n = argus_summary_encode(&s, recs[i], sizeof recs[i]);
        }
        assert_true(n > 0);
        lens[i] = (size_t)n;
        offs[i + 1] = offs[i] + lens[i];
    }
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/argus-test-spool-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    make_records();
    return 0;
}

static int teardown(void **state)
{
    char cmd[512];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

/* Write the first n records, flushing every `every` records (0: never), then close. */
static void write_spool(const char *path, int n, int every)
{
    struct argus_spool_writer *w;
    char err[256];
    assert_int_equal(argus_spool_open_write(path, &w, err, sizeof err), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(argus_spool_append(w, recs[i], lens[i]), 0);
        if (every && (i + 1) % every == 0)
            assert_int_equal(argus_spool_flush(w), 0);
    }
    assert_int_equal(argus_spool_close(w), 0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t data[1 << 21];
    *len = fread(data, 1, sizeof data, f);
    fclose(f);
    return data;
}

static void spit(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_roundtrip(void **state)
{
    char path[512], err[512] = "";
    struct seen s = {0};
    (void)state;

    path_of(path, sizeof path, "rt.argus");
    write_spool(path, NREC, 25);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), 0);
    assert_int_equal(s.n, NREC);
    assert_int_equal(s.bad, 0);

    size_t len;
    uint8_t *data = slurp(path, &len);
    assert_int_equal(argus_spool_sniff(data, len), 1);
    assert_memory_equal(data, "ARGSPOOL\x01\x00\x00\x00", 12);
    assert_true(len < offs[NREC]); /* it is compressed */
    assert_int_equal(argus_spool_sniff((const uint8_t *)"ARGS", 4), 0);

    /* O_EXCL: an existing file is not overwritten. */
    struct argus_spool_writer *w = NULL;
    assert_int_equal(argus_spool_open_write(path, &w, err, sizeof err), -EEXIST);
    assert_null(w);
    assert_non_null(strstr(err, path));

    /* An empty spool reads back as zero records. */
    path_of(path, sizeof path, "empty.argus");
    write_spool(path, 0, 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(argus_spool_close(NULL), 0);
}

static void test_stop_value(void **state)
{
    char path[512], err[256];
    struct seen s = {.stop_at = 30};
    (void)state;

    path_of(path, sizeof path, "stop.argus");
    write_spool(path, 100, 0);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), 7);
    assert_int_equal(s.n, 30);
}

/* A writer that dies after a flush: everything flushed is readable, then an error that
 * names the offset of the first lost record. */
static void test_crash_after_flush(void **state)
{
    char path[512], copy[512], err[512] = "";
    struct argus_spool_writer *w;
    (void)state;

    path_of(path, sizeof path, "crash.argus");
    path_of(copy, sizeof copy, "crash-copy.argus");
    assert_int_equal(argus_spool_open_write(path, &w, err, sizeof err), 0);
    for (int i = 0; i < 120; i++) {
        assert_int_equal(argus_spool_append(w, recs[i], lens[i]), 0);
        if (i == 99)
            assert_int_equal(argus_spool_flush(w), 0);
    }
    /* Snapshot the file now, as a crash would leave it (no frame end). */
    size_t len;
    uint8_t *data = slurp(path, &len);
    spit(copy, data, len);
    assert_int_equal(argus_spool_close(w), 0);

    struct seen s = {0};
    int rc = argus_spool_read(copy, on_record, &s, err, sizeof err);
    assert_true(rc < 0);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.n, 100);
    char want[128];
    snprintf(want, sizeof want, "truncated at offset %llu", (unsigned long long)offs[100]);
    if (!strstr(err, want) || !strstr(err, copy))
        fail_msg("message '%s' lacks '%s' or the path", err, want);
}

/* Cut a finished file at many lengths: every read delivers a correct prefix, reports an
 * error naming an offset, and never delivers fewer records for a longer file. */
static void test_truncated_file(void **state)
{
    char path[512], cut[512], err[512];
    (void)state;

    path_of(path, sizeof path, "full.argus");
    path_of(cut, sizeof cut, "cut.argus");
    write_spool(path, NREC, 10);
    size_t len;
    uint8_t *data = slurp(path, &len);
    static uint8_t orig[1 << 21];
    memcpy(orig, data, len);
    int prev = 0;
    for (size_t at = 17; at < len; at += len / 97 + 1) {
        spit(cut, orig, at);
        struct seen s = {0};
        err[0] = '\0';
        int rc = argus_spool_read(cut, on_record, &s, err, sizeof err);
        if (rc >= 0)
            fail_msg("cut at %zu of %zu: no error", at, len);
        assert_int_equal(s.bad, 0);
        assert_true(s.n >= prev);
        prev = s.n;
        if (!strstr(err, "at offset ") || !strstr(err, cut))
            fail_msg("cut at %zu: message '%s'", at, err);
    }
    assert_true(prev > NREC / 2);

    /* Just the header, or less: a header-only file is a truncated spool; 5 bytes of it
     * is not a spool at all. */
    spit(cut, orig, 16);
    struct seen s = {0};
    assert_true(argus_spool_read(cut, on_record, &s, err, sizeof err) < 0);
    assert_int_equal(s.n, 0);
    assert_non_null(strstr(err, "truncated at offset 0"));
    spit(cut, orig, 5);
    assert_int_equal(argus_spool_read(cut, on_record, &s, err, sizeof err), -EPROTO);
}

/* Damage inside the compressed stream: records before it arrive intact, then an error. */
static void test_damaged_file(void **state)
{
    char path[512], bad[512], err[512];
    (void)state;

    path_of(path, sizeof path, "dmg.argus");
    path_of(bad, sizeof bad, "dmg-bad.argus");
    write_spool(path, NREC, 10);
    size_t len;
    uint8_t *data = slurp(path, &len);
    static uint8_t orig[1 << 21];
    memcpy(orig, data, len);
    for (size_t at = 16; at < len; at += len / 41 + 1) {
        memcpy(data, orig, len);
        data[at] ^= 0x5a;
        spit(bad, data, len);
        struct seen s = {0};
        err[0] = '\0';
        int rc = argus_spool_read(bad, on_record, &s, err, sizeof err);
        if (rc >= 0)
            fail_msg("byte %zu damaged: no error (%d records)", at, s.n);
        assert_int_equal(s.bad, 0);
        assert_true(s.n < NREC || strstr(err, "damaged"));
        if (!strstr(err, "at offset "))
            fail_msg("byte %zu: message '%s'", at, err);
    }
}

/* A record that was already bad when written (the zstd stream is fine): the reader
 * delivers everything before it and names its exact offset in the decompressed stream. */
static void test_bad_record_inside(void **state)
{
    char path[512], err[512] = "";
    struct argus_spool_writer *w;
    static uint8_t bad[4096];
    (void)state;

    path_of(path, sizeof path, "badrec.argus");
    assert_int_equal(argus_spool_open_write(path, &w, err, sizeof err), 0);
    for (int i = 0; i < 60; i++) {
        if (i == 42) {
            memcpy(bad, recs[i], lens[i]);
            bad[lens[i] / 2] ^= 0x20;
            assert_int_equal(argus_spool_append(w, bad, lens[i]), 0);
        } else {
            assert_int_equal(argus_spool_append(w, recs[i], lens[i]), 0);
        }
    }
    assert_int_equal(argus_spool_close(w), 0);
    struct seen s = {0};
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), -EBADMSG);
    assert_int_equal(s.n, 42);
    assert_int_equal(s.bad, 0);
    char want[600];
    snprintf(want, sizeof want, "%s: checksum mismatch at offset %llu", path,
             (unsigned long long)offs[42]);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("message '%s', expected it to start with '%s'", err, want);
}

static void test_not_a_spool(void **state)
{
    char path[512], err[512];
    struct seen s = {0};
    (void)state;

    path_of(path, sizeof path, "junk.txt");
    spit(path, (const uint8_t *)"hello, this is not a spool file at all\n", 39);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), -EPROTO);
    assert_non_null(strstr(err, "not an Argus spool file"));
    assert_non_null(strstr(err, path));

    path_of(path, sizeof path, "hdr.argus");
    write_spool(path, 10, 0);
    size_t len;
    uint8_t *data = slurp(path, &len);
    data[8] = 9; /* version */
    spit(path, data, len);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), -EPROTO);
    assert_non_null(strstr(err, "unsupported spool version 9 at offset 8"));
    data[8] = 1;
    data[13] ^= 1; /* header checksum */
    spit(path, data, len);
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), -EPROTO);
    assert_non_null(strstr(err, "header checksum mismatch at offset 12"));
    assert_int_equal(s.n, 0);

    path_of(path, sizeof path, "does-not-exist");
    assert_int_equal(argus_spool_read(path, on_record, &s, err, sizeof err), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_stop_value),
        cmocka_unit_test(test_crash_after_flush),
        cmocka_unit_test(test_truncated_file),
        cmocka_unit_test(test_damaged_file),
        cmocka_unit_test(test_bad_record_inside),
        cmocka_unit_test(test_not_a_spool),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
