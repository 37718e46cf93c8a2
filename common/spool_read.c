/* spool_read.c — the spool reader (spool.h): the damage-tolerant, resynchronising reader
 * of spool files. It decompresses with fixed-size buffers allocated at open (one record at
 * most plus one zstd block, one zstd input block), hands every valid record to a callback,
 * and skips damage: records that fail their check byte by byte, frames that fail to decode
 * to the next frame magic. Never allocates per record; the on-disk pieces it shares with
 * the writer are in spool_format.h.
 */
#include "common/spool.h"
#include "common/errbuf.h"
#include "common/spool_format.h"
#include "common/wire_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

int argus_spool_sniff(const uint8_t *buf, size_t len)
{
    return buf && len >= 8 && memcmp(buf, ARGUS_SPOOL_MAGIC, 8) == 0;
}

/* Largest record any writer produces: a summary with every kernel mode and full sketches
 * (a full rows record is smaller; taken into account all the same). */
static size_t record_max(void)
{
    const size_t s = argus_summary_encoded_max(ARGUS_MAX_KMODES);
    const size_t r = argus_rows_encoded_max(ARGUS_ROWS_PER_RECORD);
    return s > r ? s : r;
}

static int read_some(int fd, uint8_t *buf, size_t cap, size_t *got)
{
    for (;;) {
        ssize_t r = read(fd, buf, cap);
        if (r >= 0) {
            *got = (size_t)r;
            return 0;
        }
        if (errno != EINTR)
            return -errno;
    }
}

struct spool_rd {
    const char *path;
    int fd;
    ZSTD_DCtx *dctx;
    const struct argus_spool_callbacks *cb;
    struct argus_spool_loss *loss;
    char *errbuf;
    size_t errlen;
    size_t rmax;
    /* compressed input: in[ipos..ilen) unconsumed, in[0] at file offset in_off */
    uint8_t *in;
    size_t in_cap, ipos, ilen;
    uint64_t in_off;
    int eof;
    /* decompressed records: rb[start..end) unconsumed, rb[0] at stream offset base */
    uint8_t *rb;
    size_t rb_cap, start, end;
    uint64_t base;
    int framed, saw_end;
    uint64_t end_records;
    int in_frame;         /* inside a zstd frame that began at frame_start */
    uint64_t frame_start;
    int frame_damaged;    /* this frame already cost a damaged stretch */
    int in_dmg;           /* a damaged stretch is open (closed by the next good record) */
    int scanning;         /* looking for a frame magic after undecodable data */
    uint64_t skip_from;   /* file offset where the undecodable data began (UINT64_MAX:
                           * none; a frame whose checksum alone failed) */
    int rec_bad;          /* skipping decompressed bytes to the next good record */
};

static uint64_t fpos(const struct spool_rd *r)
{
    return r->in_off + r->ipos;
}

/* At least n bytes unconsumed in in[] unless the file ends first. Returns how many there
 * are, or negative (read error, errbuf set). n <= in_cap. */
static long ensure(struct spool_rd *r, size_t n)
{
    while (r->ilen - r->ipos < n && !r->eof) {
        size_t got = 0;
        if (r->ipos) {
            memmove(r->in, r->in + r->ipos, r->ilen - r->ipos);
            r->in_off += r->ipos;
            r->ilen -= r->ipos;
            r->ipos = 0;
        }
        int rc = read_some(r->fd, r->in + r->ilen, r->in_cap - r->ilen, &got);
        if (rc < 0) {
            argus_seterr(r->errbuf, r->errlen, "%s: read: %s", r->path, strerror(-rc));
            return rc;
        }
        r->ilen += got;
        r->eof = got == 0;
    }
    return (long)(r->ilen - r->ipos);
}

/* Continue reading at file offset off (back, after a damaged frame). -1 when the file
 * cannot seek (a pipe): reading goes on where it is. */
static int seek_to(struct spool_rd *r, uint64_t off)
{
    if (off >= r->in_off && off <= r->in_off + r->ilen) {
        r->ipos = (size_t)(off - r->in_off);
        return 0;
    }
    if (lseek(r->fd, (off_t)off, SEEK_SET) != (off_t)off)
        return -1;
    r->in_off = off;
    r->ipos = r->ilen = 0;
    r->eof = 0;
    return 0;
}

