/* test_summarizer.c — cmocka units for tracer/summarizer.c: hand-computed step
 * statistics (phases, busy union, host gap, longest idle interval, per-class totals),
 * step/phase edge cases, kernel clipping, the longest idle interval against a per-ns
 * oracle in both kernel orders, the name cache and argument checks. Mode splitting,
 * budgets, folding and the fast paths are in test_summarizer_modes.c. */
#include "tests/tracer/sm_testutil.h"

#include <errno.h>

/* One step on two streams with nested ranges; every number worked out by hand. */
static void run_hand_step(struct argus_summarizer *sm, uint64_t step, uint64_t b)
{
    argus_summarizer_step_begin(sm, step, b);
    argus_summarizer_phase_push(sm, "forward", b + 100);
    argus_summarizer_kernel(sm, "gemm", b + 150, b + 450, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "gemm", b + 400, b + 900, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_phase_pop(sm, b + 1100);
    argus_summarizer_phase_push(sm, "backward", b + 1200);
    argus_summarizer_phase_push(sm, "misc", b + 1500);     /* OTHER, nested */
    argus_summarizer_phase_pop(sm, b + 1700);
    argus_summarizer_phase_pop(sm, b + 2200);
    argus_summarizer_phase_push(sm, "optimizer", b + 2300);
    argus_summarizer_phase_pop(sm, b + 2500);
    /* Reported late (as CUPTI would): the phase comes from the kernel's start time. */
    argus_summarizer_kernel(sm, "allreduce", b + 1250, b + 1600, 0, 1, ARGUS_KC_COLLECTIVE);
    argus_summarizer_kernel(sm, "gemm", b + 1300, b + 1550, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "elementwise", b + 1600, b + 1650, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "send", b + 2000, b + 2100, 0, 1, ARGUS_KC_P2P);
    argus_summarizer_kernel(sm, "adam", b + 2350, b + 2450, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "copy", b + 2600, b + 2700, 0, 0, ARGUS_KC_MEMCPY);
    argus_summarizer_kernel(sm, "zero", b + 2650, b + 2750, 0, 1, ARGUS_KC_MEMSET);
    argus_summarizer_step_end(sm, step, b + 3000);
}

static void test_hand_computed(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    struct argus_coords c = {.tp_size = 2, .pp_size = 2, .dp_size = 4, .tp = 1, .dp = 3};
    (void)state;

    argus_summarizer_set_coords(sm, &c);
    run_hand_step(sm, 5, B);
    assert_int_equal(k.n_summaries, 1);
    const struct argus_step_summary *s = &k.last;
    assert_int_equal(s->step, 5);
    assert_int_equal(s->rank, 7);
    assert_int_equal(s->flags, 0);
    assert_int_equal(s->start_ns, B);
    assert_int_equal(s->end_ns, B + 3000);
    assert_int_equal(s->clock_offset_ns, 0); /* stamped later (summarizer.h) */
    assert_memory_equal(&s->coords, &c, sizeof c);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 1000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 800); /* 300 + 500, not nested */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OTHER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_COMM], 450);
    assert_int_equal(s->compute_ns, 1200);
    assert_int_equal(s->collective_ns, 350);
    assert_int_equal(s->p2p_ns, 100);
    assert_int_equal(s->memcpy_ns, 200);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_FORWARD], 800);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_BACKWARD], 250);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OTHER], 50);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OPTIMIZER], 100);
    /* [150,900] + [1250,1650] + [2000,2100] + [2350,2450] + [2600,2750] */
    assert_int_equal(s->busy_ns, 750 + 400 + 100 + 100 + 150);
    assert_int_equal(s->host_gap_ns, 3000 - 1500);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_HOST], 1500);
    /* idle 150, 350 (to 1250), 350 (to 2000), 250, 150, 250: the earlier 350 */
    assert_int_equal(s->idle_long_ns, 350);
    assert_int_equal(s->idle_long_end_ns, 1250);
    assert_int_equal(s->kernel_count, 9);
    assert_int_equal(s->dropped, 0);

    /* gemm: 250, 300 | 500 (500/300 >= 1.5) */
    assert_int_equal(s->n_kmodes, 8);
    check_sorted(s);
    const struct argus_kmode_stats *m = find(s, "gemm", 0);
    assert_non_null(m);
    assert_int_equal(m->count, 2);
    assert_int_equal(m->sum_ns, 550);
    assert_int_equal(m->min_ns, 250);
    assert_int_equal(m->max_ns, 300);
    assert_int_equal(m->kclass, ARGUS_KC_COMPUTE);
    assert_int_equal(m->phase, ARGUS_PH_FORWARD); /* 300 ns forward vs 250 backward */
    assert_int_equal(argus_qsketch_count(&m->sketch), 2);
    m = find(s, "gemm", 1);
    assert_non_null(m);
    assert_int_equal(m->count, 1);
    assert_int_equal(m->sum_ns, 500);
    assert_int_equal(m->phase, ARGUS_PH_FORWARD);
    m = find(s, "allreduce", 0);
    assert_non_null(m);
    assert_int_equal(m->kclass, ARGUS_KC_COLLECTIVE);
    assert_int_equal(m->phase, ARGUS_PH_BACKWARD);
    assert_int_equal(m->sum_ns, 350);
    assert_int_equal(m->last_end_ns, B + 1600); /* collectives: their last end */
    assert_int_equal(find(s, "gemm", 0)->last_end_ns, 0);
    assert_int_equal(find(s, "send", 0)->last_end_ns, 0);
    assert_int_equal(find(s, "elementwise", 0)->phase, ARGUS_PH_OTHER);
    assert_int_equal(find(s, "adam", 0)->phase, ARGUS_PH_OPTIMIZER);
    assert_int_equal(find(s, "send", 0)->kclass, ARGUS_KC_P2P);
    assert_int_equal(find(s, "copy", 0)->phase, ARGUS_PH_OTHER);
    assert_int_equal(find(s, "zero", 0)->kclass, ARGUS_KC_MEMSET);
    assert_int_equal(k.n_names, 7);

    /* A second identical step gives the same numbers and no new names. */
    run_hand_step(sm, 6, B + 10000);
    assert_int_equal(k.n_summaries, 2);
    assert_int_equal(k.last.busy_ns, 1500);
    assert_int_equal(k.last.n_kmodes, 8);
    assert_int_equal(find(&k.last, "allreduce", 0)->last_end_ns, B + 11600);
    assert_int_equal(k.n_names, 7);
    assert_int_equal(argus_summarizer_kernels(sm), 18);
    assert_int_equal(argus_summarizer_dropped(sm), 0);
    argus_summarizer_free(sm);
}

