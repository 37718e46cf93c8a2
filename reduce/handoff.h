/* handoff.h — the hand-off ring between the application thread and the Argus thread
 * (agent.h): a fixed ring of HANDOFF_NBUF window buffers (window.h) behind one mutex.
 * At any time one buffer is being filled by the application thread, the others are
 * free, queued (ready, window ids ascending) or held by the Argus thread.
 *
 * Contract:
 *  - One instance per process (module state), set up by argus_handoff_init and torn
 *    down by argus_handoff_free, both from the thread that owns the agent (MPI_Init /
 *    MPI_Finalize thread) while no other thread uses the ring.
 *  - Producer side — one thread at a time (via argus_agent_push_*: the tracer's
 *    deliverer, normally the application thread, sometimes the Argus thread): the push
 *    functions append one record to the filling buffer under the mutex (held for one
 *    encode, never across MPI, never blocking on the consumer). When opts.window
 *    summaries are in, the buffer is queued if a free one can replace it; otherwise
 *    the thread is behind and the same window keeps filling. A buffer's bytes are bounded
 *    by argus_handoff_cap_max(window), sized from the window so that a full window of
 *    the largest summaries always fits; a summary past that (a window kept filling
 *    because the consumer is behind) or out of memory is dropped and counted.
 *  - argus_handoff_close (MPI_Finalize thread, once, before the last exchange) queues
 *    the filling buffer as the rank's final window; if no buffer was free, that window
 *    is marked final and queued as soon as the consumer frees one.
 *  - Consumer side — Argus thread, or the MPI_Finalize thread when there is none:
 *    argus_handoff_pop takes the oldest ready window; its bytes then belong to the
 *    consumer (read-only; the producer never touches a popped buffer) until
 *    argus_handoff_release gives the buffer back. Pop/release pairs strictly, one
 *    window at a time. argus_handoff_wait sleeps until a window is queued, a kick, or
 *    the deadline; argus_handoff_kick wakes it (any thread).
 *  - Nothing here calls MPI, aborts or exits.
 */
#ifndef ARGUS_REDUCE_HANDOFF_H
#define ARGUS_REDUCE_HANDOFF_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/types.h"
#include "common/wire.h"

#define HANDOFF_NBUF 4 /* window buffers: 1 filling, up to 3 queued/in use */

/* Most bytes one window buffer may hold for window summaries per window: window x the
 * largest encoded summary (ARGUS_MAX_KMODES modes) plus room for names and rank info.
 * A bound, not an allocation: buffers grow (geometrically, at summary boundaries) only
 * as far as the summaries pushed need. Pure. */
size_t argus_handoff_cap_max(long window);
/* Prepare the ring: window = summaries per window, rank for log lines, reserve = initial
 * capacity of the first filling buffer. 0 or -ENOMEM; on error nothing is left. */
int argus_handoff_init(long window, int rank, size_t reserve);
/* Free every buffer and reset the module to its zero state. */
void argus_handoff_free(void);

/* Producer (application thread). offset: the rank's current clock offset to rank 0;
 * a summary stamped with another offset is copied and restamped before encoding. */
void argus_handoff_push_summary(const struct argus_step_summary *s, int64_t offset);
void argus_handoff_push_name(uint64_t hash, const char *name);
void argus_handoff_push_rankinfo(const struct argus_rank_info *ri);
/* Queue the filling window as this rank's final window (see above). */
void argus_handoff_close(void);
/* Summaries dropped because a window buffer was full or out of memory. Any thread. */
uint64_t argus_handoff_dropped(void);
/* Without an Argus thread (nothing is consumed before MPI_Finalize): from now on a window
 * that finds no free buffer is written to a node-local file ($TMPDIR, unlinked at once)
 * instead of growing the filling buffer, and pop returns it back in window order (its
 * slot is -1; release of it is a no-op). 0 or -errno (then windows wait in memory as
 * before). argus_handoff_spilled: windows written so far. */
int argus_handoff_spill_to_file(void);
uint64_t argus_handoff_spilled(void);

/* One popped window, owned by the consumer until argus_handoff_release. */
struct argus_handoff_win {
    const uint8_t *data;  /* the window's encoded wire records */
    size_t len;
    uint64_t window;      /* own window id */
    uint64_t first_step;  /* step of its first summary, when has_first */
    int has_first;
    int final;            /* the rank's last window */
    int slot;             /* ring slot (for release); -1: read back from the spill file */
};

/* Consumer. 1 and *w filled when a window was taken, 0 when none was ready. */
int argus_handoff_pop(struct argus_handoff_win *w);
/* Give a popped window's buffer back to the ring (it may become the filling one). */
void argus_handoff_release(const struct argus_handoff_win *w);
/* Sleep for ns nanoseconds unless a window is ready (returns at once then) or
 * argus_handoff_kick is called. */
void argus_handoff_wait(long ns);
void argus_handoff_kick(void);

#endif /* ARGUS_REDUCE_HANDOFF_H */
