/* kineto.c — streaming parse of a PyTorch-profiler (Kineto) Chrome-trace file into
 * compact tables (import/import_int.h): YAJL callbacks over 64 KB buffers read with zlib's gzread
 * (plain files pass through), so no DOM and no copy of the JSON text is ever held. Only
 * what the summariser needs is kept: kernels/memcpy/memset (interned names), runtime
 * launches (correlation -> CPU time), ProfilerStep#N ranges and phase annotations, and
 * distributedInfo (rank, world_size, and the rank's TP/PP/DP/EP coordinates from the
 * pg_config groups whose pg_desc names the kind). Everything else is skipped and counted.
 * Memory is bounded by opts.max_mem: past it the tables go to a temporary file and are
 * summarised from there (import/kineto_spill.c).
 * Must not crash on any input: every field is optional, types are checked, numbers are
 * parsed from YAJL's raw text (integers beyond 64 bits are simply ignored).
 */
#include "import/import_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "common/kclass.h"
#include "common/wire.h"
#include "import/pystacks.h"

#define CHUNK 65536
#define MAX_DEPTH 64
#define CAT_MAX 32
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

struct ev {
    char ph;
    char cat[CAT_MAX];
    char name[ARGUS_NAME_MAX + 1];
    int64_t ts, dur, stream, device, corr, tid;
    unsigned have; /* bits: 1 ts, 2 dur, 4 name, 8 cat, 16 corr, 32 stream, 64 device */
    int bad;       /* a field of the wrong type */
    int bad_time;  /* ts or dur not a number of µs within int64 */
};

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

/* ---- one finished event ---------------------------------------------------------- */

static void count_unknown(struct parser *p, const char *cat)
{
    struct argus_kineto_info *in = p->t->info;

    in->skipped++;
    for (uint32_t i = 0; i < in->unknown_types && i < 16; i++)
        if (strcmp(p->unknown[i], cat) == 0)
            return;
    if (in->unknown_types < 16)
        snprintf(p->unknown[in->unknown_types], CAT_MAX, "%s", cat);
    in->unknown_types++;
}

static int is_cat(const struct ev *e, const char *c)
{
    return strcasecmp(e->cat, c) == 0;
}

/* ts and dur of a timed event usable: counted (and 0) when not. */
static int times_ok(struct parser *p, int kernel)
{
    const struct ev *e = &p->e;
    if (!e->bad_time && e->dur >= 0 && e->dur <= KT_MAX_DUR_NS &&
        e->ts > -KT_MAX_TS_NS && e->ts < KT_MAX_TS_NS &&
        p->base_ns + e->ts >= 0 && p->base_ns + e->ts < KT_MAX_TS_NS)
        return 1;
    p->t->info->bad_times++;
    p->t->info->bad_kernels += kernel;
    return 0;
}

