/* wire.c — framing of wire records (wire.h: magic, version, type, length, CRC32C) and the
 * kernel-name and rank-info records; the step-summary record is in wire_summary.c. Every
 * field is written byte by byte in little-endian order (never a struct memcpy), so the
 * format does not depend on the host's layout or padding. Decoders trust nothing: every
 * read is bounds-checked and every failure names an offset. No allocation.
 *
 * Name payload:     u64 hash, u16 len, len bytes (no NUL, len <= ARGUS_NAME_MAX)
 * Rank-info payload: u32 rank, u32 world_size, i32 device, u32 pid, 8 x u16 coords,
 *                    u64 started_ns, u8 len, len bytes of host (len < ARGUS_HOST_MAX),
 *                    then (absent in records of older builds, which decode with none)
 *                    u8 n_groups (<= ARGUS_MAX_COMM_GROUPS), u32 groups_dropped and per
 *                    group u64 id, u32 family, u32 size, u32 index, u8 kind,
 *                    then (absent when not probed, and in records of older builds)
 *                    the placement: u8 flags, u16 gpu_numa + 1, u16 cpu_numa + 1 (0:
 *                    unknown), and u8 len + bytes of gpu_bus, nic and cpuset
 */
#include "common/wire.h"
#include "common/errbuf.h"
#include "common/wire_io.h"
#include "common/wire_rows.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RANKINFO_BASE (4 * 4 + 8 * 2 + 8 + 1)
#define COMM_GROUP_BYTES (8 + 4 + 4 + 4 + 1)
#define PLACE_BYTES_MAX (1 + 2 + 2 + ARGUS_PLACE_BUS_MAX + ARGUS_PLACE_NIC_MAX + \
                         ARGUS_PLACE_CPUS_MAX)
#define RANKINFO_MAX (RANKINFO_BASE + ARGUS_HOST_MAX + 1 + 4 + \
                      ARGUS_MAX_COMM_GROUPS * COMM_GROUP_BYTES + PLACE_BYTES_MAX)
#define NAME_PAYLOAD_MAX (8 + 2 + ARGUS_NAME_MAX)

/* Header now, length and checksum when the payload is done (rec_finish). */
void argus_wire_rec_start(struct wbuf *w, uint16_t type)
{
    put32(w, ARGUS_WIRE_MAGIC);
    put16(w, ARGUS_WIRE_VERSION);
    put16(w, type);
    put32(w, 0);
}

long argus_wire_rec_finish(struct wbuf *w)
{
    store32(w->p + 8, (uint32_t)(w->pos - ARGUS_WIRE_HDR));
    uint32_t crc = argus_crc32c(w->p, w->pos);
    put32(w, crc);
    return (long)w->pos;
}

long argus_name_encode(uint64_t hash, const char *name, uint8_t *buf, size_t cap)
{
    if (!name || !buf)
        return -EINVAL;
    size_t n = strnlen(name, ARGUS_NAME_MAX);
    if (ARGUS_WIRE_HDR + 8 + 2 + n + ARGUS_WIRE_TRAILER > cap)
        return -ENOSPC;
    struct wbuf w = {buf, 0, cap};
    argus_wire_rec_start(&w, ARGUS_REC_NAME);
    put64(&w, hash);
    put16(&w, (uint16_t)n);
    memcpy(w.p + w.pos, name, n);
    w.pos += n;
    return argus_wire_rec_finish(&w);
}

/* A placement string: u8 len, len bytes (len < max). */
static void put_pstr(struct wbuf *w, const char *s, size_t max)
{
    size_t n = strnlen(s, max - 1);

    put8(w, (uint8_t)n);
    memcpy(w->p + w->pos, s, n);
    w->pos += n;
}

/* The rank info's planned steps go after its placement: present when either is set, or
 * when the environment's plan, which follows them, is. */
static int has_env_plan(const struct argus_rank_info *ri)
{
    return ri->env_planned_steps != 0;
}

static int has_plan(const struct argus_rank_info *ri)
{
    return ri->planned_steps || ri->planned_at_ns || has_env_plan(ri);
}

static size_t place_bytes(const struct argus_placement *p, int plan)
{
    if (!p->flags && !plan)
        return 0;
    return 5 + 3 + strnlen(p->gpu_bus, ARGUS_PLACE_BUS_MAX - 1) +
           strnlen(p->nic, ARGUS_PLACE_NIC_MAX - 1) + strnlen(p->cpuset, ARGUS_PLACE_CPUS_MAX - 1);
}

