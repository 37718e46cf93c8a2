/* cupti_adapter.c — the only file in Argus that includes CUPTI headers (built only when
 * configure found CUPTI). Two parts:
 *   1. argus_cupti_walk: CUPTI activity records -> struct argus_act (tested on
 *      synthesized buffers, no GPU needed: cuptiActivityGetNextRecord only parses);
 *   2. InitializeInjection, called by the CUDA driver in every process started with
 *      CUDA_INJECTION64_PATH=libargus.so: version gate, cuptiSubscribe_v2 (when another
 *      tool holds CUPTI: which one, in one line, and the tracer goes on at phase level),
 *      activity kinds, buffer callbacks into the collector's preallocated pool, NVTX
 *      callbacks into nvtx_map, the step marks' correlation marker, flush at exit.
 *      This part runs only on a GPU and is kept as small as possible.
 * Never aborts or exits; every failure turns GPU collection off with one log line and
 * marks the tracer's summaries with the reason (tracer.h argus_tracer_set_no_cupti).
 */
#include "tracer/cupti_adapter.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "tracer/collect.h"
#include "tracer/cupti_holder.h"
#include "tracer/nvtx_map.h"
#include "tracer/period.h"
#include "tracer/ring.h"
#include "tracer/tracer.h"

/* ---- part 1: records ----------------------------------------------------------------- */

static const char *memcpy_name(unsigned kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "[memcpy HtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "[memcpy DtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "[memcpy DtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "[memcpy PtoP]";
    default: return "[memcpy]";
    }
}

/* 1: a has an activity; 0: counted and skipped. */
static int convert(const CUpti_Activity *r, struct argus_act *a, struct argus_act_stats *st)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)r;
        *a = (struct argus_act){k->name ? k->name : "[unnamed kernel]", k->start, k->end, 0,
                                k->deviceId, k->streamId, k->correlationId, ARGUS_ACT_KERNEL};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)r;
        *a = (struct argus_act){memcpy_name(m->copyKind), m->start, m->end, m->bytes,
                                m->deviceId, m->streamId, m->correlationId, ARGUS_ACT_MEMCPY};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)r;
        *a = (struct argus_act){"[memset]", m->start, m->end, m->bytes, m->deviceId,
                                m->streamId, m->correlationId, ARGUS_ACT_MEMSET};
        break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
        const CUpti_ActivityGraphTrace2 *g = (const void *)r;
        *a = (struct argus_act){"[cuda graph]", g->start, g->end, 0, g->deviceId,
                                g->streamId, g->correlationId, ARGUS_ACT_GRAPH};
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const void *)r;
        st->overhead++;
        if (o->end > o->start)
            st->overhead_ns += o->end - o->start;
        return 0;
    }
    default:
        st->unknown++;
        return 0;
    }
    if (a->start_ns == 0 && a->end_ns == 0) {
        st->zero_ts++;
        return 0;
    }
    if (a->start_ns == 0 || a->end_ns < a->start_ns) {
        st->bad_ts++;
        return 0;
    }
    return 1;
}

size_t argus_cupti_walk(uint8_t *buf, size_t valid, struct argus_act_stats *st,
                        argus_act_fn fn, void *ctx)
{
    CUpti_Activity *r = NULL;
    struct argus_act a;
    size_t n = 0;
    CUptiResult rc;

    if (!buf || valid == 0)
        return 0;
    while ((rc = cuptiActivityGetNextRecord(buf, valid, &r)) == CUPTI_SUCCESS) {
        st->records++;
        if (convert(r, &a, st)) {
            fn(ctx, &a);
            n++;
        }
    }
    if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED)
        st->invalid++;
    st->delivered += n;
    return n;
}

/* ---- part 2: injection (GPU only) ---------------------------------------------------- */

static struct {
    pthread_mutex_t once;
    int tried, on;
    CUpti_SubscriberHandle sub;
    struct argus_collect *c;
    struct argus_ring *ring;
    struct argus_period *per;
    struct argus_nvtx_map map;
    uint64_t clk_cupti, clk_real, clk_mono; /* the latest clock triple (drain thread) */
    int (*marker)(int *); /* cuDriverGetVersion: the step marks' correlation marker */
} cupti_state = {.once = PTHREAD_MUTEX_INITIALIZER};

