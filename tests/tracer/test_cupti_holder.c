/* test_cupti_holder.c — cmocka units for living beside other CUPTI users and for the
 * adapter's step marker, with a fake CUPTI linked in place of libcupti (this file
 * defines every CUPTI call tracer/cupti_adapter.c makes, and cuDriverGetVersion):
 *   - argus_cupti_holder (tracer/cupti_holder.c) on subscriber names, environments and
 *     /proc/self/maps texts;
 *   - InitializeInjection when the fake refuses a second subscriber (the test subscribed
 *     first, as NVRx would) or refuses activity kinds: one reason, GPU hooks left off,
 *     argus.h steps and phases still summarised, every summary flagged NO_CUPTI + why;
 *   - InitializeInjection accepted: argus.h step marks take the marker's correlation id
 *     through the driver callback, and kernels the fake GPU runs a step late land in the
 *     step that launched them.
 * Each InitializeInjection case runs in its own child process (the injection is once per
 * process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/types.h"
#include "tracer/argus.h"
#include "tracer/cupti_holder.h"
#include "tracer/tracer.h"

int InitializeInjection(void);

/* ---- the fake CUPTI ---------------------------------------------------------------- */

static struct {
    pthread_mutex_t mu;
    int subscribers, unsubscribed, refuse_activity;
    char first_name[64];
    CUpti_CallbackFunc cb;
    void *ud;
    int marker_cb; /* cuDriverGetVersion's driver callback enabled */
    uint32_t corr; /* the next correlation id */
    CUpti_BuffersCallbackRequestFunc req;
    CUpti_BuffersCallbackCompleteFunc done;
    uint8_t *buf;
    size_t size, len;
} fk = {.mu = PTHREAD_MUTEX_INITIALIZER, .corr = 1};

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb,
                                       void *ud, CUpti_SubscriberParams *p)
{
    if (fk.subscribers) { /* one subscriber per process, as CUPTI */
        if (p && p->oldSubscriberName && p->oldSubscriberSize)
            snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s", fk.first_name);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    fk.subscribers = 1;
    snprintf(fk.first_name, sizeof fk.first_name, "%s",
             p && p->subscriberName ? p->subscriberName : "");
    fk.cb = cb;
    fk.ud = ud;
    *s = (CUpti_SubscriberHandle)&fk;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    fk.unsubscribed++;
    fk.subscribers = 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle s,
                                       CUpti_CallbackDomain d)
{
    (void)en, (void)s, (void)d;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle s,
                                         CUpti_CallbackDomain d, CUpti_CallbackId id)
{
    (void)s;
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion)
        fk.marker_cb = (int)en;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k)
{
    (void)k;
    return fk.refuse_activity ? CUPTI_ERROR_NOT_COMPATIBLE : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind k)
{
    (void)k;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                    CUpti_BuffersCallbackCompleteFunc c)
{
    fk.req = r;
    fk.done = c;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *t)
{
    *t = 1;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
    (void)c, (void)s;
    *n = 0;
    return CUPTI_SUCCESS;
}

/* Completes the buffer in use (the records the fake GPU finished so far). */
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&fk.mu);
    if (fk.buf)
        fk.done(NULL, 0, fk.buf, fk.size, fk.len);
    fk.buf = NULL;
    pthread_mutex_unlock(&fk.mu);
    return CUPTI_SUCCESS;
}

/* Only Kernel10 records are written here: walk them. */
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **r)
{
    size_t off = *r ? (size_t)((uint8_t *)*r - b) + sizeof(CUpti_ActivityKernel10) : 0;
    if (off + sizeof(CUpti_ActivityKernel10) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *r = (CUpti_Activity *)(b + off);
    return CUPTI_SUCCESS;
}

/* The step marker's driver call: a correlation id, reported to the callback. */
CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    pthread_mutex_lock(&fk.mu);
    d.correlationId = fk.corr++;
    pthread_mutex_unlock(&fk.mu);
    d.callbackSite = CUPTI_API_ENTER;
    if (fk.marker_cb && fk.cb)
        fk.cb(fk.ud, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion, &d);
    *v = 13000;
    return CUDA_SUCCESS;
}

/* A launch: the next correlation id. */
static uint32_t fake_launch(void)
{
    pthread_mutex_lock(&fk.mu);
    uint32_t c = fk.corr++;
    pthread_mutex_unlock(&fk.mu);
    return c;
}

/* The GPU finished a kernel: its record goes into the buffer in use. */
static void fake_ran(const char *name, uint64_t s, uint64_t e, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    size_t max = 0;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = s;
    k.end = e;
    k.correlationId = corr;
    pthread_mutex_lock(&fk.mu);
    if (!fk.buf) {
        fk.req(&fk.buf, &fk.size, &max);
        fk.len = 0;
    }
    assert_non_null(fk.buf);
    assert_true(fk.len + sizeof k <= fk.size);
    memcpy(fk.buf + fk.len, &k, sizeof k);
    fk.len += sizeof k;
    pthread_mutex_unlock(&fk.mu);
}

