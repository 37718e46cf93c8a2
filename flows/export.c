/* export.c — the IPFIX / NetFlow v9 decoder (flows/export.h). Must not allocate after
 * create, must not read a byte past the packet, never prints: problems are counted and the
 * first one of a packet is written to the caller's errbuf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/hash.h"
#include "flows/export.h"

#define VARLEN 0xffffu
#define NTP_UNIX_OFFSET 2208988800ull

struct fld {
    uint16_t type, len; /* len VARLEN: IPFIX variable length */
    uint32_t pen;       /* enterprise number; 0: IANA */
};

struct tmpl {
    uint64_t exporter;
    uint32_t domain;
    uint16_t id, nfields, nscope;
    uint8_t version, used;     /* used: 0 free, 1 a template, 2 withdrawn */
    uint32_t minlen; /* bytes of a record, variable-length fields counted as 1 */
    struct fld f[ARGUS_FLOW_TMPL_FIELDS];
};

struct src {
    uint64_t exporter;
    uint32_t domain;
    uint8_t version, used, seq_known;
    uint32_t next_seq;
    uint32_t sampling;      /* from an options record; 0: none said */
    uint64_t sys_init_ms;   /* IPFIX systemInitTimeMilliseconds; 0: none */
};

struct argus_flow_decoder {
    struct tmpl t[ARGUS_FLOW_TMPL_MAX];
    struct src s[ARGUS_FLOW_SRC_MAX];
    struct argus_flow_decode_stats st;
};