static void end_event(struct parser *p)
{
    struct ev *e = &p->e;
    struct kt_trace *t = p->t;
    int kc = -1;

    t->info->events++;
    if (e->bad) {
        t->info->malformed++;
        return;
    }
    if (e->ph == 'M' || e->ph == 'i' || e->ph == 'I' || e->ph == 's' || e->ph == 'f' ||
        e->ph == 't' || e->ph == 'C')
        return; /* metadata, instants, flows, counters: known, not needed */
    if (is_cat(e, "kernel"))
        kc = argus_kclass_from_name(e->name);
    else if (is_cat(e, "gpu_memcpy"))
        kc = ARGUS_KC_MEMCPY;
    else if (is_cat(e, "gpu_memset"))
        kc = ARGUS_KC_MEMSET;
    if (kc >= 0) {
        if ((e->have & 7) != 7) {
            t->info->malformed++;
            return;
        }
        if (!times_ok(p, 1))
            return;
        struct kt_kernel k = {0};
        uint32_t off = kt_intern(t, e->name);
        if (off == UINT32_MAX)
            return;
        k.start = (uint64_t)(p->base_ns + e->ts);
        k.end = k.start + (uint64_t)e->dur;
        k.name = off;
        k.corr = (e->have & 16) ? (uint32_t)e->corr : 0;
        k.has_corr = (e->have & 16) && e->corr > 0 && e->corr <= UINT32_MAX;
        k.stream = (e->have & 32) ? (uint32_t)e->stream : 0;
        k.device = (e->have & 64) ? (uint32_t)e->device : 0;
        k.kclass = (uint8_t)kc;
        if (kt_vec_push(t, &t->kernels, &k) == 0) {
            t->info->kernels++;
            if (strncasecmp(e->name, "nccl", 4) == 0 || strncasecmp(e->name, "rccl", 4) == 0)
                t->info->nccl_kernels++;
        }
        return;
    }
    int cpu_ann = is_cat(e, "user_annotation"), gpu_ann = is_cat(e, "gpu_user_annotation");
    int cpu_op = is_cat(e, "cpu_op");
    if (cpu_ann || gpu_ann || cpu_op) {
        if ((e->have & 7) != 7) {
            t->info->malformed++;
            return;
        }
        if (!times_ok(p, 0))
            return;
        struct kt_range r = {0};
        r.start = (uint64_t)(p->base_ns + e->ts);
        r.end = r.start + (uint64_t)e->dur;
        r.gpu = (uint8_t)gpu_ann;
        if (!cpu_op && strncmp(e->name, "ProfilerStep#", 13) == 0) {
            int64_t n;
            if (kt_parse_int(e->name + 13, strlen(e->name + 13), &n) != 0 || n < 0) {
                t->info->malformed++;
                return;
            }
            r.step = (uint64_t)n;
            kt_vec_push(t, &t->steps, &r);
            return;
        }
        if (cpu_op) {
            if (strstr(e->name, "autograd::engine::evaluate_function"))
                r.phase = ARGUS_PH_BACKWARD;
            else if (strncmp(e->name, "Optimizer.", 10) == 0)
                r.phase = ARGUS_PH_OPTIMIZER;
            else
                return;
        } else {
            r.phase = (uint8_t)argus_phase_from_name(e->name);
            if (r.phase == ARGUS_PH_OTHER)
                return;
        }
        kt_vec_push(t, &t->ranges, &r);
        return;
    }
    if (is_cat(e, "cuda_runtime") || is_cat(e, "cuda_driver") || is_cat(e, "hip_runtime")) {
        if ((e->have & 17) == 17 && e->corr > 0 && e->corr <= UINT32_MAX) {
            struct kt_launch l = {(uint64_t)(p->base_ns + e->ts), (uint32_t)e->corr};
            kt_vec_push(t, &t->launches, &l);
        }
        return;
    }
    if (is_cat(e, "python_function")) { /* with_stack=True: host stacks (pystacks.h) */
        if (p->ps && (e->have & 7) == 7 && !e->bad_time && e->dur >= 0 &&
            e->dur <= KT_MAX_DUR_NS && p->base_ns + e->ts >= 0 &&
            p->base_ns + e->ts < KT_MAX_TS_NS)
            (void)argus_pystacks_span(p->ps, (uint64_t)(p->base_ns + e->ts), (uint64_t)e->dur,
                                      e->tid, e->name);
        return;
    }
    if (is_cat(e, "ac2g") || is_cat(e, "fwdbwd") || is_cat(e, "trace") ||
        is_cat(e, "cpu_instant_event") ||
        is_cat(e, "overhead") || is_cat(e, "cuda_sync"))
        return; /* known, not needed */
    count_unknown(p, e->cat[0] ? e->cat : "(no cat)");
}

/* ---- YAJL callbacks ---------------------------------------------------------------- */

/* Inside distributedInfo.pg_config (an array of group objects)? */
static int in_pg(const struct parser *p)
{
    return p->di_depth > 0 && p->depth >= p->di_depth + 1 && p->key[p->di_depth] == K_PG_CONFIG;
}