/* ---- argus_cupti_holder ------------------------------------------------------------- */

static unsigned holder_of(const char *old, char **env, const char *maps, char *ev)
{
    FILE *f = maps ? fmemopen((void *)maps, strlen(maps), "r") : NULL;
    unsigned w = argus_cupti_holder(old, env, f, ev, 128);
    if (f)
        fclose(f);
    return w;
}

static void test_holder(void **state)
{
    char ev[128];
    char *none[] = {"PATH=/bin", "HOME=/root", NULL};
    char *nsys[] = {"PATH=/bin", "NSYS_PROFILING_SESSION_ID=7", NULL};
    char *kin[] = {"KINETO_USE_DAEMON=1", NULL};
    char *dcgm[] = {"DCGM_FR_X=1", NULL};
    const char *torch = "7f00-7f01 r-xp 0 08:01 1 /opt/torch/lib/libtorch_cuda.so\n"
                        "7f02-7f03 r-xp 0 08:01 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
    const char *nvrx = "7f00-7f01 r-xp 0 08:01 1 /opt/torch/lib/libtorch_cuda.so\n"
                       "7f04-7f05 r-xp 0 08:01 3 /py/nvidia_resiliency_ext/straggler/"
                       "cupti_module.so\n";
    const char *tools = "7f00-7f01 r-xp 0 08:01 1 /opt/nsys/libToolsInjection64.so\n";
    const char *plain = "7f00-7f01 r-xp 0 08:01 1 /usr/lib/libc.so.6\n[heap]\n";
    (void)state;

    assert_int_equal(holder_of("Nsight Systems", none, NULL, ev), ARGUS_CUPTI_HELD_NSYS);
    assert_string_equal(ev, "Nsight Systems");
    assert_int_equal(holder_of("SomeTool", none, tools, ev), ARGUS_CUPTI_HELD_OTHER);
    assert_string_equal(ev, "SomeTool"); /* CUPTI's name wins over guesses */
    assert_int_equal(holder_of("", nsys, NULL, ev), ARGUS_CUPTI_HELD_NSYS);
    assert_string_equal(ev, "NSYS_PROFILING_SESSION_ID");
    assert_int_equal(holder_of(NULL, kin, NULL, ev), ARGUS_CUPTI_HELD_KINETO);
    assert_int_equal(holder_of(NULL, dcgm, plain, ev), ARGUS_CUPTI_HELD_DCGM);
    assert_int_equal(holder_of(NULL, none, torch, ev), ARGUS_CUPTI_HELD_KINETO);
    assert_string_equal(ev, "libtorch_cuda.so");
    assert_int_equal(holder_of(NULL, none, nvrx, ev), ARGUS_CUPTI_HELD_NVRX);
    assert_string_equal(ev, "cupti_module.so"); /* its directory names NVRx */
    assert_int_equal(holder_of(NULL, none, tools, ev), ARGUS_CUPTI_HELD_NSYS);
    assert_int_equal(holder_of(NULL, none, plain, ev), ARGUS_CUPTI_HELD_OTHER);
    assert_string_equal(ev, "");
    assert_int_equal(holder_of(NULL, NULL, NULL, ev), ARGUS_CUPTI_HELD_OTHER);
    assert_string_equal(argus_cupti_why_name(ARGUS_CUPTI_HELD_NVRX),
                        "held by NVRx straggler detection");
}

/* ---- InitializeInjection ------------------------------------------------------------ */

static struct argus_step_summary sums[8];
static int n_sums;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    if (n_sums < 8)
        memcpy(&sums[n_sums++], s, offsetof(struct argus_step_summary, kmodes) +
                                       s->n_kmodes * sizeof s->kmodes[0]);
}

static const struct argus_tracer_opts topts = {.rank = 0, .max_events = 4096,
                                               .on_summary = on_summary};

#define T0 1700000000000000000ull

/* Three argus.h steps with a forward phase each (host times given). */
static void host_steps(void)
{
    for (uint64_t k = 1; k <= 3; k++) {
        uint64_t b = T0 + (k - 1) * 10000;
        argus_step_begin(k, b);
        argus_phase_push("forward", b + 1000);
        argus_phase_pop(b + 4000);
        argus_step_end(k, b + 10000);
    }
}

