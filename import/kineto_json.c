/* kineto_json.c — the YAJL callbacks of the Kineto importer (import/kineto_parse.h): which
 * key each value belongs to at each depth (the event's fields, its args, the top level,
 * distributedInfo and its pg_config groups), numbers parsed from YAJL's raw text, strings
 * cut to their field, a wrong type marking the event bad. An event object's end hands it
 * to kt_event_end (import/kineto_event.c).
 * Must not allocate (kt_event_end does, through the tables) or keep any text beyond the
 * one event being read; must stop, with one line in p->err, rather than misread a document
 * of another shape.
 */
#include "import/kineto_parse.h"

#include <stdio.h>
#include <string.h>

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
        kt_event_end(p);
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

const yajl_callbacks kt_json_callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};
