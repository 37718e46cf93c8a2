/* test_spool.c — unit tests of common/spool_write.c and common/spool_read.c: write/read
 * round trip of summaries, names
 * and rank info; a crash after a flush keeps every flushed record; truncated or damaged
 * files deliver the records before the damage and report it by offset; one flipped bit
 * anywhere costs at most the frame it is in: reading resumes at the next frame, every
 * record after it arrives and the loss is counted; version-1 files of older builds (one
 * zstd stream, no end mark) still read; marks round-trip; non-spool files, bad headers,
 * O_EXCL and the callback's stop value. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "common/spool.h"
#include "common/wire.h"

#define NREC 400

static char dir[256];
static uint8_t recs[NREC][4096]; /* the encoded records, in file order */
static size_t lens[NREC];
static uint64_t offs[NREC + 1];   /* decompressed-stream offset of each record */

struct seen {
    int n;      /* records delivered */
    int bad;    /* a delivered record is none written, or came out of order */
    int stop_at;
    int next;   /* index after the last record matched */
    int gaps;   /* records written that were skipped before a delivered one */
};

/* Records arrive in file order, possibly with gaps (damage skipped). */
static int on_record(void *ctx, int type, const uint8_t *rec, size_t len)
{
    struct seen *s = ctx;
    int j = s->next;
    while (j < NREC && (len != lens[j] || memcmp(rec, recs[j], len) != 0))
        j++;
    if (j >= NREC || type != rec[6])
        s->bad = 1;
    else {
        s->gaps += j - s->next;
        s->next = j + 1;
    }
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
    assert_memory_equal(data, "ARGSPOOL\x01\x00\x01\x00", 12); /* flag: framed */
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
    assert_int_equal(s.n, 59); /* every record but the bad one: reading resumes after it */
    assert_int_equal(s.gaps, 1);
    assert_int_equal(s.bad, 0);
    char want[600];
    snprintf(want, sizeof want, "%s: checksum mismatch at offset %llu", path,
             (unsigned long long)offs[42]);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("message '%s', expected it to start with '%s'", err, want);
}


struct marks {
    int n;
    struct argus_spool_mark m[8];
    int damages;
};

static void on_mark(void *ctx, const struct argus_spool_mark *m)
{
    struct marks *k = ctx;
    if (k->n < 8)
        k->m[k->n] = *m;
    k->n++;
}

static void on_damage(void *ctx, uint64_t off, const char *what)
{
    struct marks *k = ctx;
    (void)off;
    assert_non_null(what);
    k->damages++;
}

struct both {
    struct seen s;
    struct marks k;
};

static int both_record(void *ctx, int type, const uint8_t *rec, size_t len)
{
    return on_record(&((struct both *)ctx)->s, type, rec, len);
}

static void both_mark(void *ctx, const struct argus_spool_mark *m)
{
    on_mark(&((struct both *)ctx)->k, m);
}

static void both_damage(void *ctx, uint64_t off, const char *what)
{
    on_damage(&((struct both *)ctx)->k, off, what);
}

static const struct argus_spool_callbacks both_cb = {both_record, both_damage, both_mark, NULL};

static int read_both(const char *path, struct both *b, struct argus_spool_loss *loss, char *err,
                     size_t errlen)
{
    struct argus_spool_callbacks cb = both_cb;
    memset(b, 0, sizeof *b);
    cb.ctx = b;
    return argus_spool_read_cb(path, &cb, loss, err, errlen);
}

/* One flipped bit in the middle of a spool (issue 16, item 6): the old reader stopped at
 * it. Now every record after the damaged frame is read, what was lost is counted (the end
 * mark says how many records were written) and the first damage is named. Then every
 * position of the file, one bit each: never a wrong record, at most one frame lost. */
static void test_bitflip_resync(void **state)
{
    char path[512], bad[512], err[512];
    struct argus_spool_loss loss;
    struct both b;
    (void)state;

    path_of(path, sizeof path, "flip.argus");
    path_of(bad, sizeof bad, "flip-bad.argus");
    write_spool(path, NREC, 10); /* 40 frames of 10 records */
    size_t len;
    uint8_t *data = slurp(path, &len);
    static uint8_t orig[1 << 21];
    memcpy(orig, data, len);

    memcpy(data, orig, len);
    data[len / 2] ^= 0x10;
    spit(bad, data, len);
    assert_int_equal(read_both(bad, &b, &loss, err, sizeof err), 0);
    assert_int_equal(b.s.bad, 0);
    assert_int_equal(b.s.next, NREC); /* the last record arrived */
    assert_true(b.s.gaps > 0 && b.s.gaps <= 10);
    assert_true(loss.regions >= 1);
    assert_int_equal(loss.records, (uint64_t)b.s.n);
    assert_int_equal(loss.records_lost, (uint64_t)b.s.gaps);
    assert_int_equal(loss.truncated, 0);
    assert_true(loss.first_offset > 16 && loss.first_offset <= len / 2);
    assert_true(b.k.damages >= 1);
    if (!strstr(err, bad) || !strstr(err, "offset"))
        fail_msg("message '%s'", err);
    struct seen s = {0};
    assert_int_equal(argus_spool_read(bad, on_record, &s, err, sizeof err), -EBADMSG);
    assert_int_equal(s.n, b.s.n);

    for (size_t at = 16; at < len; at += len / 211 + 1) {
        memcpy(data, orig, len);
        data[at] ^= (uint8_t)(1u << (at % 8));
        spit(bad, data, len);
        int rc = read_both(bad, &b, &loss, err, sizeof err);
        if (rc != 0)
            fail_msg("bit at %zu: rc %d (%s)", at, rc, err);
        if (b.s.bad || b.s.gaps > 10)
            fail_msg("bit at %zu: wrong record or %d lost", at, b.s.gaps);
        /* A few bits change nothing a reader can tell (a zstd frame header's window size:
         * the frame decodes to the same bytes, and the checksum covers only those): then
         * every record must have arrived. */
        if (!loss.regions && !loss.truncated && (b.s.n != NREC || b.s.gaps))
            fail_msg("bit at %zu: damage not seen", at);
        if (b.s.next < NREC - 10) /* all but (damage in) the last frame */
            fail_msg("bit at %zu: reading stopped after record %d", at, b.s.next);
    }
}

