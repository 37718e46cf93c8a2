/* selfinit.h — MPI for programs that never call MPI_Init (docs/ARCHITECTURE.md, "Threads"):
 * PyTorch with NCCL, launched by mpirun or srun --mpi=pmix with libargus.so preloaded.
 *
 * When ARGUS_MODE is on, ARGUS_MPI_SELF_INIT is 1 and the process was started by an MPI
 * launcher (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set) or is a lone process (no
 * launcher, WORLD_SIZE and Slurm's task count unset or 1: MPI then starts as a singleton,
 * a world of one, and the process gets its own report), a library constructor starts
 * one Argus thread that waits ARGUS_MPI_SELF_INIT_MS for the program's own MPI_Init and,
 * when none came, initialises MPI itself (MPI_THREAD_MULTIPLE) and then Argus
 * (argus_runtime_init) on that thread. At exit (atexit) the same thread finalizes Argus
 * and MPI, as MPI requires of the thread that initialised it; a program that calls
 * MPI_Finalize itself gets the same. Children of the process (fork, or exec'd helpers that
 * inherit LD_PRELOAD, such as DataLoader workers) never initialise MPI: the first process
 * claims the rank in the environment (ARGUS_MPI_OWNER=<pid>) before anything else runs.
 *
 * The PMPI hooks (pmpi.c) ask selfinit first:
 *   argus_selfinit_claim: called by the program's MPI_Init / MPI_Init_thread. 0 when the
 *     program should initialise MPI as usual (the Argus thread then stands down); 1 when
 *     Argus already did (or is doing: the call waits for it) and *provided is what the
 *     library gave; the hook then returns MPI_SUCCESS without initialising again.
 *   argus_selfinit_finalize: called by the program's MPI_Finalize. 0 when the program owns
 *     MPI (finalize as usual); 1 when the Argus thread finalized Argus and MPI (the hook
 *     returns MPI_SUCCESS).
 * Never aborts or exits; a failed self-initialisation says so once and leaves the program
 * alone.
 */
#ifndef ARGUS_REDUCE_SELFINIT_H
#define ARGUS_REDUCE_SELFINIT_H

int argus_selfinit_claim(int *provided);
int argus_selfinit_finalize(void);

#endif /* ARGUS_REDUCE_SELFINIT_H */
