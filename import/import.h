/* import.h — argus-analyze's importers: they turn saved data into step summaries for the
 * job store, through the same summariser (tracer/summarizer.c) a live run uses.
 *
 * - Kineto / PyTorch-profiler Chrome-trace JSON (plain or gzip), one file per rank:
 *   streamed with YAJL on 64 KB buffers (no DOM), events kept as compact tables, then fed
 *   step by step through the summariser (import/kineto.c parses, import/kineto_feed.c feeds);
 *   tables past a memory limit are spilled to a temporary file in time-sorted runs and
 *   summarised from a merge of them (import/kineto_spill.c), so memory does not grow with the
 *   trace's size.
 * - Argus spool files (summaries.argus): wire records straight into the store.
 * - steps.csv in Argus's format (docs/REPORT_SCHEMA.md): one summary per row (step times and
 *   phase times only; no kernels); the minimum is step,rank and start_ns,end_ns or
 *   duration_ms.
 * - Trainer logs (Megatron-LM, tqdm, MLPerf, modded-nanogpt, DeepSpeed-Chat): per-rank
 *   iteration times through one table of line formats (import/steplog.h).
 *
 * Importers never exit or print: errors come back as negative errno values with one line
 * in errbuf naming the file (and the byte offset where it applies). Single-threaded.
 */
#ifndef ARGUS_IMPORT_IMPORT_H
#define ARGUS_IMPORT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "store/jobstore.h"
#include "common/types.h"

enum argus_import_format {
    ARGUS_FMT_UNKNOWN = 0,
    ARGUS_FMT_KINETO,    /* JSON object or array (possibly gzip) */
    ARGUS_FMT_SPOOL,     /* ARGSPOOL header */
    ARGUS_FMT_STEPS_CSV, /* "step,rank,start_ns,..." header line */
};

/* Detect a file's format from its first bytes (decompressing gzip). */
int argus_import_detect(const char *path, char *errbuf, size_t errlen);
const char *argus_import_format_name(int fmt);

/* Receivers of what an importer produces (valid only during the call). */
struct argus_import_sink {
    void (*summary)(void *ctx, const struct argus_step_summary *s);
    void (*name)(void *ctx, uint64_t hash, const char *name);
    void *ctx;
};

/* What a Kineto import found, for messages, tests and clock alignment. */
#define ARGUS_KINETO_MAX_COLL 4096
struct argus_kineto_info {
    int32_t rank;            /* -1 when unknown */
    int32_t world_size;      /* 0 when unknown */
    int32_t device;          /* first kernel's device; -1 when unknown */
    int rank_from_name;      /* 1: rank taken from the file name */
    uint32_t pg_count;       /* process groups in distributedInfo.pg_config */
    uint32_t pg_kinds;       /* bits 1 << kind of the TP(1)/PP(2)/DP(3)/EP(4) groups that
                                gave coords (pg_desc naming the kind, holding the rank) */
    struct argus_coords coords; /* from those groups; sizes 0 when unknown. Set on every
                                   summary when pg_kinds != 0 */
    uint64_t events;         /* trace events seen */
    uint64_t kernels;        /* kernel + memcpy + memset events */
    uint64_t nccl_kernels;   /* kernels named nccl* / rccl* */
    uint64_t steps;          /* summaries produced */
    uint64_t first_step, last_step;
    uint64_t skipped;        /* events of unknown types, skipped */
    uint32_t unknown_types;  /* distinct unknown categories */
    uint64_t malformed;      /* events with missing or wrong-typed fields, skipped */
    uint64_t bad_times;      /* kernels, steps and annotations with a ts or dur that is
                                negative, not a number of µs or past the bounds (dur at
                                most a day, ts + baseTimeNanoseconds in [0, 2^62) ns),
                                dropped */
    uint64_t bad_kernels;    /* of them, kernel/memcpy/memset events */
    uint64_t clipped;        /* strings (KT_STR_MAX) and bare tokens cut short while
                                streaming (import/kineto_clip.c) */
    int bom;                 /* the document started with a UTF-8 byte order mark */
    uint64_t outside;        /* kernels outside every step */
    uint64_t bytes;          /* JSON bytes parsed (decompressed) */
    uint64_t spilled;        /* runs written to the spill file (0: all held in memory) */
    uint64_t spill_bytes;    /* bytes written to it */
    size_t n_coll;           /* collective end times (ns, own clock), in start order */
    uint64_t coll_end[ARGUS_KINETO_MAX_COLL];
};

struct argus_pystacks;
struct argus_kineto_opts {
    size_t max_events;       /* summariser events per step (0: 1M) */
    size_t max_mem;          /* bytes of event tables held in memory (0: 48 MiB, at least
                                32 KiB); past it they are spilled to a temporary file in
                                $TMPDIR and summarised step by step from there */
    uint32_t max_ranks;      /* a rank id at or past it is refused (0: the default) */
    struct argus_pystacks *pystacks; /* python_function spans go there (import/pystacks.h,
                                        argus_pystacks_steps at the end); NULL: skipped */
};