static enum key key_of(const struct parser *p, const unsigned char *k, size_t n)
{
#define IS(s) (n == sizeof(s) - 1 && memcmp(k, s, n) == 0)
    int d = p->depth;
    if (p->ev_depth && d == p->ev_depth) {
        if (IS("ph")) return K_PH;
        if (IS("cat")) return K_CAT;
        if (IS("name")) return K_NAME;
        if (IS("ts")) return K_TS;
        if (IS("dur")) return K_DUR;
        if (IS("args")) return K_ARGS;
        if (IS("tid")) return K_TID;
        return K_OTHER;
    }
    if (p->ev_depth && d == p->ev_depth + 1 && p->key[d - 1] == K_ARGS) {
        if (IS("stream")) return K_STREAM;
        if (IS("device")) return K_DEVICE;
        if (IS("correlation")) return K_CORR;
        return K_OTHER;
    }
    if (d == 1 && !p->top_is_array) {
        if (IS("traceEvents")) return K_TRACE_EVENTS;
        if (IS("distributedInfo")) return K_DIST_INFO;
        if (IS("baseTimeNanoseconds")) return K_BASE_TIME;
        return K_OTHER;
    }
    if (p->di_depth > 0 && d == p->di_depth) {
        if (IS("rank")) return K_RANK;
        if (IS("world_size")) return K_WORLD;
        if (IS("pg_config")) return K_PG_CONFIG;
    }
    if (in_pg(p) && d == p->di_depth + 2) {
        if (IS("pg_desc")) return K_PG_DESC;
        if (IS("pg_size")) return K_PG_SIZE;
        if (IS("ranks")) return K_PG_RANKS;
    }
    return K_OTHER;
#undef IS
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
    struct parser *p = ctx;
    if (p->depth > 0 && p->depth < MAX_DEPTH)
        p->key[p->depth] = key_of(p, k, n);
    return 1;
}

/* The key the current value belongs to (K_OTHER inside arrays other than ours). */
static enum key cur_key(const struct parser *p)
{
    return p->depth > 0 && p->depth < MAX_DEPTH ? p->key[p->depth] : K_OTHER;
}

static int in_event(const struct parser *p)
{
    return p->ev_depth && p->depth == p->ev_depth;
}

static int in_args(const struct parser *p)
{
    return p->ev_depth && p->depth == p->ev_depth + 1 && p->key[p->depth - 1] == K_ARGS;
}

/* traceEvents holding something other than an array: stop with a clear message. */
static int top_wrong(struct parser *p, const char *what)
{
    if (p->depth == 1 && !p->top_is_array && cur_key(p) == K_TRACE_EVENTS) {
        snprintf(p->err, sizeof p->err, "traceEvents is %s, not an array", what);
        return 1;
    }
    return 0;
}

static int cb_start_map(void *ctx)
{
    struct parser *p = ctx;
    if (p->depth >= MAX_DEPTH - 1) {
        snprintf(p->err, sizeof p->err, "nesting deeper than %d", MAX_DEPTH - 1);
        return 0;
    }
    enum key k = cur_key(p);
    if (top_wrong(p, "an object"))
        return 0;
    p->depth++;
    p->key[p->depth] = K_OTHER;
    if (p->depth == 1 && p->top_is_array == 0)
        return 1;
    if (p->ev_depth && p->depth == p->ev_depth) {
        memset(&p->e, 0, sizeof p->e);
        p->e.name[0] = '\0';
    } else if (p->depth == 2 && k == K_DIST_INFO && !p->top_is_array) {
        p->di_depth = 2;
    } else if (p->di_depth > 0 && p->depth == p->di_depth + 2 &&
               p->key[p->di_depth] == K_PG_CONFIG) {
        p->t->info->pg_count++;
        memset(&p->pg, 0, sizeof p->pg);
        p->pg.pos = -1;
    }
    return 1;
}

static int cb_end_map(void *ctx)
{
    struct parser *p = ctx;
    if (p->ev_depth && p->depth == p->ev_depth)
        end_event(p);
    if (p->di_depth > 0 && p->depth == p->di_depth + 2 && in_pg(p))
        kt_pg_end(&p->pg, p->t->info);
    if (p->di_depth > 0 && p->depth == p->di_depth)
        p->di_depth = -p->di_depth; /* done; never re-entered */
    if (p->depth > 0)
        p->depth--;
    return 1;
}