/* The correlation id of this thread's last marker call (set by its driver callback). */
static _Thread_local uint32_t marker_corr;

/* One cheap driver call at a step mark: its callback reports the call's correlation id,
 * which splits the kernel stream at the mark (collect.h). 0 when no marker is set up. */
static uint32_t marker_take(void)
{
    int v;

    if (!cupti_state.marker)
        return 0;
    marker_corr = 0;
    cupti_state.marker(&v);
    return marker_corr;
}

static uint64_t now_cupti(void)
{
    uint64_t t = 0;
    if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
        t = argus_clock_realtime_ns();
    return t;
}

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max)
{
    *max = 0;
    if (argus_collect_buf_get(cupti_state.c, buf, size) != 0) {
        *buf = NULL;
        *size = 0;
    }
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size,
                                  size_t valid)
{
    (void)ctx, (void)sid, (void)size;
    argus_collect_buf_done(cupti_state.c, buf, valid);
}

/* Read the (CUPTI, realtime, monotonic) triple and publish it to the summaries. */
static void clock_triple_take(void)
{
    cupti_state.clk_cupti = now_cupti();
    cupti_state.clk_real = argus_clock_realtime_ns();
    cupti_state.clk_mono = argus_clock_monotonic_ns();
    argus_tracer_set_clock_triple(cupti_state.clk_cupti, cupti_state.clk_real,
                                  cupti_state.clk_mono);
}

/* Called by the collector at step boundaries; refreshes the clock triple once a second so
 * drift between the GPU and host clocks can be followed over a long job. */
static int flush_all(int forced)
{
    if (!forced
        && argus_clock_monotonic_ns() - cupti_state.clk_mono >= 1000000000ull) /* drain thr. */
        clock_triple_take();
    return cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0) ==
                   CUPTI_SUCCESS ? 0 : -EIO;
}

static uint64_t dropped_count(void)
{
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &n) != CUPTI_SUCCESS)
        return 0;
    return n;
}

static void on_step(void *ctx, int begin, uint64_t step)
{
    (void)ctx;
    uint32_t corr = marker_take();
    argus_collect_mark_corr(cupti_state.c, begin ? ARGUS_MARK_STEP_BEGIN : ARGUS_MARK_STEP_END,
                            step, now_cupti(), 0, corr);
    argus_tracer_deliver(); /* summaries reach reduce/ on the application thread */
}

static void on_phase(void *ctx, int push, unsigned phase)
{
    (void)ctx;
    argus_collect_mark(cupti_state.c, push ? ARGUS_MARK_PHASE_PUSH : ARGUS_MARK_PHASE_POP, 0,
                       now_cupti(), phase);
}

