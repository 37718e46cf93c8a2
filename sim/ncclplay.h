/* ncclplay.h — argus-simtrain's stand-in for NCCL's side of the profiler-plugin contract
 * (--nccl-groups). The simulator has no NCCL; with this option it does what NCCL 2.23+
 * does with the library NCCL_PROFILER_PLUGIN names, so that whatever profiler plugin is
 * in that slot (Argus's libargus_nccl.so under argus-run) sees the job's communicators
 * and collectives exactly as it would in a real NCCL job:
 *   load  — dlopen(NCCL_PROFILER_PLUGIN, RTLD_NOW | RTLD_LOCAL), else
 *           libnccl-profiler-<NCCL_PROFILER_PLUGIN>.so; then the symbol ncclProfiler_v6,
 *           else _v5, else _v4 (the API versions of NCCL 2.29, 2.28, 2.26-2.27);
 *   init  — once per communicator, when it is made: commId (v5, v6; commHash in v4),
 *           commName, nNodes, nranks, rank; the plugin fills the activation mask;
 *   event — per collective: a group event, the collective (seqNumber, func, count,
 *           datatype, algo, proto, nChannels) stopped at once, as NCCL stops it at
 *           enqueue, then one kernel channel under it whose GPU timer values are the
 *           collective's virtual start and end; per pipeline transfer the same with a p2p
 *           event (Send / Recv, peer). Only the types in the mask are started. No proxy
 *           operations (the transfer is virtual);
 *   fini  — finalize per communicator, then dlclose.
 * The communicator's hash is the same on every member and different for other member
 * sets: it is derived from the name and the members' world ranks in communicator order.
 * seqNumber counts per communicator and per function, as NCCL's comm->seqNumber[func].
 * Times the plugin takes itself (its own clock at start and stop) are real time; only the
 * kernel-channel timers carry the simulator's virtual clock.
 *
 * The loaded plugin is process-wide state of ncclplay.c (NCCL loads one per process).
 * Single-threaded like the rest of the simulator. Loading and init allocate (once per
 * communicator); playing an event allocates nothing. It talks to the plugin only through
 * the ABI declared in ncclplay.c, never through an Argus header.
 */
#ifndef ARGUS_SIM_NCCLPLAY_H
#define ARGUS_SIM_NCCLPLAY_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* One communicator as the plugin knows it. Zero-initialised = not made (every call on it
 * does nothing). */
struct sim_nccl_comm {
    void *ctx;           /* the plugin's context from init */
    int mask;            /* the event types it asked for */
    int live;            /* init succeeded: finalize is owed */
    int rank, nranks, nnodes;
    const char *name;    /* commName (the caller's string) */
    uint64_t hash;       /* commId / commHash */
    uint64_t seq[8];     /* next seqNumber per function (enum sim_nccl_func) */
};

/* The functions played. */
enum sim_nccl_func {
    SIM_NCCL_ALLREDUCE,
    SIM_NCCL_REDUCESCATTER,
    SIM_NCCL_ALLGATHER,
    SIM_NCCL_SEND,
    SIM_NCCL_RECV,
    SIM_NCCL_NFUNC
};

/* Load the plugin NCCL_PROFILER_PLUGIN names. Before MPI_Init is fine (no MPI call).
 * 0, or -1 after writing one line into err: the variable unset or empty, the library
 * not loadable (dlerror's text), or none of ncclProfiler_v6/_v5/_v4 in it. The version
 * found is returned in *version when not NULL. */
int sim_ncclplay_load(int *version, char *err, size_t errlen);

/* Make c: the plugin's init for the members of comm (collective over comm: every member
 * must call it, in the same order of communicators). Needs a loaded plugin. Allocates
 * 16 bytes per member, freed before it returns. 0; -1 when the plugin refused or none is
 * loaded (c is then left unmade, the job goes on); -2 out of memory (this rank skipped
 * the exchange its peers wait in: the caller must abort the job). */
int sim_ncclplay_comm_init(struct sim_nccl_comm *c, MPI_Comm comm, const char *name);

/* sim_ncclplay_comm_init in two halves, so that ranks may tell the plugin of their
 * communicators in different orders (as NCCL does when PyTorch makes them lazily):
 * prepare is the exchange over comm (collective, the same order of communicators on
 * every member; 0, -1 no plugin loaded, -2 out of memory as above; c is then known but
 * not made), tell the plugin's init, on this rank alone (0, or -1 when the plugin
 * refused, c was not prepared or is already made). name must outlive tell. */
int sim_ncclplay_comm_prepare(struct sim_nccl_comm *c, MPI_Comm comm, const char *name);
int sim_ncclplay_comm_tell(struct sim_nccl_comm *c);

/* One collective of func on c: count elements of datatype (NCCL's name, e.g.
 * "ncclBfloat16"); gpu_start / gpu_end: the kernel's virtual GPU times, ns. Allocates
 * nothing. */
void sim_ncclplay_coll(struct sim_nccl_comm *c, enum sim_nccl_func func, size_t count,
                       const char *datatype, uint64_t gpu_start, uint64_t gpu_end);

/* One point-to-point call (SIM_NCCL_SEND or SIM_NCCL_RECV) with peer (rank in c).
 * Allocates nothing. */
void sim_ncclplay_p2p(struct sim_nccl_comm *c, enum sim_nccl_func func, int peer,
                      size_t count, const char *datatype, uint64_t gpu_start,
                      uint64_t gpu_end);

/* finalize c (when made) and zero it. */
void sim_ncclplay_comm_fini(struct sim_nccl_comm *c);

/* dlclose the plugin; after every communicator's fini. */
void sim_ncclplay_unload(void);

#endif /* ARGUS_SIM_NCCLPLAY_H */
