/* test_export.c — the units of flows/: the IPFIX and NetFlow v9 decoder (templates,
 * options, variable-length and enterprise fields, NTP-format times, withdrawal, sequence
 * gaps, truncation, framing), the flow CSV and topology lines, and the step-boundary split
 * (baseline and change-point detection agree; one class; a lost step's double gap is no
 * class; a drifting step time is one level) and the change-point detector itself (changes
 * where the series' mean moves, the same with the run length truncated at 4), the
 * autocorrelation period and the steps tracked with it, the port-counter lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "flows/bocpd.h"
#include "flows/export.h"
#include "flows/period.h"
#include "flows/ports.h"
#include "flows/flowcsv.h"
#include "flows/flows_int.h"
#include "flows/topo.h"

struct buf {
    uint8_t b[2048];
    size_t n;
};

static void u8(struct buf *b, unsigned v) { b->b[b->n++] = (uint8_t)v; }
static void u16(struct buf *b, unsigned v) { u8(b, v >> 8), u8(b, v & 255); }
static void u32(struct buf *b, uint32_t v) { u16(b, v >> 16), u16(b, v & 0xffff); }
static void u64(struct buf *b, uint64_t v) { u32(b, (uint32_t)(v >> 32)), u32(b, (uint32_t)v); }
static void put16(struct buf *b, size_t at, unsigned v)
{
    b->b[at] = (uint8_t)(v >> 8), b->b[at + 1] = (uint8_t)v;
}

struct got {
    struct argus_flow_rec r[8];
    int n;
};

static int sink(void *ctx, const struct argus_flow_rec *r)
{
    struct got *g = ctx;
    if (g->n < 8)
        g->r[g->n++] = *r;
    return 0;
}

#define NTP_OFF 2208988800ull

/* an IPFIX message: template 300 (uS NTP times, v4 addresses, a variable-length field,
 * an enterprise field, octets), then one data record; seq given */
static void ipfix_msg(struct buf *b, uint32_t seq, int with_template, int data)
{
    b->n = 0;
    u16(b, 10), u16(b, 0), u32(b, 1767225600), u32(b, seq), u32(b, 7);
    if (with_template) {
        size_t s = b->n;
        u16(b, 2), u16(b, 0);
        u16(b, 300), u16(b, 7);
        u16(b, 154), u16(b, 8);             /* flowStartMicroseconds */
        u16(b, 155), u16(b, 8);
        u16(b, 8), u16(b, 4);
        u16(b, 12), u16(b, 4);
        u16(b, 82), u16(b, 0xffff);         /* interfaceName, variable length */
        u16(b, 0x8000 | 5), u16(b, 2), u32(b, 9999); /* enterprise field */
        u16(b, 1), u16(b, 8);
        put16(b, s + 2, (unsigned)(b->n - s));
    }
    if (data) {
        size_t s = b->n;
        u16(b, 300), u16(b, 0);
        uint64_t sec = 1767225600ull + NTP_OFF;
        u64(b, sec << 32 | 0x80000000u | 0x7ff);   /* .5 s, low 11 bits set: ignored */
        u64(b, (sec + 1) << 32);
        u8(b, 10), u8(b, 0), u8(b, 0), u8(b, 1);
        u8(b, 10), u8(b, 0), u8(b, 0), u8(b, 2);
        u8(b, 3), u8(b, 'e'), u8(b, 't'), u8(b, 'h');
        u16(b, 42);
        u64(b, 123456);
        put16(b, s + 2, (unsigned)(b->n - s));
    }
    put16(b, 2, (unsigned)b->n);
}