/* one packet's context */
struct pkt {
    struct argus_flow_decoder *d;
    struct src *src;
    uint8_t version;
    uint64_t export_ms;   /* export time, ms since the epoch */
    uint64_t sysup_ms;    /* v9 header sysUptime */
    uint32_t data_records; /* data records seen (IPFIX sequence accounting) */
    int uncountable;       /* a set of an unknown template: records not countable */
    int problems;
    char *errbuf;
    size_t errlen;
    argus_flow_sink sink;
    void *ctx;
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t rdn(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void problem(struct pkt *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct pkt *k, const char *fmt, ...)
{
    va_list ap;

    if (k->problems++ == 0 && k->errbuf && k->errlen) {
        va_start(ap, fmt);
        vsnprintf(k->errbuf, k->errlen, fmt, ap);
        va_end(ap);
    }
}

int argus_flow_decoder_create(struct argus_flow_decoder **out)
{
    struct argus_flow_decoder *d = calloc(1, sizeof *d);

    if (!d)
        return -ENOMEM;
    *out = d;
    return 0;
}

void argus_flow_decoder_free(struct argus_flow_decoder *d) { free(d); }

const struct argus_flow_decode_stats *argus_flow_decoder_stats(const struct argus_flow_decoder *d)
{
    return &d->st;
}

/* Open addressing over fixed tables; no allocation. */
static struct src *src_get(struct argus_flow_decoder *d, uint64_t ex, uint32_t dom, uint8_t v)
{
    uint64_t h = argus_mix64(ex ^ ((uint64_t)dom << 32 | v));

    for (unsigned i = 0; i < ARGUS_FLOW_SRC_MAX; i++) {
        struct src *s = &d->s[(h + i) % ARGUS_FLOW_SRC_MAX];
        if (!s->used) {
            memset(s, 0, sizeof *s);
            s->used = 1, s->exporter = ex, s->domain = dom, s->version = v;
            return s;
        }
        if (s->exporter == ex && s->domain == dom && s->version == v)
            return s;
    }
    return NULL;
}

static struct tmpl *tmpl_find(struct argus_flow_decoder *d, const struct pkt *k, uint16_t id,
                              int create)
{
    uint64_t h = argus_mix64(k->src->exporter ^ ((uint64_t)k->src->domain << 24) ^
                             ((uint64_t)id << 8 | k->version));

    struct tmpl *hole = NULL;   /* the first withdrawn slot (used 2): reused by create */

    for (unsigned i = 0; i < ARGUS_FLOW_TMPL_MAX; i++) {
        struct tmpl *t = &d->t[(h + i) % ARGUS_FLOW_TMPL_MAX];
        if (!t->used)
            return create ? (hole ? hole : t) : NULL;
        if (t->used == 2) {
            if (!hole)
                hole = t;
            continue;
        }
        if (t->exporter == k->src->exporter && t->domain == k->src->domain && t->id == id &&
            t->version == k->version)
            return t;
    }
    return create ? hole : NULL;
}

/* Parse one (options) template record at p (n bytes left); returns its length, 0 when it
 * does not fit or is refused (counted). */
static size_t template_rec(struct pkt *k, const uint8_t *p, size_t n, int options)
{
    struct tmpl tmp;
    size_t off;
    unsigned nf, nscope = 0;

    memset(&tmp, 0, sizeof tmp);
    if (n < 4)
        return 0;
    tmp.id = rd16(p);
    if (k->version == 9 && options) {
        /* v9: id, scope length (bytes), option length (bytes) */
        if (n < 6)
            return 0;
        unsigned sl = rd16(p + 2), ol = rd16(p + 4);
        if (sl % 4 || ol % 4 || 6 + (size_t)sl + ol > n) {
            problem(k, "options template %u: scope/option lengths overrun the flowset (%zu bytes)",
                    tmp.id, n);
            k->d->st.sets_bad++;
            return 0;
        }
        nscope = sl / 4, nf = (sl + ol) / 4, off = 6;
    } else {
        nf = rd16(p + 2), off = 4;
        if (options) {
            if (n < 6)
                return 0;
            nscope = rd16(p + 4), off = 6;
        }
    }
    if (tmp.id < 256) {
        problem(k, "template id %u below 256 (%u fields)", tmp.id, nf);
        k->d->st.sets_bad++;
        return 0;
    }
    if (nf == 0 && k->version == 10) {   /* withdrawal */
        struct tmpl *t = tmpl_find(k->d, k, tmp.id, 0);
        if (t)
            t->used = 2;  /* withdrawn: lookups probe past it */
        k->d->st.withdrawn++;
        return off;
    }
    if (nf > ARGUS_FLOW_TMPL_FIELDS || nscope > nf) {
        problem(k, "template %u has %u fields (at most 64, scope within)", tmp.id, nf);
        k->d->st.sets_bad++;
        return 0;
    }
    for (unsigned i = 0; i < nf; i++) {
        if (off + 4 > n) {
            problem(k, "template %u: field %u past the end of its set", tmp.id, i);
            k->d->st.sets_bad++;
            return 0;
        }
        struct fld *f = &tmp.f[i];
        f->type = rd16(p + off), f->len = rd16(p + off + 2);
        off += 4;
        if (k->version == 10 && (f->type & 0x8000)) {
            if (off + 4 > n) {
                problem(k, "template %u: enterprise number of field %u past the end",
                        tmp.id, i);
                k->d->st.sets_bad++;
                return 0;
            }
            f->type &= 0x7fff;
            f->pen = rd32(p + off);
            off += 4;
        }
        if (f->len == VARLEN && k->version == 10)
            tmp.minlen += 1;
        else if (f->len == 0 || f->len == VARLEN) {
            problem(k, "template %u: field %u has length %u", tmp.id, i, f->len);
            k->d->st.sets_bad++;
            return 0;
        } else
            tmp.minlen += f->len;
    }
    tmp.nfields = (uint16_t)nf, tmp.nscope = (uint16_t)nscope;
    struct tmpl *t = tmpl_find(k->d, k, tmp.id, 1);
    if (!t) {
        problem(k, "template %u: template table full (%d)", tmp.id, ARGUS_FLOW_TMPL_MAX);
        k->d->st.table_full++;
        return off;
    }
    tmp.used = 1, tmp.exporter = k->src->exporter, tmp.domain = k->src->domain;
    tmp.version = k->version;
    *t = tmp;
    k->d->st.templates++;
    return off;
}

static void template_set(struct pkt *k, const uint8_t *p, size_t n, int options)
{
    size_t off = 0;

    while (n - off >= 4) {
        size_t used = template_rec(k, p + off, n - off, options);
        if (used == 0)
            return;
        off += used;
    }
}

static uint64_t ntp_to_ns(uint64_t v, int micro)
{
    uint64_t sec = v >> 32, frac = v & 0xffffffffull;

    if (micro)
        frac &= ~0x7ffull;
    if (sec < NTP_UNIX_OFFSET)
        return 0;
    return (sec - NTP_UNIX_OFFSET) * 1000000000ull + ((frac * 1000000000ull) >> 32);
}

/* One data record; *rlen its length (0: does not fit). */
static int data_rec(struct pkt *k, const struct tmpl *t, const uint8_t *p, size_t n,
                    size_t *rlen)
{
    struct argus_flow_rec r;
    size_t off = 0;
    uint64_t ts = 0, te = 0, up_s = 0, up_e = 0, d_s = 0, d_e = 0, oct_d = 0, oct_t = 0;
    uint64_t pk_d = 0, pk_t = 0, sampling = 0, sys_init = 0;
    int have_up = 0, have_delta = 0, have_oct_d = 0, have_pk_d = 0;
    int options = t->nscope > 0;

    memset(&r, 0, sizeof r);
    for (unsigned i = 0; i < t->nfields; i++) {
        const struct fld *f = &t->f[i];
        size_t len = f->len;
        if (len == VARLEN) {
            if (off + 1 > n)
                return *rlen = 0, 0;
            len = p[off++];
            if (len == 255) {
                if (off + 2 > n)
                    return *rlen = 0, 0;
                len = rd16(p + off);
                off += 2;
            }
        }
        if (off + len > n)
            return *rlen = 0, 0;
        const uint8_t *v = p + off;
        off += len;
        if (f->pen != 0 || (options && i < t->nscope))
            continue;
        uint64_t x = len <= 8 ? rdn(v, (unsigned)len) : 0;
        switch (f->type) {
        case 1: oct_d = x, have_oct_d = 1; break;
        case 85: oct_t = x; break;
        case 2: pk_d = x, have_pk_d = 1; break;
        case 86: pk_t = x; break;
        case 4: r.proto = (uint8_t)x; break;
        case 7: r.src_port = (uint16_t)x; break;
        case 11: r.dst_port = (uint16_t)x; break;
        case 8: if (len == 4) argus_flow_addr_v4(&r.src, v); break;
        case 12: if (len == 4) argus_flow_addr_v4(&r.dst, v); break;
        case 27: if (len == 16) memcpy(r.src.b, v, 16); break;
        case 28: if (len == 16) memcpy(r.dst.b, v, 16); break;
        case 10: r.in_if = (uint32_t)x; break;
        case 14: r.out_if = (uint32_t)x; break;
        case 138: r.obs_point = (uint32_t)x; break;
        case 150: ts = x * 1000000000ull; break;
        case 151: te = x * 1000000000ull; break;
        case 152: ts = x * 1000000ull; break;
        case 153: te = x * 1000000ull; break;
        case 154: ts = ntp_to_ns(x, 1); break;
        case 155: te = ntp_to_ns(x, 1); break;
        case 156: ts = ntp_to_ns(x, 0); break;
        case 157: te = ntp_to_ns(x, 0); break;
        case 158: d_s = x, have_delta = 1; break;
        case 159: d_e = x, have_delta = 1; break;
        case 22: up_s = x, have_up = 1; break;
        case 21: up_e = x, have_up = 1; break;
        case 34: case 305: sampling = x; break;
        case 160: sys_init = x; break;
        default: break;
        }
    }
    *rlen = off;
    if (options) {
        k->d->st.options_records++;
        if (sampling)
            k->src->sampling = (uint32_t)(sampling > UINT32_MAX ? UINT32_MAX : sampling);
        if (sys_init)
            k->src->sys_init_ms = sys_init;
        return 0;
    }
    if (!ts && !te) {
        if (have_up && k->version == 9 && k->export_ms >= k->sysup_ms) {
            uint64_t boot = k->export_ms - k->sysup_ms;
            ts = (boot + up_s) * 1000000ull, te = (boot + up_e) * 1000000ull;
        } else if (have_up && k->src->sys_init_ms) {
            ts = (k->src->sys_init_ms + up_s) * 1000000ull;
            te = (k->src->sys_init_ms + up_e) * 1000000ull;
        } else if (have_delta && k->export_ms * 1000ull >= d_s && k->export_ms * 1000 >= d_e) {
            ts = (k->export_ms * 1000ull - d_s) * 1000ull;
            te = (k->export_ms * 1000ull - d_e) * 1000ull;
        }
    }
    if (!ts && te)
        ts = te;
    if (!te && ts)
        te = ts;
    if (!ts) {
        k->d->st.untimed++;
        problem(k, "record of template %u has no usable time", t->id);
        return 0;
    }
    if (te < ts)
        te = ts;
    r.t_start_ns = ts, r.t_end_ns = te;
    r.bytes = have_oct_d ? oct_d : oct_t;
    r.packets = have_pk_d ? pk_d : pk_t;
    r.sampling = sampling ? (uint32_t)(sampling > UINT32_MAX ? UINT32_MAX : sampling)
                          : (k->src->sampling ? k->src->sampling : 1);
    k->d->st.records++;
    return k->sink ? k->sink(k->ctx, &r) : 0;
}

static int data_set(struct pkt *k, uint16_t id, const uint8_t *p, size_t n)
{
    const struct tmpl *t = tmpl_find(k->d, k, id, 0);
    size_t off = 0;

    if (!t) {
        k->d->st.sets_unknown++;
        k->uncountable = 1;
        problem(k, "data set of unknown template %u (%zu bytes skipped)", id, n);
        return 0;
    }
    /* the record's minimum length is > 0 (field lengths >= 1), so the loop ends; what is
     * left shorter than a record is padding */
    while (t->minlen > 0 && n - off >= t->minlen) {
        size_t rl;
        int rc = data_rec(k, t, p + off, n - off, &rl);
        if (rc < 0)
            return rc;
        if (rl == 0) {
            k->d->st.sets_bad++;
            problem(k, "data set of template %u: record at set byte %zu overruns the set", id,
                    off);
            return 0;
        }
        k->data_records++;
        off += rl;
    }
    return 0;
}

static void sequence(struct pkt *k, uint32_t seq, uint32_t advance, int per_packet)
{
    struct src *s = k->src;

    if (s->seq_known) {
        int32_t gap = (int32_t)(seq - s->next_seq);
        if (gap > 0) {
            k->d->st.seq_gaps++;
            if (per_packet)
                k->d->st.lost_packets += (uint32_t)gap;
            else
                k->d->st.lost_records += (uint32_t)gap;
            problem(k, "sequence gap: %u expected, %u seen", s->next_seq, seq);
        } else if (gap < 0) {
            k->d->st.reordered++;
        }
    }
    s->next_seq = seq + advance;
    s->seq_known = !k->uncountable;
}

int argus_flow_decode(struct argus_flow_decoder *d, uint64_t exporter, const uint8_t *p,
                      size_t n, argus_flow_sink sink, void *ctx, char *errbuf, size_t errlen)
{
    struct pkt k;
    size_t off, end, hdr;
    uint32_t seq, domain;

    memset(&k, 0, sizeof k);
    k.d = d, k.errbuf = errbuf, k.errlen = errlen, k.sink = sink, k.ctx = ctx;
    if (errbuf && errlen)
        errbuf[0] = '\0';
    d->st.packets++;
    if (n < 2) {
        d->st.packets_bad++;
        argus_seterr(errbuf, errlen, "packet of %zu bytes", n);
        return -EINVAL;
    }
    k.version = (uint8_t)rd16(p);
    if (rd16(p) == 10) {
        hdr = 16;
        if (n < hdr || rd16(p + 2) < hdr || rd16(p + 2) > n) {
            d->st.packets_bad++;
            argus_seterr(errbuf, errlen, "IPFIX message length %u, %zu bytes there",
                         n >= 4 ? rd16(p + 2) : 0, n);
            return -EINVAL;
        }
        end = rd16(p + 2);
        k.export_ms = (uint64_t)rd32(p + 4) * 1000ull;
        seq = rd32(p + 8), domain = rd32(p + 12);
    } else if (rd16(p) == 9) {
        hdr = 20;
        if (n < hdr) {
            d->st.packets_bad++;
            argus_seterr(errbuf, errlen, "NetFlow v9 header truncated (%zu bytes)", n);
            return -EINVAL;
        }
        end = n;
        k.sysup_ms = rd32(p + 4);
        k.export_ms = (uint64_t)rd32(p + 8) * 1000ull;
        seq = rd32(p + 12), domain = rd32(p + 16);
    } else {
        d->st.packets_bad++;
        argus_seterr(errbuf, errlen, "version %u (neither NetFlow v9 nor IPFIX)", rd16(p));
        return -EINVAL;
    }
    k.src = src_get(d, exporter, domain, k.version);
    if (!k.src) {
        d->st.table_full++;
        argus_seterr(errbuf, errlen, "more than %d exporters and domains", ARGUS_FLOW_SRC_MAX);
        return -EINVAL;
    }
    for (off = hdr; end - off >= 4;) {
        uint16_t id = rd16(p + off), len = rd16(p + off + 2);
        if (len < 4 || len > end - off) {
            d->st.sets_bad++;
            problem(&k, "set %u of length %u overruns the packet", id, len);
            break;
        }
        const uint8_t *body = p + off + 4;
        size_t bl = (size_t)len - 4;
        if ((k.version == 10 && id == 2) || (k.version == 9 && id == 0))
            template_set(&k, body, bl, 0);
        else if ((k.version == 10 && id == 3) || (k.version == 9 && id == 1))
            template_set(&k, body, bl, 1);
        else if (id >= 256) {
            int rc = data_set(&k, id, body, bl);
            if (rc < 0)
                return rc;
        } else {
            d->st.sets_bad++;
            problem(&k, "set id %u reserved (%u bytes skipped)", id, len);
        }
        off += len;
    }
    if (k.version == 10)
        sequence(&k, seq, k.data_records, 0);
    else
        sequence(&k, seq, 1, 1);
    return k.problems;
}

size_t argus_flow_packet_len(const uint8_t *p, size_t n)
{
    if (n < 4)
        return 0;
    if (rd16(p) == 10) {
        size_t len = rd16(p + 2);
        return len >= 16 && len <= n ? len : 0;
    }
    if (rd16(p) != 9 || n < 20)
        return 0;
    size_t off = 20;
    while (n - off >= 4 && rd16(p + off) != 9) {
        size_t len = rd16(p + off + 2);
        if (len < 4 || len > n - off)
            return n;  /* the decoder names the bad flowset */
        off += len;
    }
    return off;
}
