/* spool.h — zstd-compressed files of wire records (summaries, names, rank info).
 *
 * File layout: a 16-byte header ("ARGSPOOL", u16 version, u8 flags, u8 reserved, u32
 * CRC32C of the first 12 bytes) followed by zstd frames (checksum flag on) of
 * concatenated wire records (wire.h), and marks: zstd skippable frames (magic
 * ARGUS_SPOOL_MARK_MAGIC, 40-byte payload "ARGM", u16 version, u16 kind, u32 level, u64
 * a, b, c, u32 CRC32C of the 36 bytes before it) that every zstd decoder skips.
 *
 * Writer: every argus_spool_flush ends the current zstd frame, so a crash loses at most
 * the records since the last flush and a damaged frame costs only itself. Files of this
 * build have header flag ARGUS_SPOOL_F_FRAMED and end with an END mark (records and
 * bytes written) at argus_spool_close: a framed file without one was cut (a crash, a full
 * disk, a copy of a live spool). Version-1 files of older builds (one zstd stream, flags
 * 0) are read the same (a flag-0 file that ends at a frame end is whole).
 *
 * Reader: every valid record goes to a callback; damage does not stop it. A record that
 * fails its check (magic, length, CRC) is skipped byte by byte to the next record that
 * passes; a zstd frame that fails to decode (a flipped bit in compressed data) is left at
 * the first later frame magic (searched from one byte past the damaged frame's start, so
 * no later frame is skipped) and decoding resumes there. What was skipped is counted in
 * struct argus_spool_loss; records delivered are always whole and checked. Offsets in
 * messages: "offset N" is in the decompressed stream (what the records occupy), "file
 * offset N" in the file.
 *
 * Writers and readers are single-threaded objects; they allocate at open, never per
 * record. Errors come back as negative errno-style codes with one message in errbuf.
 *
 * Implemented in spool_write.c (the writer, argus_spool_segdir) and spool_read.c (the
 * reader, argus_spool_sniff), which share the on-disk pieces in spool_format.h.
 */
#ifndef ARGUS_COMMON_SPOOL_H
#define ARGUS_COMMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"

#define ARGUS_SPOOL_MAGIC "ARGSPOOL"
#define ARGUS_SPOOL_VERSION 1
#define ARGUS_SPOOL_F_FRAMED 0x01 /* header byte 10: frames per flush, END mark at close */
#define ARGUS_SPOOL_MARK_MAGIC 0x184D2A5Au /* one of zstd's skippable-frame magics */

/* What a mark says (kind; a, b, c, level by kind). */
enum argus_spool_mark_kind {
    ARGUS_SPOOL_MARK_END = 1,         /* a: records written, b: their bytes */
    ARGUS_SPOOL_MARK_DOWNSAMPLED = 2, /* steps a..b: summaries of steps near no anomaly
                                       * became thin rows (level 0), and past level 0 only
                                       * steps that are multiples of 2^level were kept; c:
                                       * the steps kept with full detail */
    ARGUS_SPOOL_MARK_DROPPED = 3,     /* steps a..b are gone (the oldest, under the cap),
                                       * c: segment files removed so far */
    ARGUS_SPOOL_MARK_SEGMENT = 4,     /* a: segments 1..a of this spool precede this file
                                       * (in the segment directory, argus_spool_segdir) */
};

struct argus_spool_mark {
    uint32_t kind, level;
    uint64_t a, b, c;
};

struct argus_spool_writer;

/* Create path (O_EXCL: an existing file is -EEXIST, never overwritten); writes the header. */
int argus_spool_open_write(const char *path, struct argus_spool_writer **out, char *errbuf,
                           size_t errlen);
/* The same, name created relative to dirfd (O_EXCL|O_NOFOLLOW); path is only shown in
 * errbuf (the job directory's path joined with name). The writer keeps its own duplicate
 * of dirfd (argus_spool_dirfd) for segment files. */
int argus_spool_open_write_at(int dirfd, const char *name, const char *path,
                              struct argus_spool_writer **out, char *errbuf, size_t errlen);