static void test_ipfix_template_and_times(void **state)
{
    (void)state;
    struct argus_flow_decoder *d;
    struct buf b;
    struct got g = {0};
    char err[256];

    assert_int_equal(argus_flow_decoder_create(&d), 0);
    ipfix_msg(&b, 0, 1, 1);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.r[0].t_start_ns, 1767225600ull * 1000000000ull + 500000000ull);
    assert_int_equal(g.r[0].t_end_ns, 1767225601ull * 1000000000ull);
    assert_int_equal(g.r[0].bytes, 123456);
    assert_true(argus_flow_addr_is_v4(&g.r[0].src));
    assert_int_equal(g.r[0].src.b[15], 1);
    assert_int_equal(g.r[0].dst.b[15], 2);
    assert_int_equal(argus_flow_packet_len(b.b, b.n), b.n);
    /* the next message skips 4 data records: counted as lost */
    ipfix_msg(&b, 5, 0, 1);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 1);
    assert_non_null(strstr(err, "sequence gap: 1 expected, 5 seen"));
    assert_int_equal(argus_flow_decoder_stats(d)->lost_records, 4);
    /* another exporter has no template 300: unknown, counted, nothing emitted */
    ipfix_msg(&b, 0, 0, 1);
    assert_int_equal(argus_flow_decode(d, 2, b.b, b.n, sink, &g, err, sizeof err), 1);
    assert_non_null(strstr(err, "unknown template 300"));
    assert_int_equal(g.n, 2);
    assert_int_equal(argus_flow_decoder_stats(d)->sets_unknown, 1);
    argus_flow_decoder_free(d);
}

static void test_ipfix_withdraw_and_truncation(void **state)
{
    (void)state;
    struct argus_flow_decoder *d;
    struct buf b;
    struct got g = {0};
    char err[256];

    assert_int_equal(argus_flow_decoder_create(&d), 0);
    ipfix_msg(&b, 0, 1, 0);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 0);
    /* withdrawal: template 300 with no fields */
    b.n = 0;
    u16(&b, 10), u16(&b, 0), u32(&b, 0), u32(&b, 0), u32(&b, 7);
    u16(&b, 2), u16(&b, 8), u16(&b, 300), u16(&b, 0);
    put16(&b, 2, (unsigned)b.n);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 0);
    assert_int_equal(argus_flow_decoder_stats(d)->withdrawn, 1);
    ipfix_msg(&b, 0, 0, 1);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 1);
    assert_int_equal(g.n, 0);
    /* every truncation of a full message: refused or decoded short, never past the end */
    ipfix_msg(&b, 0, 1, 1);
    for (size_t n = 0; n < b.n; n++) {
        uint8_t cut[2048];
        memcpy(cut, b.b, n);
        int rc = argus_flow_decode(d, 3, cut, n, sink, &g, err, sizeof err);
        assert_true(rc == -EINVAL);   /* the header's length says more than n */
        if (n >= 4) {
            put16(&b, 2, (unsigned)n);   /* a header that agrees: sets overrun or fall short */
            memcpy(cut, b.b, n);
            rc = argus_flow_decode(d, 4 + n, cut, n, sink, &g, err, sizeof err);
            assert_true(rc >= 0 || rc == -EINVAL);
            put16(&b, 2, (unsigned)b.n);
        }
    }
    argus_flow_decoder_free(d);
}

static void test_v9_options_sampling(void **state)
{
    (void)state;
    struct argus_flow_decoder *d;
    struct buf b;
    struct got g = {0};
    char err[256];

    assert_int_equal(argus_flow_decoder_create(&d), 0);
    b.n = 0;
    u16(&b, 9), u16(&b, 3), u32(&b, 3600000), u32(&b, 1767225600), u32(&b, 1), u32(&b, 5);
    size_t s = b.n;   /* options template 260: scope system (4 bytes), SAMPLING_INTERVAL */
    u16(&b, 1), u16(&b, 0), u16(&b, 260), u16(&b, 4), u16(&b, 4);
    u16(&b, 1), u16(&b, 4), u16(&b, 34), u16(&b, 4);
    u16(&b, 0);   /* padding */
    put16(&b, s + 2, (unsigned)(b.n - s));
    s = b.n;      /* template 256: FIRST/LAST_SWITCHED, addresses, bytes */
    u16(&b, 0), u16(&b, 0), u16(&b, 256), u16(&b, 5);
    u16(&b, 22), u16(&b, 4), u16(&b, 21), u16(&b, 4), u16(&b, 8), u16(&b, 4), u16(&b, 12),
        u16(&b, 4), u16(&b, 1), u16(&b, 4);
    put16(&b, s + 2, (unsigned)(b.n - s));
    s = b.n;
    u16(&b, 260), u16(&b, 0), u32(&b, 0), u32(&b, 100);
    put16(&b, s + 2, (unsigned)(b.n - s));
    s = b.n;
    u16(&b, 256), u16(&b, 0), u32(&b, 3599000), u32(&b, 3599500), u32(&b, 0x0a000001),
        u32(&b, 0x0a000002), u32(&b, 4096);
    u16(&b, 0);   /* padding shorter than a record */
    put16(&b, s + 2, (unsigned)(b.n - s));
    assert_int_equal(argus_flow_packet_len(b.b, b.n), b.n);
    assert_int_equal(argus_flow_decode(d, 1, b.b, b.n, sink, &g, err, sizeof err), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.r[0].sampling, 100);
    /* boot = 1767225600000 - 3600000 ms; first = boot + 3599000 ms */
    assert_int_equal(g.r[0].t_start_ns, (1767225600000ull - 1000) * 1000000ull);
    assert_int_equal(g.r[0].t_end_ns, (1767225600000ull - 500) * 1000000ull);
    /* two packets back to back frame at the second header */
    uint8_t two[2048];
    memcpy(two, b.b, b.n);
    memcpy(two + b.n, b.b, b.n);
    assert_int_equal(argus_flow_packet_len(two, 2 * b.n), b.n);
    /* sequence 2 expected; 9 seen: 7 packets lost */
    two[b.n + 12 + 3] = 9;
    assert_int_equal(argus_flow_decode(d, 1, two + b.n, b.n, sink, &g, err, sizeof err), 1);
    assert_int_equal(argus_flow_decoder_stats(d)->lost_packets, 7);
    argus_flow_decoder_free(d);
}

