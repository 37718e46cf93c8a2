/* tracereq.c — L4 trace collection over the private communicator (tracereq.h). */
#include "reduce/tracereq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_parse.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/wire.h"
#include "pipeline/pipeline.h"
#include "tracer/ring.h"
#include "tracer/tracer.h"

#define TAG_TRQ 0x4160 /* tags of the private communicator: 0x4150.. clocksync.c, */
#define TAG_TRP 0x4161 /* 0x4157 agent.c, 0x4160.. here, 0x4170.. clockkeep.c */
#define TRQ_MAGIC 0x51525241u /* "ARRQ" */
#define TRP_MAGIC 0x50525241u /* "ARRP" */
#define FINAL_WAIT_NS 2000000000ull /* at the end, pending replies get at most this */
#define FINISH_WAIT_NS 2500000000ull

struct trq {            /* rank 0 -> target */
    uint32_t magic, id; /* id: plan index + 1 */
    uint64_t from, to, t0_ns;
    uint32_t max_events, crc;
};

struct trp {            /* target -> rank 0, then len bytes of JSON (an array of events) */
    uint32_t magic, id, rank, truncated;
    uint64_t events, first_step, last_step;
    int64_t shift_ns;
    uint32_t len, crc;  /* CRC32C of this header (crc = 0) xor of the JSON */
};

struct part {           /* one target's reply, rank 0 */
    int got;
    struct trp h;
    char *json;
};

struct collect {        /* one plan being collected, rank 0 */
    struct trq q;
    MPI_Request req[ARGUS_TRACE_TARGETS];
    int nreq;
    struct part p[ARGUS_TRACE_TARGETS];
};

static struct {
    struct argus_tracereq_opts o;
    int on;
    char *reply;             /* the reply in flight (not rank 0) */
    MPI_Request sreq;
    int sending;
    struct collect *col;     /* rank 0: [plans->max] */
    struct argus_tracereq_stats st;
} tracereq;

static uint32_t crc_of(const void *hdr, size_t hlen, const void *body, size_t blen)
{
    return argus_crc32c(hdr, hlen) ^ argus_crc32c(body, blen);
}

int argus_tracereq_init(const struct argus_tracereq_opts *o)
{
    memset(&tracereq, 0, sizeof tracereq);
    tracereq.o = *o;
    if (o->rank == 0 && o->plans && o->plans->max) {
        tracereq.col = calloc(o->plans->max, sizeof *tracereq.col);
        if (!tracereq.col)
            return -ENOMEM;
    }
    tracereq.on = 1;
    return 0;
}

/* ---- every rank: answer a request ------------------------------------------------- */

/* Dump this rank's ring for q into *json (malloc'd) and fill h. */
static int dump_local(const struct trq *q, int64_t offset_ns, char **json, struct trp *h)
{
    struct argus_ring *ring = argus_tracer_ring();
    int64_t shift = offset_ns;
    struct argus_ring_dump_info info = {0};
    struct argus_coords c;
    char label[96];
    size_t len = 0;

    if (ring) { /* GPU timestamps: onto the wall clock by the latest clock triple */
        uint64_t clk[3];
        argus_tracer_clock_triple(clk);
        if (clk[1])
            shift += (int64_t)(clk[1] - clk[0]);
    } else {
        ring = tracereq.o.api_ring;
    }
    argus_tracer_coords(&c);
    if (c.tp_size || c.pp_size || c.dp_size)
        snprintf(label, sizeof label, "rank %d (DP %u PP %u TP %u)", tracereq.o.rank, c.dp, c.pp,
                 c.tp);
    else
        snprintf(label, sizeof label, "rank %d", tracereq.o.rank);
    *json = NULL;
    FILE *f = open_memstream(json, &len);
    if (!f)
        return -ENOMEM;
    size_t max = tracereq.o.max_events;
    if (q->max_events && q->max_events < max)
        max = q->max_events;
    int rc = ring ? argus_ring_dump_events(ring, f, (uint32_t)tracereq.o.rank, label, q->from,
                                           q->to, shift, q->t0_ns, max, &info)
                  : (fputs("[]\n", f) == EOF ? -EIO : 0);
    if (fclose(f) != 0 && rc == 0)
        rc = -EIO;
    if (rc) {
        free(*json);
        *json = NULL;
        return rc;
    }
    memset(h, 0, sizeof *h);
    h->magic = TRP_MAGIC;
    h->id = q->id;
    h->rank = (uint32_t)tracereq.o.rank;
    h->truncated = (uint32_t)info.truncated;
    h->events = info.events;
    h->first_step = info.first_step;
    h->last_step = info.last_step;
    h->shift_ns = shift;
    h->len = (uint32_t)len;
    h->crc = crc_of(h, sizeof *h, *json, len);
    return 0;
}

static int check_trq(const struct trq *q)
{
    struct trq c = *q;
    c.crc = 0;
    return q->magic == TRQ_MAGIC && q->crc == argus_crc32c(&c, sizeof c);
}

