/* flowcsv.c — the flow CSV line (flows/flowcsv.h). No allocation; never reads past len. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/errbuf.h"
#include "flows/flowcsv.h"

static const char *const cols[] = {"t_start_ns", "t_end_ns", "src_ip",   "dst_ip",
                                   "proto",      "src_port", "dst_port", "bytes",
                                   "packets",    "obs_point", "in_if",   "out_if"};

/* decimal in [0, max]; an empty field is 0 when empty_ok */
static int num(const char *s, size_t n, uint64_t max, int empty_ok, uint64_t *out)
{
    uint64_t v = 0;

    if (n == 0) {
        *out = 0;
        return empty_ok ? 0 : -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int argus_flow_csv_line(const char *line, size_t len, struct argus_flow_rec *r, char *errbuf,
                        size_t errlen)
{
    const char *f[13];
    size_t fl[13];
    unsigned nf = 0;
    size_t start = 0;

    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#' || (len >= 10 && memcmp(line, "t_start_ns", 10) == 0))
        return 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == ',') {
            if (nf == 13) {
                argus_seterr(errbuf, errlen, "more than 12 columns");
                return -EINVAL;
            }
            f[nf] = line + start, fl[nf] = i - start, nf++;
            start = i + 1;
        }
    }
    if (nf != 9 && nf != 12) {
        argus_seterr(errbuf, errlen, "%u columns (9 or 12: t_start_ns,...,packets"
                     "[,obs_point,in_if,out_if])", nf);
        return -EINVAL;
    }
    memset(r, 0, sizeof *r);
    r->sampling = 1;
    static const uint64_t max[12] = {UINT64_MAX, UINT64_MAX, 0, 0, 255, 65535, 65535,
                                     UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
                                     UINT32_MAX};
    uint64_t v[12] = {0};
    for (unsigned i = 0; i < nf; i++) {
        if (i == 2 || i == 3) {
            char ip[64];
            if (fl[i] == 0 || fl[i] >= sizeof ip) {
                argus_seterr(errbuf, errlen, "%s: not an IP address", cols[i]);
                return -EINVAL;
            }
            memcpy(ip, f[i], fl[i]);
            ip[fl[i]] = '\0';
            if (argus_flow_addr_parse(i == 2 ? &r->src : &r->dst, ip) != 0) {
                argus_seterr(errbuf, errlen, "%s: \"%s\" is not an IP address", cols[i], ip);
                return -EINVAL;
            }
            continue;
        }
        int rc = num(f[i], fl[i], max[i], i >= 9, &v[i]);
        if (rc) {
            argus_seterr(errbuf, errlen, "%s: \"%.*s\" is not an integer in [0, %" PRIu64 "]",
                         cols[i], (int)(fl[i] > 40 ? 40 : fl[i]), f[i], max[i]);
            return -EINVAL;
        }
    }
    if (v[1] < v[0]) {
        argus_seterr(errbuf, errlen, "t_end_ns %" PRIu64 " before t_start_ns %" PRIu64, v[1],
                     v[0]);
        return -EINVAL;
    }
    r->t_start_ns = v[0], r->t_end_ns = v[1];
    r->proto = (uint8_t)v[4], r->src_port = (uint16_t)v[5], r->dst_port = (uint16_t)v[6];
    r->bytes = v[7], r->packets = v[8];
    r->obs_point = (uint32_t)v[9], r->in_if = (uint32_t)v[10], r->out_if = (uint32_t)v[11];
    return 1;
}

size_t argus_flow_csv_format(const struct argus_flow_rec *r, char *out, size_t outlen)
{
    char s[64], d[64];

    argus_flow_addr_str(&r->src, s, sizeof s);
    argus_flow_addr_str(&r->dst, d, sizeof d);
    int n = snprintf(out, outlen,
                     "%" PRIu64 ",%" PRIu64 ",%s,%s,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%u,%u,%u\n",
                     r->t_start_ns, r->t_end_ns, s, d, r->proto, r->src_port, r->dst_port,
                     r->bytes, r->packets, r->obs_point, r->in_if, r->out_if);
    return n < 0 || (size_t)n >= outlen ? 0 : (size_t)n;
}
