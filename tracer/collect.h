/* collect.h — internal to tracer/: the GPU-activity collector between CUPTI and the step
 * summariser. It owns a preallocated pool of activity buffers (handed to CUPTI from its
 * request callback, on application threads), a queue of completed buffers, a queue of
 * step/phase marks (NVTX callbacks, python/argus.py, argus.h), a staging array of
 * activities and an optional raw ring (L4). Its own thread ("argus-drain") asks CUPTI to
 * flush after every step end, walks the completed buffers and, behind the host (the GPU
 * runs behind it), replays each finished step into the summariser: step begin, phase
 * marks, the step's activities, step end. An activity belongs to the step whose host code
 * launched it when the step's marks carry CUPTI correlation ids (argus_collect_mark_corr),
 * else to the step whose host-mark interval holds its start time (collect.c says how).
 *
 * Knows nothing of CUPTI: the adapter's flush and walk functions come in as pointers, so
 * every line here is tested with synthesized CUPTI buffers and no GPU. Nothing is
 * allocated after create; the request path takes one short mutex and never waits for
 * the drain thread; nothing here exits or logs per event.
 */
#ifndef ARGUS_TRACER_COLLECT_H
#define ARGUS_TRACER_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/act.h"
#include "tracer/summarizer.h"

struct argus_collect;
struct argus_ring;
struct argus_period;

/* Walk one completed buffer, handing each activity to fn; returns activities delivered. */
typedef size_t (*argus_walk_fn)(uint8_t *buf, size_t valid, struct argus_act_stats *st,
                                argus_act_fn fn, void *ctx);
/* Ask the source to return its buffers now (forced: also incomplete ones); 0 or -errno. */
typedef int (*argus_flush_fn)(int forced);
/* Dropped records the source counted since the last call (CUPTI resets on read). */
typedef uint64_t (*argus_dropped_fn)(void);
/* The summariser to replay into, or NULL when none is started yet (the step is then
 * counted in unsummarised); release is called after every non-NULL acquire. */
typedef struct argus_summarizer *(*argus_acquire_fn)(void);
typedef void (*argus_release_fn)(void);

struct argus_collect_opts {
    size_t buf_size;  /* bytes per activity buffer (multiple of 8, >= 4096) */
    size_t n_bufs;    /* buffers in the pool (>= 2) */
    size_t max_stage; /* activities held between steps */
    argus_walk_fn walk;
    argus_flush_fn flush;        /* may be NULL (tests) */
    argus_dropped_fn dropped;    /* may be NULL */
    argus_acquire_fn acquire;
    argus_release_fn release;
    struct argus_ring *ring;     /* may be NULL */
    struct argus_period *period; /* may be NULL: no automatic steps */
};

enum argus_mark_kind {
    ARGUS_MARK_STEP_BEGIN = 0,
    ARGUS_MARK_STEP_END = 1,
    ARGUS_MARK_PHASE_PUSH = 2,
    ARGUS_MARK_PHASE_POP = 3,
};

struct argus_collect_stats {
    struct argus_act_stats act;
    uint64_t buf_requests, buf_empty;  /* requests; requests refused (pool empty) */
    uint64_t stage_full;               /* activities dropped: staging full */
    uint64_t outside;                  /* activities before any step (not summarised) */
    uint64_t marks_lost;               /* marks dropped: mark queue full */
    uint64_t steps, unsummarised;      /* steps replayed; of them with no summariser */
    uint64_t inferred_steps;           /* steps from period detection */
    uint64_t steps_by_launch;          /* steps whose activities were chosen by launch */
    uint64_t steps_by_time;            /* ... by start time (no correlation marker) */
    uint64_t acts_min, acts_max;       /* activities of the smallest / largest step */
    uint64_t flushes;
};

/* Allocates everything (returns 0, -EINVAL or -ENOMEM). */
int argus_collect_create(const struct argus_collect_opts *o, struct argus_collect **out);
/* Stops the thread if running, then frees. */
void argus_collect_free(struct argus_collect *c);

/* Start / stop the drain thread. stop: forced flush, drain, replay every step, join. */
int argus_collect_start(struct argus_collect *c);
void argus_collect_stop(struct argus_collect *c);

/* CUPTI's buffer callbacks forward here (any thread). get returns 0 and a free buffer,
 * or -ENOBUFS (then *buf = NULL: CUPTI drops records, counted by it). */
int argus_collect_buf_get(struct argus_collect *c, uint8_t **buf, size_t *size);
void argus_collect_buf_done(struct argus_collect *c, uint8_t *buf, size_t valid);

/* A step or phase mark at t (CUPTI timebase, ns); any thread. phase: enum argus_phase
 * (pushes only). A step end wakes the drain thread, which flushes. */
void argus_collect_mark(struct argus_collect *c, enum argus_mark_kind kind, uint64_t step,
                        uint64_t t_ns, unsigned phase);
/* The same with the CUPTI correlation id of a marker API call made at the mark (0: none;
 * then the mark is time-based). Step marks whose ids are known split the activity stream
 * at launch: an activity with begin's id <= corr < end's id is that step's. */
void argus_collect_mark_corr(struct argus_collect *c, enum argus_mark_kind kind,
                             uint64_t step, uint64_t t_ns, unsigned phase, uint32_t corr);

/* One round of the drain thread's work, also callable directly when no thread runs
 * (tests): flush if a step ended, walk completed buffers, replay finished steps
 * (final: every step, even the last one, and all buffers). */
void argus_collect_pump(struct argus_collect *c, int final);

void argus_collect_get_stats(struct argus_collect *c, struct argus_collect_stats *out);

#endif /* ARGUS_TRACER_COLLECT_H */