static void test_outside_step_dropped(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    argus_summarizer_kernel(sm, "early", B, B + 5, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 10); /* no begin: ignored */
    assert_int_equal(k.n_summaries, 0);
    argus_summarizer_step_begin(sm, 1, B + 100);
    argus_summarizer_kernel(sm, "in", B + 110, B + 120, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 2, B + 150); /* wrong id: ignored */
    argus_summarizer_step_end(sm, 1, B + 200);
    argus_summarizer_kernel(sm, "late", B + 300, B + 305, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_begin(sm, 1, B + 400); /* ids must increase: ignored */
    argus_summarizer_kernel(sm, "late", B + 410, B + 415, 0, 0, ARGUS_KC_COMPUTE);
    assert_int_equal(k.n_summaries, 1);
    assert_int_equal(k.last.kernel_count, 1);
    assert_int_equal(k.last.dropped, 0);
    assert_int_equal(k.last.flags, 0);
    assert_int_equal(argus_summarizer_dropped(sm), 3);
    assert_int_equal(argus_summarizer_kernels(sm), 4);
    assert_int_equal(k.n_names, 1);

    /* A begin while a step is open closes it there. */
    argus_summarizer_step_begin(sm, 2, B + 1000);
    argus_summarizer_kernel(sm, "in", B + 1100, B + 1300, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_begin(sm, 3, B + 2000);
    assert_int_equal(k.n_summaries, 2);
    assert_int_equal(k.last.step, 2);
    assert_int_equal(k.last.end_ns, B + 2000);
    assert_int_equal(k.last.busy_ns, 200);
    argus_summarizer_step_end(sm, 3, B + 2500);
    assert_int_equal(k.n_summaries, 3);
    assert_int_equal(k.last.kernel_count, 0);
    assert_int_equal(k.last.host_gap_ns, 500);
    argus_summarizer_free(sm);
}

static void test_phase_edges(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    /* A range opened before the step counts from the step's begin. */
    argus_summarizer_phase_push(sm, "fwd", B - 500);
    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 20; i++) /* 5 pushes beyond the depth limit: ignored */
        argus_summarizer_phase_push(sm, i % 2 ? "bwd" : "optimizer", B + 100);
    for (int i = 0; i < 20; i++)
        argus_summarizer_phase_pop(sm, B + 300);
    argus_summarizer_phase_pop(sm, B + 400);
    argus_summarizer_phase_pop(sm, B + 450); /* extra pop: ignored */
    argus_summarizer_kernel(sm, "k", B + 50, B + 60, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "k", B + 150, B + 160, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "k", B + 420, B + 430, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 1000);
    const struct argus_step_summary *s = &k.last;
    /* Depth 16 innermost is push #15 (i = 14, "optimizer"). */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 100 + 100);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 0);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_FORWARD], 10);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OPTIMIZER], 10);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OTHER], 10);
    assert_int_equal(s->flags, 0);
    argus_summarizer_free(sm);
}

