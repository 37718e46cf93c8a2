/* hoststack.h — internal to libargus: host call stacks of the step-loop thread, taken in
 * process on demand (docs/ALGORITHMS.md, "Host call stacks"). No ptrace, no sudo.
 *
 * A real-time signal that libargus owns is sent to the thread that marks the steps
 * (tracer.h: argus_tracer_activity); its handler does only async-signal-safe work into one
 * preallocated slot: the native return addresses (libunwind, local unwinding from the
 * signal's context) and, in a CPython process, the thread's Python frames as CPython's own
 * traceback dumper writes them (the one faulthandler uses, resolved with dlsym so nothing
 * links Python) into a non-blocking pipe. The sampler thread then names the frames
 * (dladdr; the dumper's "File, line, function") off the training thread.
 *
 * When: a watcher thread looks every HS_POLL_MS at the step loop. While a step is open and
 * the loop has made no mark (step, phase, kernel) for longer than max(ARGUS_STACKS_MIN_MS,
 * default 200 ms, 2x the median step), a stall is in progress: up to 8 samples per stall, 40 ms apart. A step
 * open for more than 10x the median (a hang) gets one more. Rank 0 may ask a healthy peer
 * for one sample now (argus_hoststack_request). Nothing is sampled otherwise.
 * Python frames are refused (one line) in a free-threaded CPython; a signal another owner
 * holds turns the sampler off (one line). Bounded: one slot, a fixed pool of finished
 * samples (the oldest are dropped and counted), a wait of at most 100 ms per sample.
 */
#ifndef ARGUS_TRACER_HOSTSTACK_H
#define ARGUS_TRACER_HOSTSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARGUS_HOSTSTACK_TEXT 2048 /* bytes of one sample's folded frames, NUL included */

enum { ARGUS_HOSTSTACK_STALL = 1, ARGUS_HOSTSTACK_HANG = 2, ARGUS_HOSTSTACK_PEER = 3 }; /* why */
enum { ARGUS_HOSTSTACK_PYTHON = 1, ARGUS_HOSTSTACK_NATIVE = 2 };      /* lang */

/* One finished sample of one kind of frames. folded: frames outermost first, ';'
 * between them ("flamegraph.pl" order); a Python frame is "function (file:line)", a
 * native one "symbol (object)" (or "0xADDR (object)" without a symbol). */
struct argus_hoststack_sample {
    uint64_t step;       /* the open step */
    uint64_t t_ns;       /* CLOCK_REALTIME of the sample */
    uint32_t stalled_ms; /* how long the loop had made no mark */
    uint32_t cost_ns;    /* time spent in the signal handler (the training thread's cost) */
    uint8_t why, lang;
    uint16_t nframes;
    uint32_t for_rank;   /* ARGUS_HOSTSTACK_PEER: the stalled rank it was asked for */
    uint64_t for_step;   /* ... and that rank's step */
    char folded[ARGUS_HOSTSTACK_TEXT];
};

struct argus_hoststack_stats {
    uint64_t signals, samples, timeouts, dropped; /* taken, kept, unanswered, pool full */
    uint64_t cost_ns_sum, cost_ns_max;            /* the handler's time, over `signals` */
    int python;                                   /* 1: Python frames are taken */
};

/* Install the handler and start the watcher thread (any thread, once). 0; -EBUSY when
 * the signal has another owner; -errno when the thread could not start. On failure
 * nothing is left and the reason has been logged once. watch 0: no watcher (only
 * argus_hoststack_sample_tid, for tests). */
int argus_hoststack_start(int watch);
/* The stall threshold's floor in ms (ARGUS_STACKS_MIN_MS; 0: 200), before start (later
 * calls are ignored). The watcher never sleeps longer than it between looks. */
void argus_hoststack_set_min_ms(uint32_t ms);
/* Stop the watcher and wait for it; the handler stays installed (a late signal finds no
 * armed slot and returns). Idempotent. */
void argus_hoststack_stop(void);

/* Take one sample of thread tid of this process now: the signal, a wait of at most
 * timeout_ms, then the frames are named and pushed to the pool (one Python sample when
 * the thread runs Python, one native). Sampler side: one caller at a time (the watcher, or
 * a test while no watcher runs). 0, -ETIMEDOUT (the thread did not answer in time; the
 * slot is reused once its handler has finished), -ESRCH, -ENOTCONN (not started, or the
 * program has installed its own handler of the signal since: then never again, one line). */
int argus_hoststack_sample_tid(pid_t tid, uint64_t step, uint32_t stalled_ms, int why,
                               int timeout_ms);

/* Ask the watcher for one sample of the step-loop thread now, whatever it does, as a
 * healthy peer of for_rank's stall at for_step (why ARGUS_HOSTSTACK_PEER). Any thread; no
 * wait: the watcher takes it at its next look (a newer request replaces one not taken). */
void argus_hoststack_request(uint32_t for_rank, uint64_t for_step);

/* Pop the oldest finished sample into *out: 1, or 0 when none. Any thread. */
int argus_hoststack_take(struct argus_hoststack_sample *out);
void argus_hoststack_get_stats(struct argus_hoststack_stats *st);

#endif /* ARGUS_TRACER_HOSTSTACK_H */
