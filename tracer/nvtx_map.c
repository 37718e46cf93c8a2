/* nvtx_map.c — range name -> phase/step mapping and the per-thread shadow stack of
 * nvtx_map.h. No allocation, no logging; safe on any application thread.
 */
#include "tracer/nvtx_map.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/types.h"

#define SHADOW_DEPTH 64

static __thread uint64_t shadow_bits[SHADOW_DEPTH / 64 * 2]; /* 2 bits per level */
static __thread unsigned shadow_depth;
static __thread uint64_t shadow_steps[4]; /* step ids of open step ranges (nesting <= 4) */
static __thread unsigned shadow_nsteps;

static const struct { const char *sub; uint8_t phase; } defaults[] = {
    {"optimizer", ARGUS_PH_OPTIMIZER}, {"optim.", ARGUS_PH_OPTIMIZER},
    {"backward", ARGUS_PH_BACKWARD},   {"bwd", ARGUS_PH_BACKWARD},
    {"forward", ARGUS_PH_FORWARD},     {"fwd", ARGUS_PH_FORWARD},
    {"dataloader", ARGUS_PH_HOST},     {"data load", ARGUS_PH_HOST},
    {"data_load", ARGUS_PH_HOST},      {"batch-generator", ARGUS_PH_HOST},
    {"get_batch", ARGUS_PH_HOST},
};

static int phase_word(const char *s, size_t n, uint8_t *out)
{
    static const char *const w[ARGUS_PH_COUNT] = {"forward", "backward", "optimizer",
                                                  "comm", "host", "other"};
    for (unsigned p = 0; p < ARGUS_PH_COUNT; p++) {
        if (strlen(w[p]) == n && strncasecmp(s, w[p], n) == 0) {
            *out = (uint8_t)p;
            return 0;
        }
    }
    return -EINVAL;
}

int argus_nvtx_map_init(struct argus_nvtx_map *m, const char *phase_map,
                        const char *step_prefix, char *err, size_t errlen)
{
    int rc = 0;

    argus_nvtx_step_fn os = m->on_step;
    argus_nvtx_phase_fn op = m->on_phase;
    void *ctx = m->ctx;
    memset(m, 0, sizeof *m);
    m->on_step = os;
    m->on_phase = op;
    m->ctx = ctx;
    snprintf(m->step_prefix, sizeof m->step_prefix, "%s",
             step_prefix && *step_prefix ? step_prefix : "ProfilerStep#");
    /* User rules first; their grammar is the environment table's (common/config.c). */
    if (phase_map && *phase_map &&
        argus_config_check("ARGUS_PHASE_MAP", phase_map, err, errlen) != 0)
        phase_map = NULL, rc = -EINVAL;
    for (const char *p = phase_map; p && *p && rc == 0;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        uint8_t ph;
        if (!colon || colon == p || (size_t)(colon - p) >= ARGUS_NVTX_SUB_MAX ||
            phase_word(colon + 1, len - (size_t)(colon - p) - 1, &ph) != 0 ||
            m->n_rules >= ARGUS_NVTX_RULES) {
            if (err && errlen)
                snprintf(err, errlen, "ARGUS_PHASE_MAP: bad rule '%.*s' (want substring:phase,"
                         " phase one of forward, backward, optimizer, comm, host, other)",
                         (int)(len > 64 ? 64 : len), p);
            rc = -EINVAL;
            m->n_rules = 0;
            break;
        }
        struct argus_nvtx_rule *r = &m->rules[m->n_rules++];
        memcpy(r->sub, p, (size_t)(colon - p));
        r->sub[colon - p] = '\0';
        r->phase = ph;
        p = end ? end + 1 : p + len;
    }
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        if (m->n_rules >= ARGUS_NVTX_RULES)
            break;
        struct argus_nvtx_rule *r = &m->rules[m->n_rules++];
        snprintf(r->sub, sizeof r->sub, "%s", defaults[i].sub);
        r->phase = defaults[i].phase;
    }
    return rc;
}