/* Not rank 0: take one request and send the reply (one in flight). */
static int serve(int64_t offset_ns)
{
    int flag = 0, count = 0, any = 0;
    MPI_Message msg;
    MPI_Status st;

    if (tracereq.sending) {
        int done = 0;
        if (MPI_Test(&tracereq.sreq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            done = 1;
        if (!done)
            return 0;
        tracereq.sending = 0;
        free(tracereq.reply);
        tracereq.reply = NULL;
        any = 1;
    }
    if (MPI_Improbe(0, TAG_TRQ, tracereq.o.comm, &flag, &msg, &st) != MPI_SUCCESS || !flag)
        return any;
    struct trq q;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count != (int)sizeof q) {
        char dummy[64];
        MPI_Mrecv(dummy, count > 0 && count <= 64 ? count : 0, MPI_BYTE, &msg,
                  MPI_STATUS_IGNORE);
        argus_log_once(ARGUS_LOG_WARN, "trq-bad", "rank %d: a damaged trace request was "
                       "ignored", tracereq.o.rank);
        return 1;
    }
    MPI_Mrecv(&q, (int)sizeof q, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (!check_trq(&q)) {
        argus_log_once(ARGUS_LOG_WARN, "trq-bad", "rank %d: a damaged trace request was "
                       "ignored", tracereq.o.rank);
        return 1;
    }
    struct trp h;
    char *json = NULL;
    if (dump_local(&q, offset_ns, &json, &h) != 0) {
        argus_log_once(ARGUS_LOG_WARN, "trq-dump", "rank %d: out of memory for a trace dump; "
                       "rank 0 gets none from this rank", tracereq.o.rank);
        return 1;
    }
    size_t n = sizeof h + h.len;
    tracereq.reply = malloc(n);
    if (!tracereq.reply || n > (size_t)INT32_MAX) {
        free(json);
        free(tracereq.reply);
        tracereq.reply = NULL;
        return 1;
    }
    memcpy(tracereq.reply, &h, sizeof h);
    memcpy(tracereq.reply + sizeof h, json, h.len);
    free(json);
    if (MPI_Isend(tracereq.reply, (int)n, MPI_BYTE, 0, TAG_TRP, tracereq.o.comm, &tracereq.sreq) !=
        MPI_SUCCESS) {
        free(tracereq.reply);
        tracereq.reply = NULL;
        return 1;
    }
    tracereq.sending = 1;
    tracereq.st.served++;
    return 1;
}

/* ---- rank 0: ask, collect, write ---------------------------------------------------- */

static int target_index(const struct argus_trace_plan *p, uint32_t rank)
{
    for (uint32_t k = 0; k < p->ntargets; k++)
        if (p->targets[k] == rank)
            return (int)k;
    return -1;
}

static void ask(size_t i, int64_t offset_ns)
{
    struct argus_trace_plan *p = &tracereq.o.plans->v[i];
    struct collect *c = &tracereq.col[i];

    memset(c, 0, sizeof *c);
    c->q = (struct trq){.magic = TRQ_MAGIC, .id = (uint32_t)(i + 1), .from = p->from,
                        .to = p->to, .t0_ns = tracereq.o.t0_ns,
                        .max_events = (uint32_t)tracereq.o.max_events};
    c->q.crc = argus_crc32c(&c->q, sizeof c->q);
    p->state = ARGUS_TRACE_ASKED;
    p->asked_ns = argus_clock_monotonic_ns();
    tracereq.st.asked++;
    for (uint32_t k = 0; k < p->ntargets; k++) {
        if (p->targets[k] == 0) {
            if (dump_local(&c->q, offset_ns, &c->p[k].json, &c->p[k].h) == 0)
                c->p[k].got = 1;
            continue;
        }
        if (MPI_Isend(&c->q, (int)sizeof c->q, MPI_BYTE, (int)p->targets[k], TAG_TRQ,
                      tracereq.o.comm, &c->req[c->nreq]) == MPI_SUCCESS)
            c->nreq++;
    }
}

static int json_ok(const char *s, size_t n)
{
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    if (!h)
        return 0;
    int ok = yajl_parse(h, (const unsigned char *)s, n) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok && n >= 2 && s[0] == '[';
}

/* Take every reply that has arrived. */
static int collect_replies(void)
{
    int any = 0;

    for (;;) {
        int flag = 0, count = 0;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, TAG_TRP, tracereq.o.comm, &flag, &msg, &st) != MPI_SUCCESS
            || !flag)
            return any;
        any = 1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        char *buf = count > 0 ? malloc((size_t)count) : NULL;
        MPI_Mrecv(buf, buf ? count : 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        struct trp h;
        if (!buf || (size_t)count < sizeof h) {
            free(buf);
            continue;
        }
        memcpy(&h, buf, sizeof h);
        struct trp c = h;
        c.crc = 0;
        size_t i = (size_t)h.id - 1;
        int k = -1;
        if (h.magic == TRP_MAGIC && (size_t)count == sizeof h + h.len &&
            h.crc == crc_of(&c, sizeof c, buf + sizeof h, h.len) && h.id >= 1 &&
            i < tracereq.o.plans->n && tracereq.o.plans->v[i].state == ARGUS_TRACE_ASKED &&
            (int)h.rank == st.MPI_SOURCE)
            k = target_index(&tracereq.o.plans->v[i], h.rank);
        if (k < 0 || tracereq.col[i].p[k].got || !json_ok(buf + sizeof h, h.len)) {
            argus_log_once(ARGUS_LOG_WARN, "trp-bad", "a damaged or unexpected trace reply "
                           "from rank %d was dropped", st.MPI_SOURCE);
            free(buf);
            continue;
        }
        tracereq.st.replies++;
        tracereq.st.reply_bytes += h.len;
        struct part *pt = &tracereq.col[i].p[k];
        pt->h = h;
        pt->json = malloc((size_t)h.len + 1);
        if (pt->json) {
            memcpy(pt->json, buf + sizeof h, h.len);
            pt->json[h.len] = '\0';
            pt->got = 1;
        }
        free(buf);
    }
}

/* Write plan i's trace with what arrived (pipeline.h), or mark it failed. */
static void finish_plan(size_t i)
{
    struct collect *c = &tracereq.col[i];
    struct argus_pipeline_trace_reply reply[ARGUS_TRACE_TARGETS];

    for (int r = 0; r < c->nreq; r++)
        MPI_Request_free(&c->req[r]); /* small eager requests; never waited on */
    c->nreq = 0;
    for (uint32_t k = 0; k < ARGUS_TRACE_TARGETS; k++)
        reply[k] = (struct argus_pipeline_trace_reply){
            .got = c->p[k].got, .json = c->p[k].json, .len = c->p[k].h.len,
            .events = c->p[k].h.events, .first_step = c->p[k].h.first_step,
            .last_step = c->p[k].h.last_step};
    if (argus_pipeline_write_trace(tracereq.o.plans, i, tracereq.o.dir, reply))
        tracereq.st.written++;
    else
        tracereq.st.failed++;
    for (uint32_t k = 0; k < ARGUS_TRACE_TARGETS; k++) {
        free(c->p[k].json);
        c->p[k].json = NULL;
    }
}

static int root_round(int64_t offset_ns, int final)
{
    struct argus_traceplan *tp = tracereq.o.plans;
    int any = 0;

    if (!tp || !tracereq.col)
        return 0;
    for (size_t i = 0; i < tp->n; i++)
        if (tp->v[i].state == ARGUS_TRACE_WANTED && !final) {
            ask(i, offset_ns);
            any = 1;
        }
    any |= collect_replies();
    const uint64_t now = argus_clock_monotonic_ns();
    for (size_t i = 0; i < tp->n; i++) {
        struct argus_trace_plan *p = &tp->v[i];
        if (p->state != ARGUS_TRACE_ASKED)
            continue;
        uint32_t got = 0;
        for (uint32_t k = 0; k < p->ntargets; k++)
            got += (uint32_t)tracereq.col[i].p[k].got;
        uint64_t waited = now - p->asked_ns;
        if (got == p->ntargets || waited > (uint64_t)tracereq.o.timeout_ms * 1000000ull ||
            (final && waited > FINAL_WAIT_NS)) {
            finish_plan(i);
            any = 1;
        }
    }
    return any;
}

int argus_tracereq_poll(int64_t offset_ns, int final)
{
    if (!tracereq.on)
        return 0;
    if (tracereq.o.rank == 0)
        return root_round(offset_ns, final);
    return serve(offset_ns);
}

int argus_tracereq_busy(void)
{
    if (!tracereq.on)
        return 0;
    if (tracereq.o.rank != 0)
        return tracereq.sending;
    for (size_t i = 0; tracereq.o.plans && i < tracereq.o.plans->n; i++)
        if (tracereq.o.plans->v[i].state == ARGUS_TRACE_ASKED)
            return 1;
    return 0;
}

void argus_tracereq_finish(int64_t offset_ns, int linger)
{
    const uint64_t until = argus_clock_monotonic_ns() + FINISH_WAIT_NS;

    while (linger && argus_tracereq_busy() && argus_clock_monotonic_ns() < until)
        if (!argus_tracereq_poll(offset_ns, 1)) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
    argus_tracereq_free();
}

void argus_tracereq_free(void)
{
    if (!tracereq.on)
        return;
    if (tracereq.sending) {
        /* still in flight at the very end: leave the buffer to MPI, never free it early */
        MPI_Request_free(&tracereq.sreq);
        tracereq.reply = NULL;
    }
    free(tracereq.reply);
    if (tracereq.col && tracereq.o.plans)
        for (size_t i = 0; i < tracereq.o.plans->n; i++) {
            for (int r = 0; r < tracereq.col[i].nreq; r++)
                MPI_Request_free(&tracereq.col[i].req[r]);
            for (uint32_t k = 0; k < ARGUS_TRACE_TARGETS; k++)
                free(tracereq.col[i].p[k].json);
        }
    free(tracereq.col);
    memset(&tracereq, 0, sizeof tracereq);
}

void argus_tracereq_get_stats(struct argus_tracereq_stats *st)
{
    *st = tracereq.st;
}