long argus_rankinfo_encode(const struct argus_rank_info *ri, uint8_t *buf, size_t cap)
{
    if (!ri || !buf)
        return -EINVAL;
    size_t n = strnlen(ri->host, ARGUS_HOST_MAX - 1);
    if (ri->n_groups > ARGUS_MAX_COMM_GROUPS)
        return -EINVAL;
    if (ARGUS_WIRE_HDR + RANKINFO_BASE + n + 1 + 4 + ri->n_groups * COMM_GROUP_BYTES +
        place_bytes(&ri->place, has_plan(ri)) + (has_plan(ri) ? 16 : 0) +
        (has_env_plan(ri) ? 8 : 0) + ARGUS_WIRE_TRAILER > cap)
        return -ENOSPC;
    struct wbuf w = {buf, 0, cap};
    argus_wire_rec_start(&w, ARGUS_REC_JOBINFO);
    put32(&w, ri->rank);
    put32(&w, ri->world_size);
    put32(&w, (uint32_t)ri->device);
    put32(&w, ri->pid);
    put_coords(&w, &ri->coords);
    put64(&w, ri->started_ns);
    put8(&w, (uint8_t)n);
    memcpy(w.p + w.pos, ri->host, n);
    w.pos += n;
    put8(&w, (uint8_t)ri->n_groups);
    put32(&w, ri->groups_dropped);
    for (uint32_t i = 0; i < ri->n_groups; i++) {
        const struct argus_comm_group *g = &ri->groups[i];
        put64(&w, g->id);
        put32(&w, g->family);
        put32(&w, g->size);
        put32(&w, g->index);
        put8(&w, g->kind);
    }
    if (ri->place.flags || has_plan(ri)) {
        const struct argus_placement *p = &ri->place;
        put8(&w, p->flags);
        put16(&w, (uint16_t)(p->gpu_numa + 1));
        put16(&w, (uint16_t)(p->cpu_numa + 1));
        put_pstr(&w, p->gpu_bus, ARGUS_PLACE_BUS_MAX);
        put_pstr(&w, p->nic, ARGUS_PLACE_NIC_MAX);
        put_pstr(&w, p->cpuset, ARGUS_PLACE_CPUS_MAX);
    }
    if (has_plan(ri)) {
        put64(&w, ri->planned_steps);
        put64(&w, ri->planned_at_ns);
    }
    if (has_env_plan(ri))
        put64(&w, ri->env_planned_steps);
    return argus_wire_rec_finish(&w);
}

/* ---- reader ------------------------------------------------------------------------ */

/* A placement string into out[max]: 0, or -EBADMSG (errbuf) when too long or with a NUL. */
static int get_pstr(struct rbuf *r, char *out, size_t max, const char *what, char *errbuf,
                    size_t errlen)
{
    size_t at = r->pos;
    uint8_t n = get8(r);

    if (r->bad)
        return 0;
    if (n >= max) {
        argus_seterr(errbuf, errlen, "rank info: placement %s of %u bytes at offset %zu, at "
                     "most %zu", what, n, at, max - 1);
        return -EBADMSG;
    }
    if (!need(r, n)) /* truncated: rec_close names the offset */
        return 0;
    if (memchr(r->p + r->pos, '\0', n)) {
        argus_seterr(errbuf, errlen, "rank info: NUL byte inside the placement %s at offset %zu",
                     what, r->pos);
        return -EBADMSG;
    }
    memcpy(out, r->p + r->pos, n);
    out[n] = '\0';
    r->pos += n;
    return 0;
}

static size_t payload_max(int type)
{
    switch (type) {
    case ARGUS_REC_SUMMARY: return argus_wire_summary_payload_max();
    case ARGUS_REC_NAME: return NAME_PAYLOAD_MAX;
    case ARGUS_REC_JOBINFO: return RANKINFO_MAX;
    case ARGUS_REC_ROWS: return argus_rows_encoded_max(ARGUS_ROWS_PER_RECORD) -
                                ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER;
    default: return 0;
    }
}