/* Cut mid-record: the records before the cut arrive, the file is reported truncated. */
static void test_cut_mid_record(void **state)
{
    char path[512], cut[512], err[512];
    struct argus_spool_loss loss;
    struct both b;
    (void)state;

    path_of(path, sizeof path, "cutrec.argus");
    path_of(cut, sizeof cut, "cutrec-cut.argus");
    write_spool(path, NREC, 0); /* one frame */
    size_t len;
    uint8_t *data = slurp(path, &len);
    spit(cut, data, len * 2 / 3);
    assert_int_equal(read_both(cut, &b, &loss, err, sizeof err), 0);
    assert_int_equal(b.s.bad, 0);
    assert_int_equal(b.s.gaps, 0);
    assert_true(b.s.n > 0 && b.s.n < NREC);
    assert_int_equal(loss.truncated, 1);
    assert_int_equal(loss.regions, 0);
    assert_non_null(strstr(err, "truncated at offset"));
}

/* A spool as builds before frames per flush wrote it: flags 0, one zstd stream, no end
 * mark. It reads whole with no loss; a flipped bit in it costs the rest of the stream
 * (there is no later frame) but is counted, and the records before it arrive. */
static void test_old_format(void **state)
{
    char path[512], err[512];
    struct argus_spool_loss loss;
    struct both b;
    static uint8_t raw[NREC * 4096], file[1 << 21];
    size_t rawlen = 0;
    (void)state;

    for (int i = 0; i < NREC; i++) {
        memcpy(raw + rawlen, recs[i], lens[i]);
        rawlen += lens[i];
    }
    memcpy(file, "ARGSPOOL\x01\x00\x00\x00", 12);
    uint32_t crc = argus_crc32c(file, 12);
    for (int i = 0; i < 4; i++)
        file[12 + i] = (uint8_t)(crc >> (8 * i));
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    assert_non_null(cc);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t z = ZSTD_compress2(cc, file + 16, sizeof file - 16, raw, rawlen);
    ZSTD_freeCCtx(cc);
    assert_false(ZSTD_isError(z));
    path_of(path, sizeof path, "old.argus");
    spit(path, file, 16 + z);
    assert_int_equal(read_both(path, &b, &loss, err, sizeof err), 0);
    assert_int_equal(b.s.n, NREC);
    assert_int_equal(b.s.bad, 0);
    assert_int_equal(loss.regions + loss.truncated + loss.records_lost, 0);

    file[16 + z / 2] ^= 0x04;
    spit(path, file, 16 + z);
    assert_int_equal(read_both(path, &b, &loss, err, sizeof err), 0);
    assert_int_equal(b.s.bad, 0);
    assert_true(b.s.n < NREC);
    assert_true(loss.regions >= 1);
}

/* Marks: written between frames, delivered in order, ignored by the record callback. */
static void test_marks(void **state)
{
    char path[512], err[256];
    struct argus_spool_writer *w;
    struct argus_spool_loss loss;
    struct both b;
    (void)state;

    path_of(path, sizeof path, "marks.argus");
    assert_int_equal(argus_spool_open_write(path, &w, err, sizeof err), 0);
    const struct argus_spool_mark seg = {ARGUS_SPOOL_MARK_SEGMENT, 0, 3, 0, 0};
    const struct argus_spool_mark dn = {ARGUS_SPOOL_MARK_DOWNSAMPLED, 2, 100, 199, 7};
    assert_int_equal(argus_spool_mark(w, &seg), 0);
    for (int i = 0; i < 20; i++)
        assert_int_equal(argus_spool_append(w, recs[i], lens[i]), 0);
    assert_int_equal(argus_spool_mark(w, &dn), 0); /* ends the open frame first */
    for (int i = 20; i < 30; i++)
        assert_int_equal(argus_spool_append(w, recs[i], lens[i]), 0);
    const struct argus_spool_mark end = {ARGUS_SPOOL_MARK_END, 0, 0, 0, 0};
    assert_int_equal(argus_spool_mark(w, &end), -EINVAL);
    assert_int_equal(argus_spool_records(w), 30);
    assert_true(argus_spool_file_bytes(w) > 16);
    assert_int_equal(argus_spool_close(w), 0);
    assert_int_equal(read_both(path, &b, &loss, err, sizeof err), 0);
    assert_int_equal(b.s.n, 30);
    assert_int_equal(b.s.gaps, 0);
    assert_int_equal(b.k.n, 2);
    assert_memory_equal(&b.k.m[0], &seg, sizeof seg);
    assert_memory_equal(&b.k.m[1], &dn, sizeof dn);
    assert_int_equal(loss.regions + loss.truncated + loss.records_lost, 0);

    char d[64];
    assert_int_equal(argus_spool_segdir("summaries.argus", d, sizeof d), 0);
    assert_string_equal(d, "summaries.d");
    assert_int_equal(argus_spool_segdir("x", d, sizeof d), 0);
    assert_string_equal(d, "x.d");
    assert_int_equal(argus_spool_segdir("summaries.argus", d, 5), -ENAMETOOLONG);
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
        cmocka_unit_test(test_bitflip_resync),
        cmocka_unit_test(test_cut_mid_record),
        cmocka_unit_test(test_old_format),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_not_a_spool),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
