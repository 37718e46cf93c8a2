/* kineto_parse.h — internal to import/: the state of one streaming parse of a Kineto trace,
 * shared by its three parts: the YAJL callbacks that track where in the document a value
 * stands (import/kineto_json.c), what one finished event becomes in the compact tables
 * (import/kineto_event.c), and the driver that reads the file through them
 * (import/kineto.c). Nothing outside those three files may include it.
 */
#ifndef ARGUS_IMPORT_KINETO_PARSE_H
#define ARGUS_IMPORT_KINETO_PARSE_H

#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "import/import_int.h"

struct argus_pystacks;

#define MAX_DEPTH 64 /* nesting of maps and arrays the parse follows */
#define CAT_MAX 32   /* bytes of an event's "cat" kept, NUL included */
/* Sane times: a duration of at most a day; an absolute start in [0, 2^62) ns. */
#define KT_MAX_DUR_NS ((int64_t)86400 * 1000000000)
#define KT_MAX_TS_NS ((int64_t)1 << 62)

/* Keys we act on. */
enum key {
    K_OTHER = 0, K_TRACE_EVENTS, K_DIST_INFO, K_BASE_TIME,   /* top level */
    K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_ARGS, K_TID,         /* event */
    K_STREAM, K_DEVICE, K_CORR,                              /* event args */
    K_RANK, K_WORLD, K_PG_CONFIG,                            /* distributedInfo */
    K_PG_DESC, K_PG_SIZE, K_PG_RANKS,                        /* one pg_config group */
};

/* The event object being read (cleared at its start). */
struct ev {
    char ph;
    char cat[CAT_MAX];
    char name[ARGUS_NAME_MAX + 1];
    int64_t ts, dur, stream, device, corr, tid;
    unsigned have; /* bits: 1 ts, 2 dur, 4 name, 8 cat, 16 corr, 32 stream, 64 device */
    int bad;       /* a field of the wrong type */
    int bad_time;  /* ts or dur not a number of µs within int64 */
};

/* One parse: where it stands in the document, the event being read, the tables it fills. */
struct parser {
    struct kt_trace *t;
    int depth;
    enum key key[MAX_DEPTH];    /* current key at each map depth */
    int ev_depth;               /* depth of event objects; 0 until traceEvents is seen */
    int di_depth;               /* depth of the distributedInfo map */
    int top_is_array;
    struct ev e;
    int64_t base_ns;
    char err[256];              /* set by a callback that stops the parse */
    char unknown[16][CAT_MAX];
    struct kt_pg pg;            /* the pg_config group being read */
    struct argus_pystacks *ps;  /* python_function spans go there (NULL: skipped) */
};

/* import/kineto_event.c: p->e is one finished event object (the callbacks filled it):
 * count it, and keep what the summariser needs (a kernel, memcpy or memset; a runtime
 * launch; a ProfilerStep#N range or a phase annotation; a python_function span to
 * p->ps) in p->t's tables, or count it as malformed, of bad times or of an unknown type.
 * Allocates only through the tables (import/import_int.h: kt_vec_push, kt_intern). */
void kt_event_end(struct parser *p);

/* import/kineto_json.c: YAJL's callbacks over a struct parser (ctx). They fill p->e and
 * call kt_event_end at each event's end, read distributedInfo into p->t->info, and stop
 * the parse (returning 0, with one line in p->err) on nesting past MAX_DEPTH, a
 * traceEvents that is not an array, or a second traceEvents array. No allocation. */
extern const yajl_callbacks kt_json_callbacks;

#endif /* ARGUS_IMPORT_KINETO_PARSE_H */
