/* ring.c — the L4 raw-event ring and its Chrome-trace dump (ring.h), written with YAJL's
 * generator. Fixed memory; the dump streams events straight to the FILE.
 */
#include "tracer/ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "common/types.h"

struct argus_ring {
    struct argus_ring_ev *ev;
    size_t cap, head, n;
    unsigned keep_steps;
    uint64_t last_step;
    pthread_mutex_t lock;
};

int argus_ring_create(size_t cap, unsigned keep_steps, struct argus_ring **out)
{
    struct argus_ring *r;

    if (!out || cap == 0 || keep_steps == 0)
        return -EINVAL;
    r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->ev = calloc(cap, sizeof *r->ev);
    if (!r->ev) {
        free(r);
        return -ENOMEM;
    }
    r->cap = cap;
    r->keep_steps = keep_steps;
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return 0;
}

void argus_ring_free(struct argus_ring *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r->ev);
    free(r);
}

void argus_ring_add(struct argus_ring *r, const struct argus_ring_ev *e)
{
    if (!r || !e)
        return;
    pthread_mutex_lock(&r->lock);
    r->ev[r->head] = *e;
    r->head = (r->head + 1) % r->cap;
    if (r->n < r->cap)
        r->n++;
    if (e->step > r->last_step)
        r->last_step = e->step;
    pthread_mutex_unlock(&r->lock);
}

size_t argus_ring_count(struct argus_ring *r)
{
    size_t n;

    pthread_mutex_lock(&r->lock);
    n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static void print_cb(void *ctx, const char *s, size_t len)
{
    fwrite(s, 1, len, (FILE *)ctx);
}

static void gstr(yajl_gen g, const char *s)
{
    if (yajl_gen_string(g, (const unsigned char *)s, strlen(s)) != yajl_gen_status_ok)
        yajl_gen_string(g, (const unsigned char *)"[not utf-8]", 11);
}

static void gnum(yajl_gen g, const char *key, double v)
{
    gstr(g, key);
    yajl_gen_double(g, v);
}

static void gint(yajl_gen g, const char *key, long long v)
{
    gstr(g, key);
    yajl_gen_integer(g, v);
}

/* {"name":"process_name"|"thread_name","ph":"M","pid":..,"tid":..,"args":{"name":..}} */
static void meta(yajl_gen g, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    yajl_gen_map_open(g);
    gstr(g, "name");
    gstr(g, what);
    gstr(g, "ph");
    gstr(g, "M");
    gint(g, "pid", pid);
    gint(g, "tid", tid);
    gstr(g, "args");
    yajl_gen_map_open(g);
    gstr(g, "name");
    gstr(g, name);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
}

int argus_ring_dump_chrome(struct argus_ring *r, FILE *out, uint32_t rank, const char *label,
                           uint64_t from, uint64_t to, uint64_t t0_ns)
{
    yajl_gen g;
    uint32_t streams[64];
    unsigned ns = 0;
    char buf[64];

    if (!r || !out)
        return -EINVAL;
    g = yajl_gen_alloc(NULL);
    if (!g)
        return -ENOMEM;
    yajl_gen_config(g, yajl_gen_print_callback, print_cb, out);
    yajl_gen_config(g, yajl_gen_validate_utf8, 1);
    pthread_mutex_lock(&r->lock);
    uint64_t oldest = r->last_step >= r->keep_steps ? r->last_step - r->keep_steps + 1 : 0;
    if (from < oldest)
        from = oldest;
    yajl_gen_map_open(g);
    gstr(g, "displayTimeUnit");
    gstr(g, "ns");
    gstr(g, "traceEvents");
    yajl_gen_array_open(g);
    if (!label) {
        snprintf(buf, sizeof buf, "rank %u", rank);
        label = buf;
    }
    meta(g, "process_name", rank, 0, label);
    size_t first = (r->head + r->cap - r->n) % r->cap;
    for (size_t i = 0; i < r->n; i++) {
        const struct argus_ring_ev *e = &r->ev[(first + i) % r->cap];
        if (e->step < from || e->step > to)
            continue;
        unsigned s;
        for (s = 0; s < ns && streams[s] != e->stream; s++)
            ;
        if (s == ns && ns < 64) {
            char tn[48];
            streams[ns++] = e->stream;
            snprintf(tn, sizeof tn, "stream %u", e->stream);
            meta(g, "thread_name", rank, e->stream, tn);
        }
        yajl_gen_map_open(g);
        gstr(g, "name");
        gstr(g, e->name ? e->name : "[unnamed]");
        gstr(g, "cat");
        gstr(g, argus_kclass_name((enum argus_kclass)e->kclass));
        gstr(g, "ph");
        gstr(g, "X");
        gint(g, "pid", rank);
        gint(g, "tid", e->stream);
        gnum(g, "ts", (double)((int64_t)(e->start_ns - t0_ns)) / 1000.0);
        gnum(g, "dur", (double)(e->end_ns - e->start_ns) / 1000.0);
        gstr(g, "args");
        yajl_gen_map_open(g);
        gint(g, "correlation", e->corr);
        gint(g, "bytes", (long long)e->bytes);
        gint(g, "device", e->device);
        gint(g, "step", (long long)e->step);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
    }
    pthread_mutex_unlock(&r->lock);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    yajl_gen_free(g);
    fputc('\n', out);
    return ferror(out) ? -EIO : 0;
}
