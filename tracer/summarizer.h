/* summarizer.h — the per-rank step summariser behind argus.h: collects one step's events
 * in preallocated buffers, and at step end builds a struct argus_step_summary:
 * phase durations, GPU busy/idle (host gap), per-class kernel time and per-(kernel, mode)
 * statistics with quantile sketches. Kernel names are interned once (name table).
 *
 * Memory is fixed at create time (max_events events per step, max_names names); nothing is
 * allocated per event or per step. Events beyond max_events and kernels outside a step are
 * counted in `dropped` and the summary gets ARGUS_SF_PARTIAL.
 * Modes: at step end each kernel's durations are binned once into a log-duration
 * histogram (1/128 octave; no sort) that also yields per-mode count/sum/min/max and
 * exact sketch counts. Mode cuts come from a KDE over that histogram (modes.h: Scott
 * bandwidth, prominence gate; the 1.5x gap rule below 8 points) and are reused in later
 * steps while the step still fits them (no point far outside a mode, no vanished, split
 * or merged mode); the full KDE re-runs every 32 steps per kernel, staggered by name
 * hash, so the result depends only on the inputs. At most 4 modes; mode 0 is the fastest.
 * One thread at a time per summariser.
 */
#ifndef ARGUS_TRACER_SUMMARIZER_H
#define ARGUS_TRACER_SUMMARIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

struct argus_summarizer;

/* Called with each finished summary (valid only during the call). */
typedef void (*argus_summary_sink_fn)(void *ctx, const struct argus_step_summary *s);
/* Called once per newly interned kernel name. */
typedef void (*argus_name_sink_fn)(void *ctx, uint64_t hash, const char *name);

struct argus_summarizer_opts {
    uint32_t rank;
    size_t max_events;     /* per step */
    size_t max_names;      /* distinct kernel names per rank */
    argus_summary_sink_fn on_summary;
    argus_name_sink_fn on_name;
    void *ctx;
    /* The budget (docs/ALGORITHMS.md, "Step summary and record budget"): every
     * collective/p2p mode is kept; compute, memcpy and memset modes by descending time
     * until kept modes cover this share of the step's kernel time; the rest fold into one
     * "[other]" record per class. 0 or >= 1: keep every mode (up to ARGUS_MAX_KMODES). */
    double coverage;
};

int argus_summarizer_create(const struct argus_summarizer_opts *o, struct argus_summarizer **out);
void argus_summarizer_free(struct argus_summarizer *sm);

void argus_summarizer_set_coords(struct argus_summarizer *sm, const struct argus_coords *c);
/* Summaries leave with clock_offset_ns 0: the rank's offset is stamped where it is known
 * (reduce/handoff.c as a window is filled, import/argus_analyze.c offline). */

void argus_summarizer_step_begin(struct argus_summarizer *sm, uint64_t step, uint64_t t_ns);
/* Builds the summary and calls on_summary. */
void argus_summarizer_step_end(struct argus_summarizer *sm, uint64_t step, uint64_t t_ns);
void argus_summarizer_phase_push(struct argus_summarizer *sm, const char *name, uint64_t t_ns);
void argus_summarizer_phase_pop(struct argus_summarizer *sm, uint64_t t_ns);
void argus_summarizer_kernel(struct argus_summarizer *sm, const char *name, uint64_t start_ns,
                             uint64_t end_ns, uint32_t device, uint32_t stream, int kclass);
/* The same for a name whose text never changes while the summariser lives (CUPTI kernel
 * names, string literals): after the first call with a pointer, later calls with it skip
 * comparing the text, so they cost no string work at all. A name that may be freed or
 * rewritten (a caller's buffer) must go through argus_summarizer_kernel. */
void argus_summarizer_kernel_static(struct argus_summarizer *sm, const char *name,
                                    uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                    uint32_t stream, int kclass);
/* argus_summarizer_kernel_static for a kernel classed by its name: the class is
 * argus_kclass_from_name(name) (common/kclass.h; NULL: compute), derived once per name
 * pointer and kept beside the pointer's cache entry, so that the caller needs no class
 * lookup of its own. Returns that class (also without a summariser, or outside a step).
 * For kernel records only: memcpy/memset are classed by kind (the _static call). */
int argus_summarizer_kernel_named(struct argus_summarizer *sm, const char *name,
                                  uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                  uint32_t stream);

/* For the open step: add records the source dropped (CUPTI's dropped count) to its
 * dropped total (sets ARGUS_SF_PARTIAL when n > 0); OR flags (ARGUS_SF_*) into it. No-op
 * outside a step. */
void argus_summarizer_add_dropped(struct argus_summarizer *sm, uint64_t n);
void argus_summarizer_add_flags(struct argus_summarizer *sm, uint32_t flags);
/* For the open step: CUPTI overhead time (OVERHEAD records: buffer flushes, ...) into its
 * summary's overhead_ns. No-op outside a step. */
void argus_summarizer_add_overhead(struct argus_summarizer *sm, uint64_t ns);

/* Total events dropped so far; total kernels seen. */
uint64_t argus_summarizer_dropped(const struct argus_summarizer *sm);
uint64_t argus_summarizer_kernels(const struct argus_summarizer *sm);

#endif /* ARGUS_TRACER_SUMMARIZER_H */
