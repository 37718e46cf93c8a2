/* import_int.h — internal to the Kineto importer (import/kineto.c parses a trace into
 * these compact tables; import/kineto_feed.c feeds them through the summariser). Nothing else
 * may include it. Times are ns on the trace's own clock.
 */
#ifndef ARGUS_IMPORT_IMPORT_INT_H
#define ARGUS_IMPORT_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"

struct kt_kernel {
    uint64_t start, end;
    uint32_t name;    /* offset in the name arena */
    uint32_t corr;    /* 0: none */
    uint32_t stream, device;
    uint32_t step;    /* index into steps, set by the feeder */
    uint8_t kclass, phase, has_corr, pad;
};

struct kt_launch {
    uint64_t ts;
    uint32_t corr;
};

/* A range: a ProfilerStep#N (step set) or a phase annotation (phase set). */
struct kt_range {
    uint64_t start, end;
    uint64_t step;
    uint8_t phase, gpu, pad[6];
};

struct kt_vec {
    void *v;
    size_t n, cap, elem;
};

/* Smallest table memory allowed (argus_kineto_opts.max_mem is raised to it). */
#define KT_MIN_MEM ((size_t)32 << 10)

/* One sorted run in the spill file (import/kineto_spill.c): n records from byte off. */
struct kt_run {
    uint64_t off, n;
};

struct kt_trace {
    struct kt_vec kernels, launches, steps, ranges;
    char *arena;              /* interned kernel names, NUL-terminated */
    size_t arena_used, arena_cap;
    uint32_t *slots;          /* open addressing: arena offset + 1, 0 empty */
    uint64_t *slot_hash;
    size_t slot_mask, n_names;
    size_t mem, max_mem;      /* bytes held by tables; limit */
    int over_mem;             /* the limit was hit (and spilling could not help) */
    int spill_fd;             /* -1 until the first spill: an unlinked temporary file */
    struct kt_run *runs;      /* time-sorted runs of kernels, launches and ranges */
    size_t n_runs, cap_runs;
    uint64_t spill_bytes;
    char spill_err[160];      /* why spilling failed (then over_mem is set) */
    struct argus_kineto_info *info;
};

/* import/kineto_table.c: tables (a push past max_mem spills kernels, launches and ranges to a
 * temporary file, kt_spill; when that cannot help it sets over_mem and fails), interning (arena
 * offset, UINT32_MAX when out of memory), "1.5" µs -> 1500 ns (0 or -1), plain integers
 * (-1 for fractions, exponents or values beyond int64), rank from a file name or -1. */
int kt_vec_push(struct kt_trace *t, struct kt_vec *v, const void *elem);
void kt_trace_free(struct kt_trace *t);
uint32_t kt_intern(struct kt_trace *t, const char *name);
int kt_parse_us(const char *s, size_t n, int64_t *out);
int kt_parse_int(const char *s, size_t n, int64_t *out);
int32_t kt_rank_from_name(const char *path);

/* Feed the parsed trace through a summariser into sink (import/kineto_feed.c), from the tables
 * in memory; kt_feed_stream does the same from the spilled runs (import/kineto_stream.c). */
int kt_feed(struct kt_trace *t, const char *path, const struct argus_kineto_opts *o,
            const struct argus_import_sink *sink, char *errbuf, size_t errlen);
int kt_feed_stream(struct kt_trace *t, const char *path, const struct argus_kineto_opts *o,
                   const struct argus_import_sink *sink, char *errbuf, size_t errlen);

/* import/kineto_spill.c: write the kernels, launches and ranges in memory as one time-sorted run
 * to the spill file (created on first use in $TMPDIR, unlinked at once) and free those
 * tables. 0 or negative errno (t->spill_err says why). */
int kt_spill(struct kt_trace *t);

/* A spilled event, 40 bytes (import/kineto_spill.c); at equal times ranges come first, then
 * launches, then kernels. */