static void test_kernel_clipping(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    argus_summarizer_step_begin(sm, 1, B + 100);
    argus_summarizer_kernel(sm, "straddle", B, B + 200, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "tail", B + 900, B + 1500, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "backwards", B + 500, B + 400, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "badclass", B + 500, B + 600, 0, 1, 99);
    argus_summarizer_step_end(sm, 1, B + 1100);
    assert_int_equal(k.last.busy_ns, 100 + 200);
    assert_int_equal(k.last.host_gap_ns, 1000 - 300);
    assert_int_equal(k.last.compute_ns, 200 + 600);
    assert_int_equal(k.last.kernel_count, 3);
    assert_int_equal(find(&k.last, "backwards", 0)->sum_ns, 0);
    assert_int_equal(argus_summarizer_dropped(sm), 1);
    argus_summarizer_free(sm);
}

struct span {
    int64_t s, e; /* relative to the step begin */
};

/* Step `step`, [b, b + wall] with b = B + 10 us x step, with the kernels sp[0..n) fed in
 * order ord (NULL: as given); the summary's longest idle interval must be (len, end). */
static void idle_case(struct argus_summarizer *sm, struct sink *k, uint64_t step,
                      uint64_t wall, const struct span *sp, size_t n, const size_t *ord,
                      uint64_t len, uint64_t end)
{
    const uint64_t b = B + step * 10000;

    argus_summarizer_step_begin(sm, step, b);
    for (size_t i = 0; i < n; i++) {
        const struct span *x = &sp[ord ? ord[i] : i];
        argus_summarizer_kernel(sm, "k", (uint64_t)((int64_t)b + x->s),
                                (uint64_t)((int64_t)b + x->e), 0, 0, ARGUS_KC_COMPUTE);
    }
    argus_summarizer_step_end(sm, step, b + wall);
    assert_int_equal(k->last.step, step);
    if (k->last.idle_long_ns != len || k->last.idle_long_end_ns != end)
        fail_msg("step %llu: longest idle %llu ending at %llu, want %llu ending at %llu",
                 (unsigned long long)step, (unsigned long long)k->last.idle_long_ns,
                 (unsigned long long)k->last.idle_long_end_ns, (unsigned long long)len,
                 (unsigned long long)end);
    assert_true(k->last.idle_long_ns <= k->last.host_gap_ns);
}

/* The longest GPU idle interval and where it ends, by hand: at the start, in the middle,
 * at the end, overlapping kernels, kernels across both step boundaries, a kernel that
 * starts after the step end, ties, no kernel, no idle; each in start order (the running
 * union) and reversed (sorted at the step end). */
