/* agent.h — the Argus thread of one rank: it alone makes MPI calls on Argus's private
 * communicator once started. The application thread hands it finished windows of
 * encoded wire records through a small fixed ring of window buffers (agent_push_*;
 * handoff.h; a mutex held for one encode, never across MPI); the thread exchanges them up the
 * reduction tree with non-blocking sends and matched-probe receives, waits for a child
 * at most deadline × (levels below) per window, marks late subtrees missing (they are
 * never waited on again) and, on rank 0, feeds every record into the job store
 * (rank0.h) and analyses after every window; the report files are rewritten at the
 * pace of reportpace.h (held ones written when due).
 *
 * Without MPI_THREAD_MULTIPLE there is no thread: windows pile up in memory (bounded)
 * and argus_agent_finish runs the same exchange loop on the caller's thread.
 * argus_agent_finish never takes longer than finalize_ms (plus a short grace): after it
 * the exchange is abandoned, rank 0 writes what it holds, and the caller goes on.
 * Must never abort, exit or block the application thread outside argus_agent_finish.
 */
#ifndef ARGUS_REDUCE_AGENT_H
#define ARGUS_REDUCE_AGENT_H

#include <mpi.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"
#include "reduce/rank0.h"

struct argus_agent_opts {
    MPI_Comm comm;          /* private communicator (the agent does not free it) */
    int rank, size;
    int parent;             /* -1 for the root (rank 0) */
    const int *children;    /* copied */
    int nchildren;
    int height;             /* tree levels below this rank (0 for a leaf) */
    long window;            /* steps per window */
    long deadline_ms, finalize_ms;
    long silence_ms;        /* ARGUS_SILENCE_MS (treemsg.h argus_treemsg_silent_ns) */
    long clock_sync_ms;     /* re-measure the clock offset this often (clockkeep.h); 0 never */
    int threaded;           /* 1: start the Argus thread; 0: exchange at finish */
    int condense;           /* 1: inner nodes and rank 0 condense (reduce/condense.h) */
    struct argus_rank0 *r0; /* rank 0 only; used from the Argus thread */
};

/* Prepare buffers (no thread, no MPI): pushes are accepted from here on. 0 or negative
 * errno; on error nothing is left. Called once, from the MPI_Init thread. */
int argus_agent_start(const struct argus_agent_opts *o);
/* Start the Argus thread (clock sync, then the exchange loop); without threads, run the
 * clock sync inline. -errno when the thread could not start (then the exchange happens at
 * finish, inline). MPI_Init thread, after every rank agreed to go on. */
int argus_agent_go(void);
/* Free what start prepared when Argus is turned off before argus_agent_go. */
void argus_agent_abandon(void);
/* Application thread (tracer sinks): append one record to the window being filled.
 * A full window (opts.window summaries) is handed to the Argus thread. Never blocks
 * on MPI; no allocation unless a window outgrows its reserve. */
void argus_agent_push_summary(const struct argus_step_summary *s);
void argus_agent_push_name(uint64_t hash, const char *name);
void argus_agent_push_rankinfo(const struct argus_rank_info *ri);
/* Send the last (partial) window marked final, wait for the exchange to end (bounded),
 * stop the thread. Rank 0 writes the final report. MPI_Finalize thread only. */
int argus_agent_finish(void); /* 0, or -ETIMEDOUT when the thread was left behind */

#endif /* ARGUS_REDUCE_AGENT_H */
