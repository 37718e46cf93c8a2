/* sm_testutil.h — helpers shared by the step-summariser cmocka programs
 * (test_summarizer.c, test_summarizer_modes.c): a recording sink, a summariser bound to
 * it, and lookups into a step summary. Header-only (static inline); it includes cmocka
 * and its prerequisites itself. */
#ifndef ARGUS_TESTS_SM_TESTUTIL_H
#define ARGUS_TESTS_SM_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/types.h"
#include "common/wire.h"
#include "tracer/summarizer.h"

#define B 1000000000ull /* step base time */
#define US 1000ull

struct sink {
    struct argus_step_summary last;
    int n_summaries;
    int n_names;
    int n_other;
    uint64_t hashes[1024];
};

static inline void on_summary(void *ctx, const struct argus_step_summary *s)
{
    struct sink *k = ctx;
    k->last = *s;
    k->n_summaries++;
}

static inline void on_name(void *ctx, uint64_t hash, const char *name)
{
    struct sink *k = ctx;
    assert_int_equal(hash, argus_name_hash(name));
    for (int i = 0; i < k->n_names && i < 1024; i++)
        assert_true(k->hashes[i] != hash); /* once per name */
    if (k->n_names < 1024)
        k->hashes[k->n_names] = hash;
    k->n_names++;
    if (strcmp(name, "[other]") == 0)
        k->n_other++;
}

static inline struct argus_summarizer *make(struct sink *k, size_t max_events, size_t max_names)
{
    struct argus_summarizer_opts o = {
        .rank = 7, .max_events = max_events, .max_names = max_names,
        .on_summary = on_summary, .on_name = on_name, .ctx = k,
    };
    struct argus_summarizer *sm = NULL;
    memset(k, 0, sizeof *k);
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    assert_non_null(sm);
    return sm;
}

static inline const struct argus_kmode_stats *find(const struct argus_step_summary *s,
                                                   const char *name, unsigned mode)
{
    uint64_t h = argus_name_hash(name);
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        if (s->kmodes[i].name_hash == h && s->kmodes[i].mode == mode)
            return &s->kmodes[i];
    return NULL;
}

static inline void check_sorted(const struct argus_step_summary *s)
{
    for (uint32_t i = 1; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *a = &s->kmodes[i - 1], *b = &s->kmodes[i];
        assert_true(a->name_hash < b->name_hash ||
                    (a->name_hash == b->name_hash && a->mode < b->mode));
    }
}

#endif /* ARGUS_TESTS_SM_TESTUTIL_H */