long argus_record_peek(const uint8_t *buf, size_t len, uint64_t base_offset, int *type,
                       char *errbuf, size_t errlen)
{
    unsigned long long off = (unsigned long long)base_offset;

    if (!buf || len < ARGUS_WIRE_HDR) {
        argus_seterr(errbuf, errlen, "truncated record at offset %llu: %zu of %d header bytes",
               off, buf ? len : 0, ARGUS_WIRE_HDR);
        return -EBADMSG;
    }
    uint32_t magic = load32(buf);
    if (magic != ARGUS_WIRE_MAGIC) {
        argus_seterr(errbuf, errlen, "bad magic at offset %llu: 0x%08x", off, magic);
        return -EBADMSG;
    }
    uint16_t version = load16(buf + 4);
    if (version < ARGUS_WIRE_VERSION_MIN || version > ARGUS_WIRE_VERSION) {
        argus_seterr(errbuf, errlen,
               "unsupported version %u at offset %llu (this build reads %d to %d)", version,
               off + 4, ARGUS_WIRE_VERSION_MIN, ARGUS_WIRE_VERSION);
        return -EPROTO;
    }
    uint16_t t = load16(buf + 6);
    size_t pmax = payload_max(t);
    if (pmax == 0) {
        argus_seterr(errbuf, errlen, "unknown record type %u at offset %llu", t, off + 6);
        return -EPROTO;
    }
    uint32_t plen = load32(buf + 8);
    if (plen > pmax) {
        argus_seterr(errbuf, errlen,
               "bad record length at offset %llu: payload of %u bytes, at most %zu", off + 8,
               plen, pmax);
        return -EBADMSG;
    }
    size_t total = ARGUS_WIRE_HDR + (size_t)plen + ARGUS_WIRE_TRAILER;
    if (len < total) {
        argus_seterr(errbuf, errlen, "truncated record at offset %llu: %zu of %zu bytes", off, len,
               total);
        return -EBADMSG;
    }
    uint32_t want = load32(buf + total - ARGUS_WIRE_TRAILER);
    uint32_t got = argus_crc32c(buf, total - ARGUS_WIRE_TRAILER);
    if (want != got) {
        argus_seterr(errbuf, errlen, "checksum mismatch at offset %llu: record says 0x%08x, "
               "content gives 0x%08x", off, want, got);
        return -EBADMSG;
    }
    if (type)
        *type = t;
    return (long)total;
}

/* Check the header of rec (type and length agree with len) and set up a payload cursor. */
int argus_wire_rec_open(const uint8_t *rec, size_t len, int type, const char *what,
                        struct rbuf *r, char *errbuf, size_t errlen)
{
    if (!rec || len < ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER) {
        argus_seterr(errbuf, errlen, "%s: truncated record at offset 0: %zu bytes", what,
               rec ? len : 0);
        return -EBADMSG;
    }
    unsigned version = load16(rec + 4);
    if (load32(rec) != ARGUS_WIRE_MAGIC || version < ARGUS_WIRE_VERSION_MIN ||
        version > ARGUS_WIRE_VERSION) {
        argus_seterr(errbuf, errlen, "%s: bad magic or version at offset 0", what);
        return -EBADMSG;
    }
    if (load16(rec + 6) != type) {
        argus_seterr(errbuf, errlen, "%s: record type %u at offset 6, expected %d", what,
               load16(rec + 6), type);
        return -EINVAL;
    }
    uint32_t plen = load32(rec + 8);
    if ((size_t)plen != len - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER) {
        argus_seterr(errbuf, errlen, "%s: payload length %u at offset 8 disagrees with record "
               "size %zu", what, plen, len);
        return -EBADMSG;
    }
    r->p = rec;
    r->version = version;
    r->pos = ARGUS_WIRE_HDR;
    r->end = ARGUS_WIRE_HDR + plen;
    r->bad = 0;
    r->bad_varint = 0;
    r->bad_at = 0;
    return 0;
}

/* After decoding: the payload must have been exactly consumed. */
int argus_wire_rec_close(const struct rbuf *r, const char *what, char *errbuf, size_t errlen)
{
    if (r->bad) {
        argus_seterr(errbuf, errlen, "%s: %s at offset %zu", what,
                     r->bad_varint ? "varint longer than 64 bits" : "payload ends early",
                     r->bad_at);
        return -EBADMSG;
    }
    if (r->pos != r->end) {
        argus_seterr(errbuf, errlen, "%s: %zu trailing payload bytes at offset %zu", what,
               r->end - r->pos, r->pos);
        return -EBADMSG;
    }
    return 0;
}