static int cb_start_array(void *ctx)
{
    struct parser *p = ctx;
    if (p->depth >= MAX_DEPTH - 1) {
        snprintf(p->err, sizeof p->err, "nesting deeper than %d", MAX_DEPTH - 1);
        return 0;
    }
    if (p->depth == 0) {
        p->top_is_array = 1; /* Chrome "JSON array format": the array of events */
        p->ev_depth = 2;
    } else if (p->depth == 1 && !p->top_is_array && cur_key(p) == K_TRACE_EVENTS) {
        if (p->ev_depth) {
            snprintf(p->err, sizeof p->err, "a second traceEvents array");
            return 0;
        }
        p->ev_depth = 3;
    } else if (in_event(p)) {
        p->e.bad |= cur_key(p) != K_OTHER && cur_key(p) != K_ARGS;
    }
    p->depth++;
    p->key[p->depth] = K_OTHER;
    return 1;
}

static int cb_end_array(void *ctx)
{
    struct parser *p = ctx;
    if (p->depth > 0)
        p->depth--;
    return 1;
}

/* An event's field that must be a number got something else. */
static void wrong_type(struct parser *p)
{
    if (in_event(p)) {
        enum key k = cur_key(p);
        if (k == K_TS || k == K_DUR || k == K_NAME || k == K_CAT || k == K_PH || k == K_ARGS)
            p->e.bad = 1;
    }
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    struct parser *p = ctx;
    enum key k = cur_key(p);
    int64_t v;

    if (top_wrong(p, "a number"))
        return 0;
    if (p->depth == 1 && p->top_is_array) {
        p->t->info->malformed++; /* an event that is not an object */
        return 1;
    }
    if (in_event(p)) {
        if (k == K_TS || k == K_DUR) {
            if (kt_parse_us(s, n, &v) != 0) {
                p->e.bad_time = 1; /* counted when the event is one we use */
                v = 0;
            }
            if (k == K_TS)
                p->e.ts = v, p->e.have |= 1;
            else
                p->e.dur = v, p->e.have |= 2;
        } else if (k == K_TID) {
            if (kt_parse_int(s, n, &v) == 0)
                p->e.tid = v; /* the thread: only python_function events use it */
        } else if (k != K_OTHER) {
            p->e.bad = 1;
        }
    } else if (in_args(p)) {
        if (kt_parse_int(s, n, &v) != 0 || v < 0)
            return 1;
        if (k == K_STREAM)
            p->e.stream = v, p->e.have |= 32;
        else if (k == K_DEVICE)
            p->e.device = v, p->e.have |= 64;
        else if (k == K_CORR)
            p->e.corr = v, p->e.have |= 16;
    } else if (in_pg(p) && p->depth >= p->di_depth + 2) {
        if (kt_parse_int(s, n, &v) == 0)
            kt_pg_number(&p->pg, p->depth == p->di_depth + 2 ? k : p->key[p->depth - 1],
                         p->depth - p->di_depth - 2, K_PG_SIZE, K_PG_RANKS, v,
                         p->t->info->rank);
    } else if (p->di_depth > 0 && p->depth == p->di_depth) {
        if (kt_parse_int(s, n, &v) != 0 || v < 0 || v > INT32_MAX)
            return 1;
        if (k == K_RANK)
            p->t->info->rank = (int32_t)v;
        else if (k == K_WORLD)
            p->t->info->world_size = (int32_t)v;
    } else if (p->depth == 1 && k == K_BASE_TIME) {
        if (kt_parse_int(s, n, &v) == 0 && v > -KT_MAX_TS_NS && v < KT_MAX_TS_NS)
            p->base_ns = v;
    }
    return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    struct parser *p = ctx;
    enum key k = cur_key(p);

    if (top_wrong(p, "a string"))
        return 0;
    if (p->depth == 1 && p->top_is_array) {
        p->t->info->malformed++;
        return 1;
    }
    if (in_event(p)) {
        if (k == K_NAME) {
            size_t m = n < ARGUS_NAME_MAX ? n : ARGUS_NAME_MAX;
            memcpy(p->e.name, s, m);
            p->e.name[m] = '\0';
            if (memchr(p->e.name, '\0', m))
                p->e.bad = 1;
            p->e.have |= 4;
        } else if (k == K_CAT) {
            size_t m = n < CAT_MAX - 1 ? n : CAT_MAX - 1;
            memcpy(p->e.cat, s, m);
            p->e.cat[m] = '\0';
            p->e.have |= 8;
        } else if (k == K_PH) {
            p->e.ph = n ? (char)s[0] : 0;
        } else if (k == K_TID) {
            int64_t v; /* a thread named by a string ("11"); anything else is thread 0 */
            p->e.tid = kt_parse_int((const char *)s, n, &v) == 0 ? v : 0;
        } else {
            wrong_type(p);
        }
    } else if (in_pg(p) && p->depth == p->di_depth + 2 && k == K_PG_DESC) {
        p->pg.kind = kt_pg_kind((const char *)s, n);
    } else if (p->depth == 1 && k == K_BASE_TIME) {
        int64_t v;
        if (kt_parse_int((const char *)s, n, &v) == 0 && v > -KT_MAX_TS_NS && v < KT_MAX_TS_NS)
            p->base_ns = v;
    }
    return 1;
}