static void test_idle_longest(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    static const size_t rev[] = {4, 3, 2, 1, 0};
    uint64_t step = 1;
    (void)state;

    static const struct span start[] = {{300, 400}, {500, 600}, {650, 900}};
    static const struct span middle[] = {{50, 200}, {600, 700}, {750, 1000}};
    static const struct span end_ov[] = {{0, 300}, {100, 500}, {450, 550}};
    static const struct span cross[] = {{-200, 100}, {700, 1300}};
    static const struct span after[] = {{100, 200}, {1500, 1600}};
    static const struct span after2[] = {{100, 200}, {600, 1800}, {1900, 2000}};
    static const struct span ties[] = {{100, 200}, {300, 400}, {500, 900}};
    static const struct span busy[] = {{-10, 400}, {400, 1000}};
    static const struct span inside[] = {{200, 300}, {150, 950}, {220, 240}};
    static const struct {
        const struct span *sp;
        size_t n;
        uint64_t len, end;
    } cases[] = {
        {start, 3, 300, 300},   /* the gap before the first kernel */
        {middle, 3, 400, 600},  /* 50, 400, 50, 0 */
        {end_ov, 3, 450, 1000}, /* overlaps make [0, 550]: the gap after the last */
        {cross, 2, 600, 700},   /* clipped to the step: no gap before, none after */
        {after, 2, 800, 1000},  /* [200, 1500) cut at the step end */
        {after2, 3, 400, 600},  /* [200, 600), not the cut [1800, 1900) */
        {ties, 3, 100, 100},    /* 100, 100, 100, 100: the earliest */
        {busy, 2, 0, 0},        /* never idle */
        {inside, 3, 150, 150},  /* a later kernel starts before the open run: not 200 */
        {NULL, 0, 1000, 1000},  /* no kernel: the whole step */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        idle_case(sm, &k, step++, 1000, cases[c].sp, cases[c].n, NULL,
                  cases[c].len, cases[c].end);
        idle_case(sm, &k, step++, 1000, cases[c].sp, cases[c].n,
                  rev + 5 - cases[c].n, cases[c].len, cases[c].end);
    }
    /* A step of no length. */
    idle_case(sm, &k, step++, 0, NULL, 0, NULL, 0, 0);
    argus_summarizer_free(sm);
}

/* Random kernels (some across the step boundaries, some after the step end, zero-length
 * ones) against a per-ns oracle: the longest run of idle ns in [begin, end), the earliest
 * of equal ones; in start order and shuffled. */
static void test_idle_oracle(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    uint64_t st = 99, step = 1;
    (void)state;

    for (int it = 0; it < 3000; it++) {
        struct span sp[12];
        size_t ord[12];
        uint8_t used[400];
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        const uint64_t wall = st % 300;
        const size_t n = (size_t)(st >> 12) % 12;
        memset(used, 0, sizeof used);
        for (size_t i = 0; i < n; i++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            sp[i].s = (int64_t)(st % (wall + 150)) - 50;
            sp[i].e = sp[i].s + (int64_t)((st >> 20) % 90);
            for (int64_t t = sp[i].s; t < sp[i].e; t++)
                if (t >= 0 && t < (int64_t)wall)
                    used[t] = 1;
            ord[i] = i;
        }
        uint64_t len = 0, end = 0, run = 0;
        for (uint64_t t = 0; t <= wall; t++) {
            if (t < wall && !used[t]) {
                run++;
                continue;
            }
            if (run > len) {
                len = run;
                end = t;
            }
            run = 0;
        }
        for (size_t i = 1; i < n; i++) /* start order (insertion sort) */
            for (size_t j = i; j > 0 && sp[ord[j]].s < sp[ord[j - 1]].s; j--) {
                size_t x = ord[j];
                ord[j] = ord[j - 1];
                ord[j - 1] = x;
            }
        idle_case(sm, &k, step++, wall, sp, n, ord, len, end);
        for (size_t i = n; i > 1; i--) { /* shuffled */
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            size_t j = (size_t)(st % i), x = ord[i - 1];
            ord[i - 1] = ord[j];
            ord[j] = x;
        }
        idle_case(sm, &k, step++, wall, sp, n, ord, len, end);
    }
    argus_summarizer_free(sm);
}

/* The name cache is keyed by pointer: a reused buffer with new text is a new name; a
 * name longer than ARGUS_NAME_MAX is truncated before hashing and naming. */
static void test_names_reused_buffer_and_long(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    char buf[32], long_name[700];
    (void)state;

    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 3; i++) {
        strcpy(buf, "alpha");
        argus_summarizer_kernel(sm, buf, B + 10, B + 20, 0, 0, ARGUS_KC_COMPUTE);
        strcpy(buf, "beta");
        argus_summarizer_kernel(sm, buf, B + 10, B + 40, 0, 0, ARGUS_KC_COMPUTE);
        argus_summarizer_kernel(sm, long_name, B + 10, B + 50, 0, 0, ARGUS_KC_COMPUTE);
    }
    argus_summarizer_step_end(sm, 1, B + 100);
    assert_int_equal(k.n_names, 3); /* on_name checks hash == argus_name_hash(name) */
    assert_int_equal(find(&k.last, "alpha", 0)->count, 3);
    assert_int_equal(find(&k.last, "beta", 0)->sum_ns, 90);
    long_name[ARGUS_NAME_MAX] = '\0';
    assert_int_equal(find(&k.last, long_name, 0)->count, 3);
    argus_summarizer_free(sm);
}