static void test_csv_and_topology(void **state)
{
    (void)state;
    struct argus_flow_rec r;
    char err[256];
    const char *good = "10,20,10.0.0.1,fe80::1,17,5,4791,1000,2";
    assert_int_equal(argus_flow_csv_line(good, strlen(good), &r, err, sizeof err), 1);
    assert_int_equal(r.t_end_ns, 20);
    assert_false(argus_flow_addr_is_v4(&r.dst));
    char line[256];
    size_t n = argus_flow_csv_format(&r, line, sizeof line);
    assert_true(n > 0);
    struct argus_flow_rec r2;
    assert_int_equal(argus_flow_csv_line(line, n - 1, &r2, err, sizeof err), 1);
    assert_memory_equal(&r, &r2, sizeof r);
    const char *bad[] = {"20,10,10.0.0.1,10.0.0.2,17,5,4791,1,1", "1,2,10.0.0.1,nope,17,5,4791,1,1",
                         "1,2,10.0.0.1,10.0.0.2,17,5,99999,1,1", "1,2,3"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(argus_flow_csv_line(bad[i], strlen(bad[i]), &r, err, sizeof err),
                         -EINVAL);
    assert_int_equal(argus_flow_csv_line("t_start_ns,x", 12, &r, err, sizeof err), 0);
    struct argus_topo t;
    argus_topo_init(&t);
    const char *tl = "10.0.0.1,host1,mlx5_0,0,leaf0,p1";
    assert_int_equal(argus_topo_add_line(&t, tl, strlen(tl), err, sizeof err), 1);
    assert_int_equal(argus_topo_add_line(&t, tl, strlen(tl), err, sizeof err), -EEXIST);
    assert_int_equal(argus_topo_add_line(&t, "1,2", 3, err, sizeof err), -EINVAL);
    struct argus_flow_addr a;
    assert_int_equal(argus_flow_addr_parse(&a, "10.0.0.1"), 0);
    assert_non_null(argus_topo_find(&t, &a));
    assert_string_equal(argus_topo_find(&t, &a)->leaf, "leaf0");
    assert_int_equal(argus_topo_find(&t, &a)->rank, -1);
    /* the optional rank column: the rank to NIC map */
    const char *tr = "10.0.0.2,host1,mlx5_1,1,leaf0,p2,17", *tb = "10.0.0.3,h,n,1,l,p,x";
    assert_int_equal(argus_topo_add_line(&t, tr, strlen(tr), err, sizeof err), 1);
    assert_int_equal(argus_flow_addr_parse(&a, "10.0.0.2"), 0);
    assert_int_equal(argus_topo_find(&t, &a)->rank, 17);
    assert_int_equal(argus_topo_add_line(&t, tb, strlen(tb), err, sizeof err), -EINVAL);
    argus_topo_free(&t);
}

static void test_split_gaps(void **state)
{
    (void)state;
    double g[40];
    unsigned char b0[40], b1[40];
    struct fl_bocpd *bd;
    assert_int_equal(fl_bocpd_create(FL_BOCPD_SIGMA, FL_BOCPD_HAZARD, FL_BOCPD_RMAX, &bd), 0);
    /* 8 small gaps (~20 us) then a boundary (~300 ms), jittered */
    for (int i = 0; i < 40; i++)
        g[i] = log(i % 8 == 7 ? 3e8 * (1 + 0.01 * (i % 3)) : 2e4 * (1 + 0.1 * (i % 5)));
    assert_int_equal(fl_split_gaps(bd, g, 40, log(1e6), b0, b1), 0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(b0[i], i % 8 == 7);
        assert_int_equal(b1[i], b0[i]);
    }
    /* the first gap a boundary, then one gap inside each step: alternating levels */
    for (int i = 0; i < 40; i++)
        g[i] = log(i % 2 == 0 ? 2e8 * (1 + 0.02 * (i % 3)) : 5e5 * (1 + 0.05 * (i % 4)));
    assert_int_equal(fl_split_gaps(bd, g, 40, log(1e6), b0, b1), 0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(b0[i], i % 2 == 0);
        assert_int_equal(b1[i], b0[i]);
    }
    /* one class, all above ref: every gap a boundary, one lost step doubling one */
    for (int i = 0; i < 20; i++)
        g[i] = log((i == 9 ? 2 : 1) * 4e8 * (1 + 0.005 * (i % 4)));
    assert_int_equal(fl_split_gaps(bd, g, 20, log(4e7), b0, b1), 0);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(b0[i], 1);
        assert_int_equal(b1[i], 1);
    }
    /* one class below ref: no boundary */
    assert_int_equal(fl_split_gaps(bd, g, 20, log(4e9), b0, b1), 0);
    for (int i = 0; i < 20; i++)
        assert_int_equal(b1[i], 0);
    /* boundaries whose gap grows by a factor 1.5 over four steps (slow steps), small gaps
     * between: the change points cut the boundaries' level, the levels join it again */
    for (int i = 0; i < 40; i++)
        g[i] = log(i % 4 == 3 ? 2e8 * (i >= 16 && i < 32 ? 1.5 : 1) : 3e4 * (1 + 0.1 * (i % 3)));
    assert_int_equal(fl_split_gaps(bd, g, 40, log(1e6), b0, b1), 0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(b0[i], i % 4 == 3);
        assert_int_equal(b1[i], b0[i]);
    }
    fl_bocpd_free(bd);
}