static int cb_null(void *ctx)
{
    if (top_wrong(ctx, "null"))
        return 0;
    wrong_type(ctx);
    return 1;
}

static int cb_bool(void *ctx, int b)
{
    (void)b;
    if (top_wrong(ctx, "a boolean"))
        return 0;
    wrong_type(ctx);
    return 1;
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---- driver ------------------------------------------------------------------------ */

static int parse_file(const char *path, struct parser *p, char *errbuf, size_t errlen)
{
    unsigned char *buf = NULL;
    yajl_handle h = NULL;
    gzFile gz = NULL;
    uint64_t off = 0;
    int rc = 0, n;
    struct kt_clip *clip = calloc(1, sizeof *clip);

    gz = gzopen(path, "rb");
    buf = malloc(CHUNK);
    h = yajl_alloc(&callbacks, NULL, p);
    if (!gz || !buf || !h || !clip) {
        rc = gz ? -ENOMEM : -errno;
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, gz ? "out of memory"
                                                                 : strerror(errno));
        goto out;
    }
    gzbuffer(gz, CHUNK);
    yajl_config(h, yajl_allow_partial_values, 0);
    while ((n = gzread(gz, buf, CHUNK)) > 0) {
        size_t kept = kt_clip(clip, buf, (size_t)n);
        yajl_status st = kept ? yajl_parse(h, buf, kept) : yajl_status_ok;
        if (st != yajl_status_ok) {
            uint64_t at = kt_clip_offset(clip, off, yajl_get_bytes_consumed(h));
            if (p->err[0]) {
                snprintf(errbuf, errlen, "%s: %s at byte %llu", path, p->err,
                         (unsigned long long)at);
            } else {
                unsigned char *m = yajl_get_error(h, 0, NULL, 0);
                char *nl = m ? strchr((char *)m, '\n') : NULL;
                if (nl)
                    *nl = '\0';
                snprintf(errbuf, errlen, "%s: not valid JSON at byte %llu: %s", path,
                         (unsigned long long)at, m ? (const char *)m : "parse error");
                if (m)
                    yajl_free_error(h, m);
            }
            rc = -EPROTO;
            goto out;
        }
        off += (uint64_t)n;
    }
    int ze = Z_OK;
    const char *zm = gzerror(gz, &ze);
    if (n < 0 || (ze != Z_OK && ze != Z_STREAM_END)) {
        size_t pl = strlen(path);
        if (zm && strncmp(zm, path, pl) == 0 && zm[pl] == ':')
            zm += pl + 2; /* gzerror repeats the path */
        snprintf(errbuf, errlen, "%s: damaged gzip data after %llu decompressed bytes: %s",
                 path, (unsigned long long)off, zm ? zm : "read error");
        rc = -EIO;
        goto out;
    }
    if (yajl_complete_parse(h) != yajl_status_ok || p->depth != 0 || off == 0) {
        snprintf(errbuf, errlen, "%s: truncated JSON: the document ends early at byte %llu",
                 path, (unsigned long long)off);
        rc = -EPROTO;
        goto out;
    }
out:
    p->t->info->bytes = off;
    if (clip) {
        p->t->info->clipped = clip->clipped;
        p->t->info->bom = clip->bom_seen;
    }
    free(clip);
    if (h)
        yajl_free(h);
    if (gz)
        gzclose(gz);
    free(buf);
    return rc;
}