/* Import one Kineto trace file: its summaries go to sink (clock_offset_ns 0) and the info
 * is filled (also on error, as far as it got). 0, or negative errno with errbuf. */
int argus_kineto_import(const char *path, const struct argus_kineto_opts *o,
                        const struct argus_import_sink *sink, struct argus_kineto_info *info,
                        char *errbuf, size_t errlen);

/* Offset (ns) to add to b's clock to align it on a, from the collective end times both
 * saw (matched in order; the median of the differences). 0 when none are common. */
int64_t argus_kineto_align(const struct argus_kineto_info *a,
                           const struct argus_kineto_info *b);

/* Bounds on what an input may say (docs/ARCHITECTURE.md, "Rules of the road"): a rank id
 * at or past max_ranks (argus-analyze --max-ranks; this default) or past the world size a
 * Kineto trace states costs the file (a Kineto trace) or the row (steps.csv) and one line.
 * The store and the analysis are dense by rank id, so every rank id up to the largest costs
 * memory (about 50 bytes per step analysed). steps.csv times are at most ARGUS_CSV_MAX_NS
 * (2^62 ns, the year 2116), a step at most ARGUS_CSV_MAX_STEP_NS (one day), a phase figure
 * at most ARGUS_CSV_MAX_MS. */
#define ARGUS_MAX_RANKS_DEFAULT 65536u
#define ARGUS_KINETO_STR_MAX 4096 /* bytes of a JSON string kept (the rest is dropped) */
#define ARGUS_KINETO_TOK_MAX 256  /* bytes of a number or literal kept */
#define ARGUS_MAX_RANKS_LIMIT 16777216u
#define ARGUS_CSV_MAX_NS ((uint64_t)1 << 62)
#define ARGUS_CSV_MAX_STEP_NS ((uint64_t)86400 * 1000000000)
#define ARGUS_CSV_MAX_MS 86400000.0

struct argus_csv_opts {
    uint32_t max_ranks;          /* rows of a rank >= this are refused (0: the default) */
};

/* What a steps.csv import found (filled also on error, as far as it got). */
struct argus_csv_info {
    uint64_t rows;               /* rows delivered */
    uint32_t max_rank;           /* largest rank delivered + 1 */
    unsigned long lines;         /* lines read */
    uint64_t refused;            /* rows not used: unparsable, out of bounds, cut short */
    unsigned long refused_line;  /* the first of them */
    char refused_why[400];       /* and why */
    unsigned long cut_line;      /* the last line, without an end of line (0: none) */
    uint64_t dups;               /* rows of a (step, rank) an earlier row had (they win) */
    unsigned long dup_line, dup_of; /* the first such line and the earlier one */
    uint64_t phase_unknown;      /* rows with an empty phase cell (no phase split kept) */
    unsigned long phase_unknown_line; /* the first of them */
};

/* Import a steps.csv: one summary per row, columns by the header's names (import/csv.c).
 * 0 when at least one row was delivered (refused rows are in info), else negative errno
 * (errbuf names the file and line). */
int argus_steps_csv_import(const char *path, const struct argus_csv_opts *o,
                           const struct argus_import_sink *sink, struct argus_csv_info *info,
                           char *errbuf, size_t errlen);
/* 1 when the first line of path is a steps.csv header (its names in any order: what
 * argus_import_detect, which wants "step,rank," first, does not recognise), else 0. */
int argus_steps_csv_sniff(const char *path);

/* A spool is its segment directory's files (<name>.d/NNNNNNNN.argus, common/spool.h
 * argus_spool_segdir) in name order, then the file itself; damage is skipped (reading
 * resumes at the next valid frame or record, common/spool.h). */
struct argus_spool_info {
    uint32_t n_ranks;    /* largest rank (+1) of any record */
    char lost[1400];     /* non-empty: what was lost, one line (damage skipped, a cut end,
                          * missing segments, steps the writer dropped under the cap) */
    char thinned[1400];  /* non-empty: steps whose detail the writer downsampled */
};
/* Read the spool once. 0 (read whole), 1 (read in part: errbuf = info->lost), or
 * negative (nothing could be read: errbuf). */
int argus_spool_scan_info(const char *path, struct argus_spool_info *info, char *errbuf,
                          size_t errlen);
/* The same, the rank count only. */
int argus_spool_scan(const char *path, uint32_t *n_ranks, char *errbuf, size_t errlen);
/* Ingest every valid record of a spool into js: 0, 1 when something was skipped (errbuf
 * names the first damage; argus_spool_scan_info describes it in full), negative when
 * nothing could be read or records were rejected by the store. */
int argus_spool_import(const char *path, struct argus_jobstore *js, char *errbuf,
                       size_t errlen);

#endif /* ARGUS_IMPORT_IMPORT_H */
