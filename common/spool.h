/* spool.h — zstd-compressed files of wire records (summaries, names, rank info).
 *
 * File layout: an 16-byte header ("ARGSPOOL", u16 version, u16 reserved, u32 CRC32C of
 * the first 12 bytes) followed by one zstd stream (checksum flag on) of concatenated
 * wire records (wire.h). The writer flushes the stream after every argus_spool_flush so a
 * crash loses at most the records since the last flush; the reader decodes up to the first
 * damaged record and reports it by byte offset (offsets are in the decompressed stream).
 *
 * Writers and readers are single-threaded objects; they allocate at open, never per
 * record. Errors come back as negative errno-style codes with one message in errbuf.
 */
#ifndef ARGUS_COMMON_SPOOL_H
#define ARGUS_COMMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"

#define ARGUS_SPOOL_MAGIC "ARGSPOOL"
#define ARGUS_SPOOL_VERSION 1

struct argus_spool_writer;
struct argus_spool_reader;

/* Create path (O_EXCL: an existing file is -EEXIST, never overwritten); writes the header. */
int argus_spool_open_write(const char *path, struct argus_spool_writer **out, char *errbuf,
                           size_t errlen);
/* The same, name created relative to dirfd (O_EXCL|O_NOFOLLOW); path is only shown in
 * errbuf (the job directory's path joined with name). */
int argus_spool_open_write_at(int dirfd, const char *name, const char *path,
                              struct argus_spool_writer **out, char *errbuf, size_t errlen);
/* Append one already-encoded wire record. */
int argus_spool_append(struct argus_spool_writer *w, const uint8_t *rec, size_t len);
int argus_spool_flush(struct argus_spool_writer *w);
/* Ends the zstd frame, closes, frees. Safe with NULL. Returns first error seen. */
int argus_spool_close(struct argus_spool_writer *w);

/* Callback per record: type as in enum argus_rec_type, rec/len the whole record.
 * Return non-zero to stop reading (that value is returned by argus_spool_read). */
typedef int (*argus_spool_record_fn)(void *ctx, int type, const uint8_t *rec, size_t len);

/* Read a spool file, calling fn per valid record. Returns 0 at clean end of file;
 * negative with errbuf ("<path>: checksum mismatch at offset N") on damage; records
 * before the damage were delivered. Returns -EPROTO for a file that is not a spool. */
int argus_spool_read(const char *path, argus_spool_record_fn fn, void *ctx, char *errbuf,
                     size_t errlen);
/* 1 if the first bytes of buf look like a spool file header. */
int argus_spool_sniff(const uint8_t *buf, size_t len);

#endif /* ARGUS_COMMON_SPOOL_H */