enum { KT_R_RANGE = 0, KT_R_LAUNCH = 1, KT_R_KERNEL = 2 };
struct kt_srec {
    uint64_t t, end;                   /* start (launch: ts) and end */
    uint32_t name, corr, stream, device;
    uint8_t type, kclass, phase, flag; /* flag: kernel has_corr / range gpu */
    uint32_t pad;
};
/* The runs of t's spill file merged into one stream in time order, with read buffers of
 * about buf_bytes in all. next: the next record (valid until the next call), NULL at the
 * end or on a read error (*rc < 0). Single-threaded. */
struct kt_merge;
int kt_merge_open(const struct kt_trace *t, size_t buf_bytes, struct kt_merge **out);
const struct kt_srec *kt_merge_next(struct kt_merge *m, int *rc);
void kt_merge_free(struct kt_merge *m);

/* One distributedInfo.pg_config group being read (import/kineto_table.c): its kind from pg_desc
 * (1 TP, 2 PP, 3 DP, 4 EP; 0 other), pg_size, and this rank's position in "ranks".
 * kt_pg_number takes a number of the group (key: pg_size, or the ranks array's element
 * at array depth 1); kt_pg_end sets info->coords for a group of a known kind holding
 * the rank. */
struct kt_pg {
    int kind;
    int64_t size, pos, idx;
};
int kt_pg_kind(const char *desc, size_t n);
void kt_pg_number(struct kt_pg *g, int key, int depth, int key_size, int key_ranks, int64_t v,
                  int32_t rank);
void kt_pg_end(const struct kt_pg *g, struct argus_kineto_info *info);

/* import/kineto_clip.c: the filter between gzread and YAJL. kt_clip rewrites buf[0..n) in
 * place (returns the bytes left): a UTF-8 byte order mark at the start is dropped, a JSON
 * string is cut after KT_STR_MAX bytes and a bare token (number, literal) after KT_TOK_MAX,
 * at a whole character (never inside an escape or a UTF-8 sequence), its rest dropped up to
 * its end; each cut string or token counts in clipped. kt_clip_offset maps an offset `at`
 * in the last output back to the input, in_start being the input bytes before that call.
 * State only; no allocation. */
#define KT_STR_MAX ARGUS_KINETO_STR_MAX
#define KT_TOK_MAX ARGUS_KINETO_TOK_MAX
#define KT_CLIP_MARKS 512
struct kt_clip {
    int started, bom_seen;
    int state, cut;
    unsigned esc;                 /* 1 after a backslash, 2..5 in the hex digits of \u */
    size_t len;                   /* bytes kept of the current string or token */
    uint64_t clipped, dropped;    /* strings and tokens cut; bytes dropped in all */
    uint64_t chunk_drop0;         /* dropped before the last call */
    size_t n_marks;               /* in the last call: drops start at output mark_out[j], */
    size_t mark_out[KT_CLIP_MARKS]; /* and dropped is mark_drop[j] after them */
    uint64_t mark_drop[KT_CLIP_MARKS];
};
size_t kt_clip(struct kt_clip *k, unsigned char *buf, size_t n);
uint64_t kt_clip_offset(const struct kt_clip *k, uint64_t in_start, size_t at);

/* Shared by both feeders (import/kineto_feed.c). */
#define KT_NO_STEP UINT32_MAX
struct kt_step {
    uint64_t n, start, end;       /* final interval */
    uint64_t cpu_start, cpu_end;
    int has_cpu, has_gpu;
};
size_t kt_build_steps(struct kt_range *r, size_t n, struct kt_step *st);
uint32_t kt_step_of(const struct kt_step *st, size_t n, uint64_t t, int cpu);
void kt_feed_summary(void *ctx, const struct argus_step_summary *s);
void kt_feed_name(void *ctx, uint64_t hash, const char *name);
struct kt_feed_ctx {
    const struct argus_import_sink *sink;
    struct argus_kineto_info *info;
};

#endif /* ARGUS_IMPORT_IMPORT_INT_H */