static const char *attr_message(const nvtxEventAttributes_t *ea)
{
    if (!ea)
        return NULL;
    if (ea->messageType == NVTX_MESSAGE_TYPE_ASCII)
        return ea->message.ascii;
    if (ea->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        return argus_nvtx_string_get(&cupti_state.map, ea->message.registered);
    return NULL; /* unicode names are not mapped */
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id,
                              const void *cbdata)
{
    const CUpti_NvtxData *d = cbdata;

    (void)ud;
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API) { /* only the marker's callback is enabled */
        const CUpti_CallbackData *api = cbdata;
        if (id == CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion && api &&
            api->callbackSite == CUPTI_API_ENTER)
            marker_corr = api->correlationId;
        return;
    }
    if (dom != CUPTI_CB_DOMAIN_NVTX || !d || !d->functionParams)
        return;
    switch (id) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
        argus_nvtx_push(&cupti_state.map,
                        ((const nvtxRangePushA_params *)d->functionParams)->message);
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        argus_nvtx_push(&cupti_state.map, attr_message(
            ((const nvtxRangePushEx_params *)d->functionParams)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        argus_nvtx_push(&cupti_state.map, attr_message(
            ((const nvtxDomainRangePushEx_params *)d->functionParams)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        argus_nvtx_pop(&cupti_state.map);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
        if (d->functionReturnValue)
            argus_nvtx_string_put(
                &cupti_state.map, *(const nvtxStringHandle_t *)d->functionReturnValue,
                ((const nvtxDomainRegisterStringA_params *)d->functionParams)->string);
        break;
    default:
        break;
    }
}

/* Whether the injected collector is running in this process. */
static int cupti_active(void) { return __atomic_load_n(&cupti_state.on, __ATOMIC_ACQUIRE); }

/* The argus_gpu_mark_fn hook (tracer.h): an argus.h mark goes to the collector. kind:
 * enum argus_mark_kind; phase only for pushes. */
static void cupti_mark(int kind, uint64_t step, uint64_t t_ns, unsigned phase)
{
    if (!cupti_active())
        return;
    uint32_t corr = kind <= ARGUS_MARK_STEP_END ? marker_take() : 0;
    argus_collect_mark_corr(cupti_state.c, (enum argus_mark_kind)kind, step, t_ns, phase, corr);
}

/* The step marks' correlation marker (collect.h): cuDriverGetVersion from the driver that
 * injected us, with only its driver callback enabled (the launches stay untraced by
 * callbacks). Not called here (this runs inside cuInit): a mark whose call brings no id
 * is simply time-based, and the exit line counts both kinds of steps. */
static void marker_setup(void)
{
    void *f = dlsym(RTLD_DEFAULT, "cuDriverGetVersion");

    if (f && cuptiEnableCallback(1, cupti_state.sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                 CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion) == CUPTI_SUCCESS) {
        memcpy(&cupti_state.marker, &f, sizeof f);
        argus_log_once(ARGUS_LOG_INFO, "step-assign", "kernels go to the step whose host "
                       "code launched them (one correlation marker per step mark)");
        return;
    }
    cupti_state.marker = NULL;
    argus_log_once(ARGUS_LOG_INFO, "step-assign", "no correlation marker (%s); kernels go "
                   "to the step whose host marks hold their GPU start time",
                   f ? "the driver callback was refused" : "cuDriverGetVersion not found");
}

static void drain_final(void)
{
    struct argus_collect_stats cs;

    if (!cupti_active())
        return;
    argus_collect_stop(cupti_state.c); /* forced flush, replay every step; thread joined */
    argus_collect_get_stats(cupti_state.c, &cs);
    argus_log_once(ARGUS_LOG_INFO, "step-assign-done", "GPU steps: %llu by launch, %llu by "
                   "start time; %llu to %llu activities a step, %llu outside any step",
                   (unsigned long long)cs.steps_by_launch, (unsigned long long)cs.steps_by_time,
                   (unsigned long long)cs.acts_min, (unsigned long long)cs.acts_max,
                   (unsigned long long)cs.outside);
}

static void at_exit(void)
{
    drain_final();
    argus_tracer_deliver();
}

/* GPU collection cannot start (why: enum argus_cupti_why, evidence may be ""): one line,
 * and the tracer keeps the argus.h steps and phases, marking its summaries (tracer.h);
 * NCCL data and host stacks need no CUPTI and go on as they are. */
static void unavailable(unsigned why, const char *evidence)
{
    argus_tracer_set_no_cupti(why);
    argus_log_once(ARGUS_LOG_WARN, "cupti", "CUPTI unavailable (%s%s%s); no GPU kernels are "
                   "traced, the diagnosis continues at phase level (argus.h steps and phases, "
                   "NCCL, host stacks)", argus_cupti_why_name(why), evidence[0] ? ": " : "",
                   evidence);
}

/* Which tool holds CUPTI (cupti_holder.h), from the name CUPTI gave, the environment
 * and /proc/self/maps; maps: 0 to skip the file. */
static unsigned holder(const char *old, int maps, char *ev, size_t cap)
{
    extern char **environ;
    FILE *f = maps ? fopen("/proc/self/maps", "r") : NULL;
    unsigned why = argus_cupti_holder(old, environ, f, ev, cap);

    if (f)
        fclose(f);
    return why;
}

/* Before subscribing: a profiler that announces itself in the environment (Nsight) is
 * left CUPTI even when it has not subscribed yet. */
static unsigned profiler_in_env(char *ev, size_t cap)
{
    unsigned why = holder(NULL, 0, ev, cap);
    return why == ARGUS_CUPTI_HELD_NSYS || why == ARGUS_CUPTI_HELD_NCU ? why : 0;
}

/* Everything after the version check and subscription; 0 or -errno. */
static int setup(const struct argus_config *cfg)
{
    struct argus_collect_opts o = {
        .buf_size = (size_t)cfg->cupti_buf_kb * 1024, .n_bufs = (size_t)cfg->cupti_bufs,
        .max_stage = (size_t)cfg->max_events * 2, .walk = argus_cupti_walk,
        .flush = flush_all, .dropped = dropped_count, .acquire = argus_tracer_acquire,
        .release = argus_tracer_release,
    };
    char err[256];
    int rc;

    cupti_state.map.on_step = on_step;
    cupti_state.map.on_phase = on_phase;
    if (argus_nvtx_map_init(&cupti_state.map, cfg->phase_map, cfg->step_range, err, sizeof err))
        argus_log_once(ARGUS_LOG_WARN, "phase-map", "%s; using the defaults", err);
    if (cfg->ring_events && argus_ring_create((size_t)cfg->ring_events,
                                              (unsigned)cfg->ring_steps, &cupti_state.ring) == 0)
        o.ring = cupti_state.ring;
    if (cfg->step_detect && argus_period_create((size_t)cfg->period_max, &cupti_state.per) == 0)
        o.period = cupti_state.per;
    rc = argus_collect_create(&o, &cupti_state.c);
    if (rc)
        return rc;
    if (cuptiActivityRegisterCallbacks(buf_request, buf_complete) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD) != CUPTI_SUCCESS ||
        (cfg->graph_trace &&
         cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) != CUPTI_SUCCESS) ||
        cuptiEnableDomain(1, cupti_state.sub, CUPTI_CB_DOMAIN_NVTX) != CUPTI_SUCCESS)
        return -EIO;
    clock_triple_take();
    marker_setup();
    rc = argus_collect_start(cupti_state.c);
    if (rc)
        return rc;
    __atomic_store_n(&cupti_state.on, 1, __ATOMIC_RELEASE);
    argus_tracer_set_gpu_hooks(cupti_mark, drain_final, cupti_state.ring);
    atexit(at_exit);
    return 0;
}

ARGUS_EXPORT int InitializeInjection(void);

ARGUS_EXPORT int InitializeInjection(void)
{
    struct argus_config cfg;
    char old[256] = "", ev[256] = "";
    uint32_t ver = 0;
    unsigned why;
    int rc;

    pthread_mutex_lock(&cupti_state.once);
    if (cupti_state.tried)
        goto out;
    cupti_state.tried = 1;
    argus_log_init();
    argus_config_load(&cfg, NULL, NULL, 0);
    if (cfg.mode == ARGUS_MODE_OFF || !cfg.cupti)
        goto out;
    if ((why = profiler_in_env(ev, sizeof ev))) {
        unavailable(why, ev);
        goto out;
    }
    if (cuptiGetVersion(&ver) != CUPTI_SUCCESS || ver != CUPTI_API_VERSION) {
        snprintf(ev, sizeof ev, "version %u, built for %u", ver, (unsigned)CUPTI_API_VERSION);
        unavailable(ARGUS_CUPTI_VERSION, ev);
        goto out;
    }
    CUpti_SubscriberParams sp = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                 .subscriberName = "Argus",
                                 .oldSubscriberName = old,
                                 .oldSubscriberSize = sizeof old};
    CUptiResult cr = cuptiSubscribe_v2(&cupti_state.sub, callback, NULL, &sp);
    if (cr == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        unavailable(holder(old, 1, ev, sizeof ev), ev);
        goto out;
    }
    if (cr != CUPTI_SUCCESS) {
        snprintf(ev, sizeof ev, "cuptiSubscribe: CUPTI error %d", (int)cr);
        unavailable(ARGUS_CUPTI_NO_ACTIVITY, ev);
        goto out;
    }
    rc = setup(&cfg);
    if (rc) {
        /* Another tool may use the activity API without subscribing: name it if it is
         * known, else say what failed. */
        why = rc == -EIO ? holder(NULL, 1, ev, sizeof ev) : ARGUS_CUPTI_HELD_OTHER;
        if (why == ARGUS_CUPTI_HELD_OTHER) {
            why = ARGUS_CUPTI_NO_ACTIVITY;
            snprintf(ev, sizeof ev, "%s", rc == -EIO ? "activity kinds refused"
                                                      : strerror(-rc));
        }
        unavailable(why, ev);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_OVERHEAD);
        cuptiUnsubscribe(cupti_state.sub);
    }
out:
    pthread_mutex_unlock(&cupti_state.once);
    return 1; /* never refuse the program */
}