/* A damaged stretch begins (unless one is open): counted, told, the first one named. */
static void damage(struct spool_rd *r, uint64_t file_off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void damage(struct spool_rd *r, uint64_t file_off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    if (r->in_dmg)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->in_dmg = 1;
    if (r->loss->regions++ == 0 && !r->loss->truncated) {
        r->loss->first_offset = file_off;
        argus_seterr(r->errbuf, r->errlen, "%s: %s", r->path, msg);
    }
    if (r->cb->damage)
        r->cb->damage(r->cb->ctx, file_off, msg);
}

/* Something decoded cleanly again: the damaged stretch, if any, ends here. */
static void good(struct spool_rd *r)
{
    if (r->scanning) {
        if (r->skip_from != UINT64_MAX) /* else nothing undecodable was skipped */
            r->loss->file_bytes += r->frame_start - r->skip_from;
        r->scanning = 0;
    }
    r->in_dmg = 0;
}

static const uint8_t *find_magic(const uint8_t *p, const uint8_t *end)
{
    for (; p + 4 <= end; p++)
        if (p[0] == 'A' && p[1] == 'R' && p[2] == 'G' && p[3] == 'S')
            return p;
    return NULL;
}

/* Deliver every complete record in rb, skipping bytes that are no record. final: the
 * frame ended, nothing more follows these bytes. Returns 0, or a callback's non-zero
 * value. */
static int deliver(struct spool_rd *r, int final)
{
    while (r->end - r->start >= (final ? 1 : ARGUS_WIRE_HDR)) {
        const uint8_t *p = r->rb + r->start;
        size_t avail = r->end - r->start;
        if (!final && avail >= ARGUS_WIRE_HDR && memcmp(p, "ARGS", 4) == 0) {
            size_t plen = get32(p + 8);
            size_t total = ARGUS_WIRE_HDR + plen + ARGUS_WIRE_TRAILER;
            if (total <= r->rmax && total > avail)
                return 0; /* a plausible record not fully here yet */
        }
        char msg[200];
        int type = 0;
        long n = argus_record_peek(p, avail, r->base + r->start, &type, msg, sizeof msg);
        if (n < 0) {
            if (!r->rec_bad) {
                r->rec_bad = 1;
                r->frame_damaged = 1;
                damage(r, r->frame_start, "%s", msg);
            }
            const uint8_t *q = find_magic(p + 1, r->rb + r->end);
            size_t skip = q ? (size_t)(q - p) : avail > 3 && !final ? avail - 3 : avail;
            r->loss->stream_bytes += skip;
            r->start += skip;
            continue;
        }
        r->rec_bad = 0;
        good(r);
        r->loss->records++;
        int stop = r->cb->record ? r->cb->record(r->cb->ctx, type, p, (size_t)n) : 0;
        r->start += (size_t)n;
        if (stop)
            return stop;
    }
    return 0;
}

/* Between frames: a zstd frame (decoding starts), a mark (read), another skippable frame
 * (skipped), else damage (or, while scanning, the next byte). 1: the file ended here; 0:
 * go on; negative: read error. */
static int boundary(struct spool_rd *r)
{
    long have = ensure(r, MARK_FRAME);
    if (have < 0)
        return (int)have;
    if (have == 0)
        return 1;
    const uint8_t *p = r->in + r->ipos;
    uint32_t magic = have >= 4 ? get32(p) : 0;
    if (magic == ZSTD_MAGICNUMBER) {
        r->in_frame = 1;
        r->frame_start = fpos(r);
        r->frame_damaged = 0;
        return 0;
    }
    struct argus_spool_mark m;
    if (magic == ARGUS_SPOOL_MARK_MAGIC && have >= MARK_FRAME && get32(p + 4) == MARK_PAYLOAD &&
        mark_parse(p + 8, &m) == 0) {
        r->frame_start = fpos(r);
        good(r);
        r->ipos += MARK_FRAME;
        if (m.kind == ARGUS_SPOOL_MARK_END) {
            r->saw_end = 1;
            r->end_records = m.a;
        } else if (r->cb->mark) {
            r->cb->mark(r->cb->ctx, &m);
        }
        return 0;
    }
    if (!r->scanning && (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START &&
        magic != ARGUS_SPOOL_MARK_MAGIC && have >= 8) {
        uint64_t skip = 8 + (uint64_t)get32(p + 4); /* not ours: skipped as zstd does */
        while (skip) {
            size_t n = r->ilen - r->ipos < skip ? r->ilen - r->ipos : (size_t)skip;
            r->ipos += n;
            skip -= n;
            if (skip && (have = ensure(r, 1)) <= 0)
                return have < 0 ? (int)have : 1;
        }
        return 0;
    }
    if (!r->scanning) {
        if (have < 4 || (r->eof && have < MARK_FRAME && magic == ARGUS_SPOOL_MARK_MAGIC)) {
            r->loss->truncated = 1;
            if (r->loss->regions == 0) {
                r->loss->first_offset = fpos(r);
                argus_seterr(r->errbuf, r->errlen, "%s: truncated at offset %llu of the file "
                             "(%ld bytes of a frame header)", r->path,
                             (unsigned long long)fpos(r), have);
            }
            r->ipos = r->ilen;
            return 1;
        }
        damage(r, fpos(r), "no zstd frame at offset %llu of the file (damaged data)",
               (unsigned long long)fpos(r));
        r->scanning = 1;
        r->skip_from = fpos(r);
    }
    r->ipos++; /* scanning: the next byte */
    return 0;
}

/* Decode some of the current frame and deliver its records. 1: the file ended inside the
 * frame; 0: go on; a callback's stop value; negative: read error. */
static int in_frame(struct spool_rd *r)
{
    long have = ensure(r, 1);
    if (have < 0)
        return (int)have;
    if (r->start > 0) { /* keep the unconsumed tail at the front: shorter than a record */
        memmove(r->rb, r->rb + r->start, r->end - r->start);
        r->base += r->start;
        r->end -= r->start;
        r->start = 0;
    }
    ZSTD_inBuffer ib = {r->in, r->ilen, r->ipos};
    ZSTD_outBuffer ob = {r->rb, r->rb_cap, r->end};
    size_t z = ZSTD_decompressStream(r->dctx, &ob, &ib);
    size_t produced = ob.pos - r->end;
    r->ipos = ib.pos;
    r->end = ob.pos;
    if (ZSTD_isError(z)) {
        int stop = deliver(r, 1); /* what decoded before: each record is checked */
        if (stop)
            return stop;
        ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
        r->in_frame = 0;
        r->loss->stream_bytes += r->end - r->start;
        r->base += r->end;
        r->start = r->end = 0;
        if (ZSTD_getErrorCode(z) == ZSTD_error_checksum_wrong) {
            /* decoded to its end: every record in it was checked and delivered or
             * counted (its compressed bytes are no loss); the next frame follows */
            if (!r->frame_damaged)
                damage(r, r->frame_start, "checksum of the zstd frame at offset %llu of "
                       "the file wrong", (unsigned long long)r->frame_start);
            if (!r->scanning) {
                r->scanning = 1;
                r->skip_from = UINT64_MAX;
            }
        } else {
            damage(r, r->frame_start, "compressed frame at offset %llu of the file damaged "
                   "(%s); skipped to the next frame", (unsigned long long)r->frame_start,
                   ZSTD_getErrorName(z));
            if (!r->scanning || r->skip_from == UINT64_MAX) {
                r->scanning = 1;
                r->skip_from = r->frame_start;
            }
        }
        /* zstd's input position after an error says nothing: look for the next frame
         * from one byte past this one's start */
        seek_to(r, r->frame_start + 1);
        return 0;
    }
    int stop = deliver(r, z == 0);
    if (stop)
        return stop;
    if (z == 0) { /* the frame ended: its leftover bytes were no record */
        r->loss->stream_bytes += r->end - r->start;
        r->base += r->end;
        r->start = r->end = 0;
        r->in_frame = 0;
        r->rec_bad = 0;
        good(r);
        return 0;
    }
    if (r->eof && r->ipos == r->ilen && produced == 0)
        return 1;
    return 0;
}

static int read_header(struct spool_rd *r, uint8_t hdr[SPOOL_HDR])
{
    size_t hn = 0, got = 0;
    int rc;
    uint8_t want[SPOOL_HDR];

    while (hn < SPOOL_HDR) {
        rc = read_some(r->fd, hdr + hn, SPOOL_HDR - hn, &got);
        if (rc < 0) {
            argus_seterr(r->errbuf, r->errlen, "%s: read: %s", r->path, strerror(-rc));
            return rc;
        }
        if (got == 0)
            break;
        hn += got;
    }
    header_build(want, 0);
    if (hn < 8 || !argus_spool_sniff(hdr, hn)) {
        argus_seterr(r->errbuf, r->errlen, "%s: not an Argus spool file (bad magic at offset 0)",
                     r->path);
        return -EPROTO;
    }
    if (hn < SPOOL_HDR) {
        argus_seterr(r->errbuf, r->errlen, "%s: truncated spool header at offset %zu", r->path,
                     hn);
        return -EPROTO;
    }
    if (memcmp(hdr + 8, want + 8, 2) != 0) {
        argus_seterr(r->errbuf, r->errlen, "%s: unsupported spool version %u at offset 8 (this "
                     "build reads %d)", r->path, (unsigned)(hdr[8] | (hdr[9] << 8)),
                     ARGUS_SPOOL_VERSION);
        return -EPROTO;
    }
    if (get32(hdr + 12) != argus_crc32c(hdr, 12)) {
        argus_seterr(r->errbuf, r->errlen, "%s: spool header checksum mismatch at offset 12",
                     r->path);
        return -EPROTO;
    }
    r->framed = (hdr[10] & ARGUS_SPOOL_F_FRAMED) != 0;
    return 0;
}

static int read_fd(struct spool_rd *r)
{
    uint8_t hdr[SPOOL_HDR];
    int rc = read_header(r, hdr);

    if (rc)
        return rc;
    r->rmax = record_max();
    r->in_cap = ZSTD_DStreamInSize();
    if (r->in_cap < MARK_FRAME)
        r->in_cap = MARK_FRAME;
    r->rb_cap = r->rmax + ZSTD_DStreamOutSize();
    r->in = malloc(r->in_cap);
    r->rb = malloc(r->rb_cap);
    r->dctx = ZSTD_createDCtx();
    if (!r->in || !r->rb || !r->dctx) {
        argus_seterr(r->errbuf, r->errlen, "%s: out of memory", r->path);
        return -ENOMEM;
    }
    r->in_off = SPOOL_HDR;
    for (;;) {
        rc = r->in_frame ? in_frame(r) : boundary(r);
        if (rc < 0 || rc > 1)
            return rc;
        if (rc == 1)
            break;
    }
    if (r->in_frame) /* the file ends inside a frame: a record cut, if anything */
        r->loss->stream_bytes += r->end - r->start;
    if (r->scanning && r->skip_from != UINT64_MAX)
        r->loss->file_bytes += fpos(r) - r->skip_from;
    if (r->in_frame || (r->framed && !r->saw_end)) {
        if (!r->loss->truncated && r->loss->regions == 0) {
            r->loss->first_offset = fpos(r);
            argus_seterr(r->errbuf, r->errlen, "%s: truncated at offset %llu (%s; records after "
                         "the last flush are lost)", r->path,
                         (unsigned long long)(r->base + r->start),
                         r->in_frame ? "the zstd frame does not end"
                                     : "no end mark: the writer did not close the file");
        }
        r->loss->truncated = 1;
    }
    if (r->saw_end && r->end_records > r->loss->records)
        r->loss->records_lost = r->end_records - r->loss->records;
    return 0;
}

int argus_spool_read_at(int dirfd, const char *name, const char *path,
                        const struct argus_spool_callbacks *cb, struct argus_spool_loss *loss,
                        char *errbuf, size_t errlen)
{
    struct argus_spool_loss dummy;
    struct spool_rd r = {.path = path, .fd = -1, .cb = cb, .errbuf = errbuf, .errlen = errlen};
    int rc;

    if (!name || !path || !cb)
        return -EINVAL;
    r.loss = loss ? loss : &dummy;
    memset(r.loss, 0, sizeof *r.loss);
    if (errbuf && errlen)
        errbuf[0] = '\0';
    r.fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | (dirfd == AT_FDCWD ? 0 : O_NOFOLLOW));
    if (r.fd < 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s: cannot open: %s", path, strerror(-rc));
        return rc;
    }
    rc = read_fd(&r);
    ZSTD_freeDCtx(r.dctx);
    free(r.in);
    free(r.rb);
    close(r.fd);
    return rc;
}

int argus_spool_read_cb(const char *path, const struct argus_spool_callbacks *cb,
                        struct argus_spool_loss *loss, char *errbuf, size_t errlen)
{
    return argus_spool_read_at(AT_FDCWD, path, path, cb, loss, errbuf, errlen);
}

int argus_spool_read(const char *path, argus_spool_record_fn fn, void *ctx, char *errbuf,
                     size_t errlen)
{
    const struct argus_spool_callbacks cb = {.record = fn, .ctx = ctx};
    struct argus_spool_loss loss;
    int rc;

    if (!path)
        return -EINVAL;
    rc = argus_spool_read_cb(path, &cb, &loss, errbuf, errlen);
    if (rc == 0 && (loss.regions || loss.truncated || loss.records_lost))
        rc = -EBADMSG;
    return rc;
}