/* The trace's CPU ProfilerStep ranges to the host stack collector (pystacks.h). */
static void py_steps(struct argus_pystacks *ps, const struct kt_trace *t)
{
    const struct kt_range *r = t->steps.v;
    struct argus_pystacks_step *st = t->steps.n ? malloc(t->steps.n * sizeof *st) : NULL;
    size_t n = 0;
    if (!st)
        return;
    for (size_t i = 0; i < t->steps.n; i++)
        if (!r[i].gpu)
            st[n++] = (struct argus_pystacks_step){r[i].step, r[i].start, r[i].end};
    argus_pystacks_steps(ps, st, n);
    free(st);
}

int argus_kineto_import(const char *path, const struct argus_kineto_opts *o,
                        const struct argus_import_sink *sink, struct argus_kineto_info *info,
                        char *errbuf, size_t errlen)
{
    struct kt_trace t;
    struct parser *p;
    int rc;

    memset(info, 0, sizeof *info);
    info->rank = -1;
    info->device = -1;
    memset(&t, 0, sizeof t);
    t.kernels.elem = sizeof(struct kt_kernel);
    t.launches.elem = sizeof(struct kt_launch);
    t.steps.elem = sizeof(struct kt_range);
    t.ranges.elem = sizeof(struct kt_range);
    t.max_mem = o && o->max_mem ? o->max_mem : (size_t)48 << 20;
    t.max_mem = t.max_mem < KT_MIN_MEM ? KT_MIN_MEM : t.max_mem;
    t.spill_fd = -1;
    t.info = info;
    p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    p->t = &t;
    p->ps = o ? o->pystacks : NULL;
    if (p->ps)
        argus_pystacks_discard(p->ps); /* a new trace: nothing of an earlier one pending */
    rc = parse_file(path, p, errbuf, errlen);
    if (rc)
        goto out;
    if (!p->ev_depth) {
        snprintf(errbuf, errlen, "%s: not a Chrome/Kineto trace: no traceEvents array",
                 path);
        rc = -EPROTO;
        goto out;
    }
    if (t.over_mem) {
        if (t.spill_err[0])
            snprintf(errbuf, errlen, "%s: %s; not analysed", path, t.spill_err);
        else
            snprintf(errbuf, errlen, "%s: trace too large: its steps and kernel names alone "
                     "pass %zu KiB of memory; not analysed", path, t.max_mem >> 10);
        rc = -EFBIG;
        goto out;
    }
    if (info->rank < 0) {
        info->rank = kt_rank_from_name(path);
        info->rank_from_name = 1;
    }
    if (info->rank < 0) {
        snprintf(errbuf, errlen, "%s: no rank: no distributedInfo.rank and no rank number "
                 "in the file name (name it rank-N.json)", path);
        rc = -EINVAL;
        goto out;
    }
    const uint32_t max_ranks = o && o->max_ranks ? o->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    if (info->world_size > 0 && info->rank >= info->world_size) {
        snprintf(errbuf, errlen, "%s: rank %d%s is not below distributedInfo.world_size %d",
                 path, info->rank, info->rank_from_name ? " (from the file name)" : "",
                 info->world_size);
        rc = -ERANGE;
        goto out;
    }
    if ((uint32_t)info->rank >= max_ranks) {
        snprintf(errbuf, errlen, "%s: rank %d%s is at or past the bound of %lu ranks "
                 "(--max-ranks)", path, info->rank,
                 info->rank_from_name ? " (from the file name)" : "", (unsigned long)max_ranks);
        rc = -ERANGE;
        goto out;
    }
    if (info->kernels == 0 && t.steps.n == 0) {
        snprintf(errbuf, errlen, "%s: empty rank: no GPU events and no ProfilerStep#N "
                 "among %llu events (%llu malformed)", path, (unsigned long long)info->events,
                 (unsigned long long)info->malformed);
        rc = -ENODATA;
        goto out;
    }
    info->spilled = t.n_runs ? t.n_runs + 1 : 0;
    if (t.n_runs)
        rc = kt_feed_stream(&t, path, o, sink, errbuf, errlen);
    else
        rc = kt_feed(&t, path, o, sink, errbuf, errlen);
    info->spill_bytes = t.spill_bytes;
    if (rc == 0 && p->ps)
        py_steps(p->ps, &t);
out:
    kt_trace_free(&t);
    free(p);
    return rc;
}
