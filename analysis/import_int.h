/* import_int.h — internal to the Kineto importer (import_kineto.c parses a trace into
 * these compact tables; import_kfeed.c feeds them through the summariser). Nothing else
 * may include it. Times are ns on the trace's own clock.
 */
#ifndef ARGUS_ANALYSIS_IMPORT_INT_H
#define ARGUS_ANALYSIS_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/import.h"

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

struct kt_trace {
    struct kt_vec kernels, launches, steps, ranges;
    char *arena;              /* interned kernel names, NUL-terminated */
    size_t arena_used, arena_cap;
    uint32_t *slots;          /* open addressing: arena offset + 1, 0 empty */
    uint64_t *slot_hash;
    size_t slot_mask, n_names;
    size_t mem, max_mem;      /* bytes held by tables; limit */
    int over_mem;             /* the limit was hit */
    struct argus_kineto_info *info;
};

/* import_ktab.c: tables (a push past max_mem sets over_mem and fails), interning (arena
 * offset, UINT32_MAX when out of memory), "1.5" µs -> 1500 ns (0 or -1), plain integers
 * (-1 for fractions, exponents or values beyond int64), rank from a file name or -1. */
int kt_vec_push(struct kt_trace *t, struct kt_vec *v, const void *elem);
void kt_trace_free(struct kt_trace *t);
uint32_t kt_intern(struct kt_trace *t, const char *name);
int kt_parse_us(const char *s, size_t n, int64_t *out);
int kt_parse_int(const char *s, size_t n, int64_t *out);
int32_t kt_rank_from_name(const char *path);

/* Feed the parsed trace through a summariser into sink (import_kfeed.c). */
int kt_feed(struct kt_trace *t, const char *path, const struct argus_kineto_opts *o,
            const struct argus_import_sink *sink, char *errbuf, size_t errlen);

#endif /* ARGUS_ANALYSIS_IMPORT_INT_H */