/* Append one already-encoded wire record. */
int argus_spool_append(struct argus_spool_writer *w, const uint8_t *rec, size_t len);
/* End the current zstd frame (nothing if no record came since the last flush). */
int argus_spool_flush(struct argus_spool_writer *w);
/* Write a mark (the current frame is ended first). kind END is written by close only. */
int argus_spool_mark(struct argus_spool_writer *w, const struct argus_spool_mark *m);
/* Ends the frame, writes the END mark, closes, frees. Safe with NULL. Returns first
 * error seen. */
int argus_spool_close(struct argus_spool_writer *w);
/* Bytes in the file so far (compressed, header and marks included), records appended. */
uint64_t argus_spool_file_bytes(const struct argus_spool_writer *w);
uint64_t argus_spool_records(const struct argus_spool_writer *w);
/* The directory fd and the name the file was created with (valid until close). */
int argus_spool_dirfd(const struct argus_spool_writer *w);
const char *argus_spool_name(const struct argus_spool_writer *w);
const char *argus_spool_path(const struct argus_spool_writer *w);

/* The segment directory of spool name ("summaries.argus" -> "summaries.d"; a name without
 * ".argus" gets ".d" appended) into out[len]; -ENAMETOOLONG. */
int argus_spool_segdir(const char *name, char *out, size_t len);

/* Callback per record: type as in enum argus_rec_type, rec/len the whole record.
 * Return non-zero to stop reading (that value is returned by argus_spool_read). */
typedef int (*argus_spool_record_fn)(void *ctx, int type, const uint8_t *rec, size_t len);
/* Told of each damaged stretch as it is skipped: file_offset where it starts, what (one
 * line: "<path>: ... at offset N"). */
typedef void (*argus_spool_damage_fn)(void *ctx, uint64_t file_offset, const char *what);
/* Told of each mark other than END. */
typedef void (*argus_spool_mark_fn)(void *ctx, const struct argus_spool_mark *m);

struct argus_spool_callbacks {
    argus_spool_record_fn record;
    argus_spool_damage_fn damage; /* may be NULL */
    argus_spool_mark_fn mark;     /* may be NULL */
    void *ctx;
};

/* What one read skipped. Zero everywhere: the file was read whole. */
struct argus_spool_loss {
    uint64_t regions;        /* damaged stretches skipped (each resynchronised after) */
    uint64_t file_bytes;     /* file bytes of zstd frames that could not be decoded */
    uint64_t stream_bytes;   /* decompressed bytes skipped (records that failed checks,
                              * a record cut at the end) */
    uint64_t records_lost;   /* records the END mark counts that were not delivered (0
                              * when unknown: no END mark) */
    uint64_t first_offset;   /* file offset of the first damage or of the cut */
    uint64_t records;        /* records delivered */
    int truncated;           /* the file ends inside a frame or a record, or (framed) with
                              * no END mark */
};

/* Read a spool file, calling cb per valid record, damage and mark. Returns 0 when the
 * whole file was read, even past damage (then loss is non-zero and errbuf names the first
 * damage); a callback's non-zero stop value; negative on an error that stops reading
 * (-EPROTO: not a spool or a bad header; -errno from open/read/seek; -ENOMEM). loss may
 * be NULL. */
int argus_spool_read_cb(const char *path, const struct argus_spool_callbacks *cb,
                        struct argus_spool_loss *loss, char *errbuf, size_t errlen);
/* The same for name relative to dirfd (O_NOFOLLOW); path is for messages. */
int argus_spool_read_at(int dirfd, const char *name, const char *path,
                        const struct argus_spool_callbacks *cb, struct argus_spool_loss *loss,
                        char *errbuf, size_t errlen);
/* Read a spool file, calling fn per valid record. Returns 0 at clean end of file;
 * -EBADMSG with errbuf ("<path>: checksum mismatch at offset N") when anything was
 * skipped or the file was cut (the records after damage were delivered too); -EPROTO for
 * a file that is not a spool; a callback's stop value. */
int argus_spool_read(const char *path, argus_spool_record_fn fn, void *ctx, char *errbuf,
                     size_t errlen);
/* 1 if the first bytes of buf look like a spool file header. */
int argus_spool_sniff(const uint8_t *buf, size_t len);

#endif /* ARGUS_COMMON_SPOOL_H */
