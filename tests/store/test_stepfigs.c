/* test_stepfigs.c — unit tests of the store's per-step figures (store/jobstore.h:
 * argus_jobstore_step_figs) and the running sum of the evicted walls
 * (argus_jobstore_evicted_wall_sum): after every add — new cells in and out of step
 * order, thin rows in batches, replacements by slower, faster and equal cells (ties
 * between ranks on purpose), steps evicted past the horizon, a rank marked missing — the
 * figures equal the ones a full pass over the held cells gives, field for field, and the
 * sum equals that of argus_jobstore_evicted. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/aggregate.h"
#include "store/jobstore.h"

/* The figures of held step `step` from a full pass over every rank's held cells. */
static struct argus_jobstore_stepfig full_pass(const struct argus_jobstore *js,
                                               uint64_t step)
{
    struct argus_jobstore_stepfig g = {0};
    for (uint32_t r = 0; r < argus_jobstore_nranks(js); r++) {
        const uint64_t *ids;
        const struct argus_jobstore_row *rows;
        const size_t n = argus_jobstore_rank_step_ids(js, r, &ids);
        argus_jobstore_rank_rows(js, r, &rows);
        for (size_t k = 0; k < n; k++) {
            if (ids[k] != step)
                continue;
            const double w = rows[k].wall_ns, c = rows[k].comm_ns;
            const double wk = c > 0 && c < w ? w - c : w;
            if (g.n == 0 || wk > g.work_max_ns) {
                g.work_max_ns = wk;
                g.work_arg = r;
            }
            if (g.n == 0 || w > g.wall_max_ns)
                g.wall_max_ns = w;
            g.work_sum_ns += wk;
            g.n++;
        }
    }
    return g;
}

static void assert_figs(const struct argus_jobstore *js)
{
    const uint64_t *ids;
    const struct argus_jobstore_stepfig *fig;
    const size_t n = argus_jobstore_steps(js, &ids);
    assert_int_equal(argus_jobstore_step_figs(js, &fig), n);
    for (size_t i = 0; i < n; i++) {
        const struct argus_jobstore_stepfig g = full_pass(js, ids[i]);
        assert_true(g.n > 0);
        assert_int_equal(fig[i].n, g.n);
        assert_int_equal(fig[i].work_arg, g.work_arg);
        assert_true(fig[i].wall_max_ns == g.wall_max_ns);
        assert_true(fig[i].work_max_ns == g.work_max_ns);
        assert_true(fig[i].work_sum_ns == g.work_sum_ns);
    }
    const struct argus_jobstore_gone *gone;
    uint64_t sum = 0;
    for (size_t i = 0, m = argus_jobstore_evicted(js, &gone); i < m; i++)
        sum += gone[i].wall_sum_ns;
    assert_true(argus_jobstore_evicted_wall_sum(js) == sum);
}

/* A summary whose wall and collective time come from a few values (ties likely). */
static void mk(struct argus_step_summary *s, uint32_t rank, uint64_t step, uint64_t *rng)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->step = step;
    s->start_ns = step * 100000;
    s->end_ns = s->start_ns + 1000 * (1 + tg_rand(rng) % 5);
    s->collective_ns = 600 * (tg_rand(rng) % 4); /* 0, or less or more than the wall */
    s->p2p_ns = tg_rand(rng) % 3 == 0 ? 100 : 0;
}

static void mkrow(struct argus_agg_row *w, uint32_t rank, uint64_t step, uint64_t *rng)
{
    memset(w, 0, sizeof *w);
    w->rank = rank;
    w->step = step;
    w->start_ns = step * 100000;
    w->us[0] = (uint32_t)(1 + tg_rand(rng) % 5);
    w->us[7] = (uint32_t)(tg_rand(rng) % 4);
}

static void test_figs_follow_cells(void **state)
{
    enum { P = 7, OPS = 4000 };
    struct argus_jobstore *js;
    struct argus_step_summary s;
    struct argus_agg_row rows[3 * P];
    uint64_t rng = 777, newest = 0;
    (void)state;

    assert_int_equal(argus_jobstore_create(P, &js), 0);
    assert_int_equal(argus_jobstore_set_retention(js, P * 12, 12), 0);
    argus_jobstore_mark_missing(js, 5, 300);
    for (int op = 0; op < OPS; op++) {
        const uint64_t kind = tg_rand(&rng) % 10;
        if (kind < 2) { /* a batch of thin rows: the next step, and some replacements */
            size_t n = 0;
            newest++;
            for (uint32_t r = 0; r < P; r++)
                mkrow(&rows[n++], r, newest, &rng);
            for (int k = 0; k < 4; k++) {
                const uint64_t back = tg_rand(&rng) % 6;
                mkrow(&rows[n++], (uint32_t)(tg_rand(&rng) % P),
                      back > newest ? newest : newest - back, &rng);
            }
            assert_int_equal(argus_jobstore_add_rows(js, rows, n), 0);
        } else {        /* one summary: a newer step, a held one (replaced) or an older one */
            const uint64_t back = tg_rand(&rng) % 16;
            const uint64_t step = back > newest ? newest + 1 : newest + 1 - back;
            if (step > newest)
                newest = step;
            mk(&s, (uint32_t)(tg_rand(&rng) % P), step, &rng);
            assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
        }
        assert_figs(js);
    }
    const struct argus_jobstore_gone *gone;
    assert_true(argus_jobstore_evicted(js, &gone) > 100); /* eviction was exercised */
    argus_jobstore_free(js);
}

/* The figures a faster replacement of the slowest cell leaves: found again from the
 * cells (the next slowest, the lowest rank of a tie). */
static void test_faster_replacement(void **state)
{
    struct argus_jobstore *js;
    struct argus_step_summary s;
    const struct argus_jobstore_stepfig *fig;
    const uint64_t wall[4] = {3000, 5000, 4000, 5000};
    (void)state;

    assert_int_equal(argus_jobstore_create(4, &js), 0);
    for (uint32_t r = 0; r < 4; r++) {
        memset(&s, 0, sizeof s);
        s.rank = r;
        s.step = 9;
        s.start_ns = 100;
        s.end_ns = 100 + wall[r];
        assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
    }
    assert_int_equal(argus_jobstore_step_figs(js, &fig), 1);
    assert_int_equal(fig[0].work_arg, 1); /* the lowest of ranks 1 and 3 */
    assert_true(fig[0].wall_max_ns == 5000 && fig[0].work_sum_ns == 17000);
    s.rank = 1;
    s.end_ns = 100 + 1000; /* rank 1 now the fastest: rank 3 is the slowest */
    assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
    assert_int_equal(argus_jobstore_step_figs(js, &fig), 1);
    assert_int_equal(fig[0].work_arg, 3);
    assert_true(fig[0].wall_max_ns == 5000 && fig[0].work_sum_ns == 13000);
    s.rank = 3;
    s.end_ns = 100 + 2000; /* and rank 2 after it */
    assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
    assert_int_equal(argus_jobstore_step_figs(js, &fig), 1);
    assert_int_equal(fig[0].work_arg, 2);
    assert_true(fig[0].wall_max_ns == 4000 && fig[0].work_sum_ns == 10000 && fig[0].n == 4);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figs_follow_cells),
        cmocka_unit_test(test_faster_replacement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
