/* progress.h — argus-analyze's progress line for long offline work: files and bytes read,
 * ranks seen, the file being read, then the stages after reading (building the store,
 * analysing, writing the report). Only when the stream's fd is a terminal (isatty) and
 * not switched off: one line rewritten in place ("\r", erase to the end of line), at most
 * every 100 ms, erased before any other line is printed (argus_progress_clear) and at the
 * end; elsewhere (a file, a pipe, a CI log) nothing at all is written, so the output is
 * byte for byte what it is without progress. No global state: the caller owns the struct.
 */
#ifndef ARGUS_IMPORT_PROGRESS_H
#define ARGUS_IMPORT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct argus_progress {
    int fd;            /* where the line goes (stderr's fd) */
    int on;            /* fd is a terminal and progress was wanted */
    int shown;         /* a line is on the terminal now */
    uint64_t bytes;    /* read so far (files done) */
    size_t files;      /* files done */
    uint32_t ranks;    /* ranks seen */
    uint64_t last_ns;  /* CLOCK_MONOTONIC of the latest line */
};

/* Progress on fd when want is set and fd is a terminal; otherwise every call is a no-op. */
void argus_progress_init(struct argus_progress *p, int fd, int want);
/* Reading file name (size bytes, 0 when unknown) begins. p may be NULL. */
void argus_progress_file(struct argus_progress *p, const char *name, uint64_t size);
/* A file is done: size bytes more read, ranks seen so far. p may be NULL. */
void argus_progress_done(struct argus_progress *p, uint64_t size, uint32_t ranks);
/* A stage after reading ("analysing 16 ranks"), shown at once. p may be NULL. */
void argus_progress_stage(struct argus_progress *p, const char *what);
/* Erase the line (before another line is printed, and at the end). p may be NULL. */
void argus_progress_clear(struct argus_progress *p);

#endif /* ARGUS_IMPORT_PROGRESS_H */