/* the detector alone: a piecewise-constant mean (levels 0, 3, 1, 5 over 30 observations
 * each, noise 0.1) changes exactly at 30, 60, 90, with the run length bounded at 128 and
 * at 4; bad parameters refused */
static void test_bocpd(void **state)
{
    (void)state;
    double x[120];
    unsigned char c[120];
    const double lvl[4] = {0, 3, 1, 5};
    for (int i = 0; i < 120; i++)
        x[i] = lvl[i / 30] + 0.1 * sin(1.7 * i);
    for (size_t rmax = 4; rmax <= 128; rmax += 124) {
        struct fl_bocpd *bd;
        assert_int_equal(fl_bocpd_create(0.3, 1.0 / 64, rmax, &bd), 0);
        fl_bocpd_run(bd, x, 120, 2.0, c);
        for (int i = 0; i < 120; i++)
            assert_int_equal(c[i], i % 30 == 0);
        fl_bocpd_free(bd);
    }
    struct fl_bocpd *bd = NULL;
    assert_int_equal(fl_bocpd_create(0, 0.1, 8, &bd), -EINVAL);
    assert_int_equal(fl_bocpd_create(0.3, 1, 8, &bd), -EINVAL);
    assert_int_equal(fl_bocpd_create(0.3, 0.1, 1, &bd), -EINVAL);
    assert_null(bd);
}

/* the autocorrelation period: a step of 37.4 bins (a burst, then 8 layer bursts of
 * another height) found within half a bin, not its layers' period nor twice it; and the
 * steps tracked with it on bursts whose boundary gap is the longest, a step 1.4 periods
 * long among them: every boundary found, the last step not cut short */