enum argus_nvtx_kind argus_nvtx_classify(struct argus_nvtx_map *m, const char *name,
                                         uint64_t *step, unsigned *phase)
{
    size_t pl;

    if (!name || !*name)
        return ARGUS_NVTX_IGNORE;
    pl = strlen(m->step_prefix);
    if (strncmp(name, m->step_prefix, pl) == 0) {
        const char *d = name + pl;
        if (isdigit((unsigned char)*d)) {
            *step = strtoull(d, NULL, 10);
            m->step_counter = *step;
        } else {
            *step = ++m->step_counter;
        }
        return ARGUS_NVTX_STEP;
    }
    for (unsigned i = 0; i < m->n_rules; i++) {
        if (strcasestr(name, m->rules[i].sub)) {
            *phase = m->rules[i].phase;
            return ARGUS_NVTX_PHASE;
        }
    }
    return ARGUS_NVTX_IGNORE;
}

static void shadow_set(unsigned level, unsigned v)
{
    unsigned bit = (level % 32) * 2;
    uint64_t *w = &shadow_bits[level / 32];
    *w = (*w & ~(UINT64_C(3) << bit)) | ((uint64_t)v << bit);
}

static unsigned shadow_get(unsigned level)
{
    return (unsigned)(shadow_bits[level / 32] >> ((level % 32) * 2)) & 3;
}

void argus_nvtx_push(struct argus_nvtx_map *m, const char *name)
{
    uint64_t step = 0;
    unsigned phase = 0;
    enum argus_nvtx_kind k = argus_nvtx_classify(m, name, &step, &phase);

    if (k == ARGUS_NVTX_STEP && shadow_nsteps >= 4)
        k = ARGUS_NVTX_IGNORE;
    if (shadow_depth < SHADOW_DEPTH)
        shadow_set(shadow_depth, (unsigned)k);
    shadow_depth++;
    if (k == ARGUS_NVTX_STEP) {
        shadow_steps[shadow_nsteps++] = step;
        if (m->on_step)
            m->on_step(m->ctx, 1, step);
    } else if (k == ARGUS_NVTX_PHASE && m->on_phase) {
        m->on_phase(m->ctx, 1, phase);
    }
}

void argus_nvtx_pop(struct argus_nvtx_map *m)
{
    if (!shadow_depth)
        return;
    shadow_depth--;
    if (shadow_depth >= SHADOW_DEPTH)
        return;
    unsigned k = shadow_get(shadow_depth);
    if (k == ARGUS_NVTX_STEP && shadow_nsteps) {
        uint64_t step = shadow_steps[--shadow_nsteps];
        if (m->on_step)
            m->on_step(m->ctx, 0, step);
    } else if (k == ARGUS_NVTX_PHASE && m->on_phase) {
        m->on_phase(m->ctx, 0, 0);
    }
}

static size_t slot_of(const void *h)
{
    return (size_t)(((uint64_t)(uintptr_t)h * UINT64_C(0x9e3779b97f4a7c15)) >> 54) %
           ARGUS_NVTX_STRINGS;
}

static void lock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

void argus_nvtx_string_put(struct argus_nvtx_map *m, const void *handle, const char *s)
{
    if (!handle || !s)
        return;
    lock(&m->strings_lock);
    for (size_t i = 0, j = slot_of(handle); i < ARGUS_NVTX_STRINGS;
         i++, j = (j + 1) % ARGUS_NVTX_STRINGS) {
        if (!m->strings[j].h || m->strings[j].h == handle) {
            m->strings[j].h = handle;
            snprintf(m->strings[j].s, sizeof m->strings[j].s, "%s", s);
            break;
        }
    }
    unlock(&m->strings_lock);
}

const char *argus_nvtx_string_get(struct argus_nvtx_map *m, const void *handle)
{
    const char *r = NULL;

    if (!handle)
        return NULL;
    lock(&m->strings_lock);
    for (size_t i = 0, j = slot_of(handle); i < ARGUS_NVTX_STRINGS;
         i++, j = (j + 1) % ARGUS_NVTX_STRINGS) {
        if (!m->strings[j].h)
            break;
        if (m->strings[j].h == handle) {
            r = m->strings[j].s; /* entries are never removed or moved */
            break;
        }
    }
    unlock(&m->strings_lock);
    return r;
}
