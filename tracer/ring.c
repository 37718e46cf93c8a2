/* ring.c — the L4 raw-event ring and its Chrome-trace dump (ring.h), written with YAJL's
 * generator. Fixed memory; a dump copies the events it shows under the lock and streams
 * them to the FILE without it.
 */
#include "tracer/ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "common/types.h"

#define NAME_LEN 128
#define NAME_SLOTS (2 * ARGUS_RING_NAMES) /* open addressing, at most half full */

struct argus_ring {
    struct argus_ring_ev *ev;
    size_t cap, head, n;
    unsigned keep_steps;
    uint64_t last_step;
    pthread_mutex_t lock;
    /* add_copy's name table: names[i] never changes once written */
    char (*names)[NAME_LEN];
    uint16_t *slot; /* [NAME_SLOTS]: name index + 1, 0 empty */
    uint64_t *slot_hash;
    size_t nnames;
};

int argus_ring_create(size_t cap, unsigned keep_steps, struct argus_ring **out)
{
    struct argus_ring *r;

    if (!out || cap == 0 || keep_steps == 0)
        return -EINVAL;
    r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    pthread_mutex_init(&r->lock, NULL);
    r->ev = calloc(cap, sizeof *r->ev);
    r->names = calloc(ARGUS_RING_NAMES, sizeof *r->names);
    r->slot = calloc(NAME_SLOTS, sizeof *r->slot);
    r->slot_hash = calloc(NAME_SLOTS, sizeof *r->slot_hash);
    if (!r->ev || !r->names || !r->slot || !r->slot_hash) {
        argus_ring_free(r);
        return -ENOMEM;
    }
    r->cap = cap;
    r->keep_steps = keep_steps;
    *out = r;
    return 0;
}

void argus_ring_free(struct argus_ring *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r->ev);
    free(r->names);
    free(r->slot);
    free(r->slot_hash);
    free(r);
}

static void add_locked(struct argus_ring *r, const struct argus_ring_ev *e)
{
    r->ev[r->head] = *e;
    r->head = (r->head + 1) % r->cap;
    if (r->n < r->cap)
        r->n++;
    if (e->step > r->last_step)
        r->last_step = e->step;
}

void argus_ring_add(struct argus_ring *r, const struct argus_ring_ev *e)
{
    if (!r || !e)
        return;
    pthread_mutex_lock(&r->lock);
    add_locked(r, e);
    pthread_mutex_unlock(&r->lock);
}

/* The table's copy of name (lock held). */
static const char *intern_locked(struct argus_ring *r, const char *name)
{
    size_t len = 0;

    if (!name)
        return NULL;
    while (name[len] && len < NAME_LEN - 1) /* longer names are kept cut */
        len++;
    const uint64_t h = argus_name_hash(name) | 1; /* never 0 */
    for (size_t i = h % NAME_SLOTS;; i = (i + 1) % NAME_SLOTS) {
        if (!r->slot[i]) {
            if (r->nnames == ARGUS_RING_NAMES)
                return "[ring name table full]";
            memcpy(r->names[r->nnames], name, len);
            r->names[r->nnames][len] = '\0';
            r->slot_hash[i] = h;
            r->slot[i] = (uint16_t)(++r->nnames);
            return r->names[r->nnames - 1];
        }
        const char *have = r->names[r->slot[i] - 1];
        if (r->slot_hash[i] == h && strncmp(have, name, len) == 0 && have[len] == '\0')
            return have;
    }
}

void argus_ring_add_copy(struct argus_ring *r, const struct argus_ring_ev *e)
{
    if (!r || !e)
        return;
    pthread_mutex_lock(&r->lock);
    struct argus_ring_ev c = *e;
    c.name = intern_locked(r, e->name);
    add_locked(r, &c);
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

/* Copy the events to show (see ring.h) into a fresh array, oldest first. */
static int select_events(struct argus_ring *r, uint64_t from, uint64_t to, size_t max_events,
                         struct argus_ring_ev **out, size_t *nout, int *truncated)
{
    pthread_mutex_lock(&r->lock);
    uint64_t upper = to < r->last_step ? to : r->last_step;
    uint64_t lower = upper + 1 >= r->keep_steps ? upper + 1 - r->keep_steps : 0;
    if (from < lower)
        from = lower;
    size_t first = (r->head + r->cap - r->n) % r->cap, n = 0, cap = r->n;
    if (max_events && cap > max_events)
        cap = max_events;
    struct argus_ring_ev *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&r->lock);
        return -ENOMEM;
    }
    *truncated = 0;
    for (size_t i = r->n; i-- > 0;) { /* newest first */
        const struct argus_ring_ev *e = &r->ev[(first + i) % r->cap];
        if (e->step < from || e->step > to)
            continue;
        if (n == cap) {
            *truncated = 1;
            break;
        }
        v[n++] = *e;
    }
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < n / 2; i++) { /* oldest first */
        struct argus_ring_ev t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    *out = v;
    *nout = n;
    return 0;
}

static void write_events(yajl_gen g, uint32_t rank, const char *label,
                         const struct argus_ring_ev *v, size_t n, int64_t shift_ns,
                         uint64_t t0_ns)
{
    uint32_t streams[64];
    unsigned ns = 0;
    char buf[64];

    if (!label) {
        snprintf(buf, sizeof buf, "rank %u", rank);
        label = buf;
    }
    meta(g, "process_name", rank, 0, label);
    for (size_t i = 0; i < n; i++) {
        const struct argus_ring_ev *e = &v[i];
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
        int64_t ts = (int64_t)(e->start_ns + (uint64_t)shift_ns - t0_ns);
        gnum(g, "ts", (double)ts / 1000.0);
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
}

int argus_ring_dump_events(struct argus_ring *r, FILE *out, uint32_t rank, const char *label,
                           uint64_t from, uint64_t to, int64_t shift_ns, uint64_t t0_ns,
                           size_t max_events, struct argus_ring_dump_info *info)
{
    struct argus_ring_ev *v = NULL;
    size_t n = 0;
    int truncated = 0, rc;

    if (!r || !out)
        return -EINVAL;
    if ((rc = select_events(r, from, to, max_events, &v, &n, &truncated)) != 0)
        return rc;
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) {
        free(v);
        return -ENOMEM;
    }
    yajl_gen_config(g, yajl_gen_print_callback, print_cb, out);
    yajl_gen_config(g, yajl_gen_validate_utf8, 1);
    yajl_gen_array_open(g);
    write_events(g, rank, label, v, n, shift_ns, t0_ns);
    yajl_gen_array_close(g);
    yajl_gen_free(g);
    fputc('\n', out);
    if (info) {
        info->events = n;
        info->first_step = n ? v[0].step : 0;
        info->last_step = n ? v[n - 1].step : 0;
        info->truncated = truncated;
    }
    free(v);
    return ferror(out) ? -EIO : 0;
}