static void test_period(void **state)
{
    (void)state;
    double x[512], r[512 / 3 + 2], peak;
    for (int i = 0; i < 512; i++) {
        double ph = fmod(i, 37.4);
        x[i] = ph < 2 ? 10 : (fmod(ph, 4) < 1 && ph < 34 ? 3 : 0);
    }
    double per = fl_acf_period(x, 512, r, &peak);
    assert_true(fabs(per - 37.4) <= 0.5);
    assert_true(peak > 0.3);
    for (int i = 0; i < 512; i++)
        x[i] = 1;
    assert_true(fl_acf_period(x, 512, r, &peak) == 0);   /* flat: no period */
    struct fl_iv iv[200];
    uint64_t end[64], start[64], want[64];
    size_t n = 0, nw = 0;
    uint64_t t = 1000000, T = 100000;
    for (int s = 0; s < 12; s++) {
        uint64_t len = s == 5 ? 140000 : T;   /* step 5: 1.4 periods */
        for (int k = 0; k < 8; k++)           /* 8 bursts, 4 us gaps inside */
            iv[n++] = (struct fl_iv){t + (uint64_t)k * (len - 20000) / 8,
                                     t + (uint64_t)(k + 1) * (len - 20000) / 8 - 4000};
        want[nw++] = iv[n - 1].te;            /* then a 24 us gap: the boundary */
        t += len;
    }
    size_t ns = fl_track_steps(iv, n, (double)T, end, start, 64);
    assert_int_equal(ns, nw);
    for (size_t i = 0; i < ns; i++)
        assert_int_equal(end[i], want[i]);
}

/* port-counter lines: ns and seconds, header and comment skipped, bad columns refused */
static void test_port_lines(void **state)
{
    (void)state;
    struct argus_ports ps;
    char err[256];
    fl_ports_init(&ps, 2);
    const char *ok[] = {"time,device,port,in_octets,out_octets", "# x",
                        "1767225600000000000,leaf0,p1,10,20", "1767225600.5,leaf0,p1,30,40",
                        "1767225601,leaf0,p2,1,2"};
    int want[] = {0, 0, 1, 1, 0};   /* the last: the table (2 samples) is full */
    for (int i = 0; i < 5; i++)
        assert_int_equal(fl_ports_add_line(&ps, ok[i], strlen(ok[i]), err, sizeof err), want[i]);
    assert_int_equal(ps.n, 1);
    assert_int_equal(ps.dropped, 1);
    assert_true(ps.s[1].t == 1767225600500000000ull);
    const char *bad[] = {"1,leaf0,p1,1", "x,leaf0,p1,1,2", "1,,p1,1,2", "1,l,p,-1,2",
                         "1.1234567891,l,p,1,2"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(fl_ports_add_line(&ps, bad[i], strlen(bad[i]), err, sizeof err),
                         -EINVAL);
    fl_ports_free(&ps);
}

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* the selection-based median and quantile against a full sort, ties and all */
static void test_quantiles(void **state)
{
    (void)state;
    double v[301], w[301], s[301];
    uint32_t x = 12345;
    for (size_t n = 1; n <= 301; n += 7) {
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            v[i] = (double)((x >> 16) % (n < 50 ? 5 : 1000));
        }
        memcpy(s, v, n * sizeof *v);
        qsort(s, n, sizeof *s, cmp_dbl);
        double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
        memcpy(w, v, n * sizeof *v);
        assert_true(fl_median(w, n) == med);
        for (double q = 0; q <= 1.0; q += 0.1) {
            double xq = q * (double)(n - 1);
            size_t i = (size_t)xq;
            double want = i + 1 < n ? s[i] + (xq - (double)i) * (s[i + 1] - s[i]) : s[i];
            memcpy(w, v, n * sizeof *v);
            assert_true(fabs(fl_quantile(w, n, q) - want) < 1e-9);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipfix_template_and_times),
        cmocka_unit_test(test_ipfix_withdraw_and_truncation),
        cmocka_unit_test(test_v9_options_sampling),
        cmocka_unit_test(test_csv_and_topology),
        cmocka_unit_test(test_split_gaps),
        cmocka_unit_test(test_bocpd),
        cmocka_unit_test(test_period),
        cmocka_unit_test(test_port_lines),
        cmocka_unit_test(test_quantiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