int argus_name_decode(const uint8_t *rec, size_t len, uint64_t *hash, char *name,
                      char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = argus_wire_rec_open(rec, len, ARGUS_REC_NAME, "name", &r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!hash || !name)
        return -EINVAL;
    *hash = get64(&r);
    size_t at = r.pos;
    uint16_t n = get16(&r);
    if (!r.bad && n > ARGUS_NAME_MAX) {
        argus_seterr(errbuf, errlen, "name: length %u at offset %zu, at most %d", n, at,
               ARGUS_NAME_MAX);
        return -EBADMSG;
    }
    if (!r.bad && need(&r, n)) {
        if (memchr(r.p + r.pos, '\0', n)) {
            argus_seterr(errbuf, errlen, "name: NUL byte inside the name at offset %zu", r.pos);
            return -EBADMSG;
        }
        memcpy(name, r.p + r.pos, n);
        name[n] = '\0';
        r.pos += n;
    }
    return argus_wire_rec_close(&r, "name", errbuf, errlen);
}

int argus_rankinfo_decode(const uint8_t *rec, size_t len, struct argus_rank_info *out,
                          char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = argus_wire_rec_open(rec, len, ARGUS_REC_JOBINFO, "rank info", &r, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    out->rank = get32(&r);
    out->world_size = get32(&r);
    out->device = (int32_t)get32(&r);
    out->pid = get32(&r);
    get_coords(&r, &out->coords);
    out->started_ns = get64(&r);
    size_t at = r.pos;
    uint8_t n = get8(&r);
    if (!r.bad && n >= ARGUS_HOST_MAX) {
        argus_seterr(errbuf, errlen, "rank info: host name of %u bytes at offset %zu, at most %d",
               n, at, ARGUS_HOST_MAX - 1);
        return -EBADMSG;
    }
    if (!r.bad && need(&r, n)) {
        if (memchr(r.p + r.pos, '\0', n)) {
            argus_seterr(errbuf, errlen, "rank info: NUL byte inside the host name at offset %zu",
                   r.pos);
            return -EBADMSG;
        }
        memcpy(out->host, r.p + r.pos, n);
        out->host[n] = '\0';
        r.pos += n;
    }
    if (!r.bad && r.pos < r.end) { /* memberships (absent in older records) */
        at = r.pos;
        uint8_t ng = get8(&r);
        if (!r.bad && ng > ARGUS_MAX_COMM_GROUPS) {
            argus_seterr(errbuf, errlen, "rank info: %u communicator groups at offset %zu, "
                         "at most %d", ng, at, ARGUS_MAX_COMM_GROUPS);
            return -EBADMSG;
        }
        out->groups_dropped = get32(&r);
        for (uint8_t i = 0; i < ng && !r.bad; i++) {
            struct argus_comm_group *g = &out->groups[i];
            g->id = get64(&r);
            g->family = get32(&r);
            g->size = get32(&r);
            g->index = get32(&r);
            g->kind = get8(&r);
        }
        out->n_groups = r.bad ? 0 : ng;
    }
    if (!r.bad && r.pos < r.end) { /* placement (absent when not probed) */
        struct argus_placement *p = &out->place;
        p->flags = get8(&r);
        p->gpu_numa = (int16_t)(get16(&r) - 1);
        p->cpu_numa = (int16_t)(get16(&r) - 1);
        if (get_pstr(&r, p->gpu_bus, sizeof p->gpu_bus, "GPU bus id", errbuf, errlen) ||
            get_pstr(&r, p->nic, sizeof p->nic, "NIC", errbuf, errlen) ||
            get_pstr(&r, p->cpuset, sizeof p->cpuset, "CPU set", errbuf, errlen))
            return -EBADMSG;
        if (r.bad)
            memset(p, 0, sizeof *p);
    }
    if (!r.bad && r.pos < r.end) { /* planned steps (absent when never told, older builds) */
        out->planned_steps = get64(&r);
        out->planned_at_ns = get64(&r);
        if (r.bad)
            out->planned_steps = out->planned_at_ns = 0;
    }
    if (!r.bad && r.pos < r.end) { /* ARGUS_TOTAL_STEPS (absent when unset, older builds) */
        out->env_planned_steps = get64(&r);
        if (r.bad)
            out->env_planned_steps = 0;
    }
    return argus_wire_rec_close(&r, "rank info", errbuf, errlen);
}