/* Argus comes second: the fake refuses it; it names the first subscriber and goes on. */
static void case_second_subscriber(void **state)
{
    CUpti_SubscriberHandle other;
    CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                .subscriberName = "nvidia_resiliency_ext straggler"};
    (void)state;

    assert_int_equal(cuptiSubscribe_v2(&other, NULL, NULL, &p), CUPTI_SUCCESS);
    setenv("ARGUS_MODE", "on", 1);
    assert_int_equal(InitializeInjection(), 1);
    assert_null(argus_tracer_ring()); /* no GPU hooks installed */
    assert_int_equal(argus_tracer_start(&topts), 0);
    host_steps();
    argus_tracer_stop();
    assert_int_equal(n_sums, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sums[i].kernel_count, 0);
        assert_int_equal(sums[i].phase_wall_ns[ARGUS_PH_FORWARD], 3000);
        assert_true(sums[i].flags & ARGUS_SF_NO_CUPTI);
        assert_int_equal(ARGUS_SF_CUPTI_WHY(sums[i].flags), ARGUS_CUPTI_HELD_NVRX);
    }
}

/* Subscribed, but the activity kinds are refused: unsubscribed again, reason said. */
static void case_activity_refused(void **state)
{
    (void)state;
    fk.refuse_activity = 1;
    setenv("ARGUS_MODE", "on", 1);
    assert_int_equal(InitializeInjection(), 1);
    assert_int_equal(fk.unsubscribed, 1);
    assert_null(argus_tracer_ring());
    assert_int_equal(argus_tracer_start(&topts), 0);
    host_steps();
    argus_tracer_stop();
    assert_int_equal(n_sums, 3);
    assert_int_equal(ARGUS_SF_CUPTI_WHY(sums[2].flags), ARGUS_CUPTI_NO_ACTIVITY);
    assert_int_equal(sums[2].phase_wall_ns[ARGUS_PH_FORWARD], 3000);
}

/* Argus holds CUPTI: each argus.h step mark takes one marker id through the driver
 * callback, and kernels the fake GPU runs one step late stay in their launching step. */
static void case_marker(void **state)
{
    static const char *names[] = {"gemm1", "gemm2", "gemm3", "gemm4"};
    uint32_t launched[4][4];
    (void)state;

    setenv("ARGUS_MODE", "on", 1);
    setenv("ARGUS_RING_EVENTS", "0", 1);
    assert_int_equal(InitializeInjection(), 1);
    assert_int_equal(fk.marker_cb, 1);
    assert_int_equal(argus_tracer_start(&topts), 0);
    for (int k = 1; k <= 5; k++) {
        uint64_t b = T0 + (uint64_t)(k - 1) * 10000;
        if (k <= 4) {
            argus_step_begin((uint64_t)k, b);
            for (int i = 0; i < k; i++) /* step k launches k kernels */
                launched[k - 1][i] = fake_launch();
        }
        if (k >= 2) /* meanwhile the GPU runs step k - 1's kernels */
            for (int i = 0; i < k - 1; i++)
                fake_ran(names[k - 2], b + 100 + (uint64_t)i * 1000,
                         b + 600 + (uint64_t)i * 1000, launched[k - 2][i]);
        if (k <= 4)
            argus_step_end((uint64_t)k, b + 10000);
        else
            cuptiActivityFlushAll(0);
    }
    argus_tracer_stop();
    assert_int_equal(n_sums, 4);
    for (int k = 1; k <= 4; k++) {
        assert_int_equal(sums[k - 1].step, (uint64_t)k);
        assert_int_equal(sums[k - 1].kernel_count, (uint64_t)k);
        assert_int_equal(sums[k - 1].n_kmodes, 1);
        assert_int_equal(sums[k - 1].kmodes[0].name_hash, argus_name_hash(names[k - 1]));
        assert_false(sums[k - 1].flags & ARGUS_SF_NO_CUPTI);
    }
}

static const struct CMUnitTest cases[] = {
    cmocka_unit_test(case_second_subscriber),
    cmocka_unit_test(case_activity_refused),
    cmocka_unit_test(case_marker),
};

/* Run cases[i] alone in a child: 0 when it passed. */
static int in_child(size_t i)
{
    pid_t pid;
    int st = 0;

    fflush(NULL);
    pid = fork();
    if (pid == 0)
        _exit(_cmocka_run_group_tests(cases[i].name, &cases[i], 1, NULL, NULL) ? 1 : 0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void test_second_subscriber(void **state)
{
    (void)state;
    assert_int_equal(in_child(0), 0);
}

static void test_activity_refused(void **state)
{
    (void)state;
    assert_int_equal(in_child(1), 0);
}

static void test_marker(void **state)
{
    (void)state;
    assert_int_equal(in_child(2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holder),
        cmocka_unit_test(test_second_subscriber),
        cmocka_unit_test(test_activity_refused),
        cmocka_unit_test(test_marker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
