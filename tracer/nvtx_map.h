/* nvtx_map.h — internal to tracer/: framework range names -> Argus phases and steps.
 * The CUPTI NVTX callbacks (cupti_adapter.c) hand every pushed range name and every pop
 * here; ranges whose name maps to a phase become phase marks, step ranges
 * ("ProfilerStep#12" or the configured name) become step begin/end marks, and every other
 * range (aten::mm, user ranges) is ignored — a per-thread shadow stack keeps pops paired
 * with their pushes. Registered NVTX strings (nvtxDomainRegisterStringA) are kept in a
 * fixed handle -> text table.
 *
 * Default phase rules (case-insensitive substrings, first match wins; PyTorch and
 * Megatron names): "optimizer"/"optim." -> optimizer; "backward"/"bwd" -> backward;
 * "forward"/"fwd" -> forward; "dataloader"/"data load"/"data_load"/"batch-generator"/
 * "get_batch" -> host (data loading). ARGUS_PHASE_MAP adds rules tried first:
 * "sub:phase[,sub:phase...]" with phase one of forward, backward, optimizer, comm, host,
 * other. ARGUS_STEP_RANGE is the step range's name prefix (default "ProfilerStep#"); the
 * step id is the decimal number following it, else a counter.
 *
 * No allocation after init; classify only advances the step counter; the shadow stack is
 * thread-local.
 */
#ifndef ARGUS_TRACER_NVTX_MAP_H
#define ARGUS_TRACER_NVTX_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h" /* ARGUS_PHASE_MAP's grammar and bounds */

#define ARGUS_NVTX_RULES ARGUS_PHASE_MAP_RULES
#define ARGUS_NVTX_SUB_MAX ARGUS_PHASE_MAP_SUB_MAX
#define ARGUS_NVTX_STEP_MAX 64 /* ARGUS_STEP_RANGE: up to 63 bytes (struct argus_config) */
#define ARGUS_NVTX_STRINGS 1024
#define ARGUS_NVTX_STRING_MAX 128

enum argus_nvtx_kind { ARGUS_NVTX_IGNORE = 0, ARGUS_NVTX_PHASE = 1, ARGUS_NVTX_STEP = 2 };

struct argus_nvtx_rule {
    char sub[ARGUS_NVTX_SUB_MAX];
    uint8_t phase;
};

/* What a mapped range does: the callbacks for the collector's marks. */
typedef void (*argus_nvtx_step_fn)(void *ctx, int begin, uint64_t step);
typedef void (*argus_nvtx_phase_fn)(void *ctx, int push, unsigned phase);

struct argus_nvtx_map {
    struct argus_nvtx_rule rules[ARGUS_NVTX_RULES];
    unsigned n_rules;
    char step_prefix[ARGUS_NVTX_STEP_MAX];
    uint64_t step_counter;
    argus_nvtx_step_fn on_step;
    argus_nvtx_phase_fn on_phase;
    void *ctx;
    struct { const void *h; char s[ARGUS_NVTX_STRING_MAX]; } strings[ARGUS_NVTX_STRINGS];
    int strings_lock; /* spinlock word */
};

/* phase_map and step_prefix may be NULL or "" (defaults). Returns 0, or -EINVAL with
 * the message of common/config.c's check for a bad ARGUS_PHASE_MAP (the defaults are
 * then used alone). */
int argus_nvtx_map_init(struct argus_nvtx_map *m, const char *phase_map,
                        const char *step_prefix, char *err, size_t errlen);

/* What a range name means (a step without a number advances the counter). */
enum argus_nvtx_kind argus_nvtx_classify(struct argus_nvtx_map *m, const char *name,
                                         uint64_t *step, unsigned *phase);

/* A range push / pop on the calling thread (name may be NULL: unknown -> ignored). */
void argus_nvtx_push(struct argus_nvtx_map *m, const char *name);
void argus_nvtx_pop(struct argus_nvtx_map *m);

/* Registered strings: remember handle -> text (copied, truncated); lookup or NULL. */
void argus_nvtx_string_put(struct argus_nvtx_map *m, const void *handle, const char *s);
const char *argus_nvtx_string_get(struct argus_nvtx_map *m, const void *handle);

#endif /* ARGUS_TRACER_NVTX_MAP_H */