/* The budget (opts.coverage; summarizer.h): every collective kept however small; compute
 * modes by descending time until 97 % of kernel time is covered; the rest folded into one
 * "[other]" record of their class with their count and time. Coverage 0 keeps all. */
static void budget_step(struct argus_summarizer *sm)
{
    uint64_t t = B;
    argus_summarizer_step_begin(sm, 1, B);
    /* compute: 900 + 50 + 30 us, five kinds of 4 us; a 1 us all-reduce. Total 1001 us. */
    const struct { const char *n; uint64_t us; } k[] = {
        {"gemm_big", 900}, {"gemm_mid", 50}, {"softmax", 30}, {"tiny_a", 4},
        {"tiny_b", 4}, {"tiny_c", 4}, {"tiny_d", 4}, {"tiny_e", 4}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++, t += 1000 * US)
        argus_summarizer_kernel(sm, k[i].n, t, t + k[i].us * US, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "ncclDevKernel_AllReduce", t, t + 1 * US, 0, 1,
                            ARGUS_KC_COLLECTIVE);
    argus_summarizer_step_end(sm, 1, t + 1000 * US);
}

static void test_budget_coverage(void **state)
{
    struct sink k;
    (void)state;

    struct argus_summarizer *sm = make(&k, 1024, 64);
    budget_step(sm);
    assert_int_equal(k.last.n_kmodes, 9); /* coverage 0: every mode */
    assert_null(find(&k.last, "[other]", 0));
    argus_summarizer_free(sm);

    struct argus_summarizer_opts o = {
        .rank = 7, .max_events = 1024, .max_names = 64, .on_summary = on_summary,
        .on_name = on_name, .ctx = &k, .coverage = 0.97,
    };
    memset(&k, 0, sizeof k);
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    budget_step(sm);
    const struct argus_step_summary *s = &k.last;
    /* 900 + 50 = 949 < 0.97 x 1001 = 971; + 30 = 979 covers it: 3 compute modes, the
     * collective, and one [other] for the five 4 us kernels. */
    assert_int_equal(s->n_kmodes, 5);
    assert_non_null(find(s, "gemm_big", 0));
    assert_non_null(find(s, "gemm_mid", 0));
    assert_non_null(find(s, "softmax", 0));
    assert_non_null(find(s, "ncclDevKernel_AllReduce", 0));
    assert_null(find(s, "tiny_a", 0));
    const struct argus_kmode_stats *f = find(s, "[other]", 0);
    assert_non_null(f);
    assert_int_equal(f->kclass, ARGUS_KC_COMPUTE);
    assert_int_equal(f->count, 5);
    assert_int_equal(f->sum_ns, 20 * US);
    assert_int_equal(k.n_other, 1);
    /* Totals are untouched by the fold. */
    assert_int_equal(s->compute_ns, 1000 * US);
    assert_int_equal(s->kernel_count, 9);
    argus_summarizer_free(sm);
}

static void test_create_args(void **state)
{
    struct argus_summarizer_opts o = {.max_events = 0, .max_names = 4};
    struct argus_summarizer *sm = NULL;
    (void)state;

    assert_int_equal(argus_summarizer_create(&o, &sm), -EINVAL);
    o.max_events = 4;
    o.max_names = 0;
    assert_int_equal(argus_summarizer_create(&o, &sm), -EINVAL);
    assert_int_equal(argus_summarizer_create(NULL, &sm), -EINVAL);
    o.max_names = 4;
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    /* Calls with NULL do nothing. */
    argus_summarizer_kernel(NULL, "x", 1, 2, 0, 0, 0);
    argus_summarizer_step_end(NULL, 1, 2);
    assert_int_equal(argus_summarizer_dropped(NULL), 0);
    argus_summarizer_free(sm);
    argus_summarizer_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_outside_step_dropped),
        cmocka_unit_test(test_phase_edges),
        cmocka_unit_test(test_kernel_clipping),
        cmocka_unit_test(test_idle_longest),
        cmocka_unit_test(test_idle_oracle),
        cmocka_unit_test(test_names_reused_buffer_and_long),
        cmocka_unit_test(test_create_args),
        cmocka_unit_test(test_budget_coverage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
