/* runtime.h — libargus's life inside one MPI rank, driven by the PMPI hooks (pmpi.c):
 * argus_runtime_init right after the real MPI_Init succeeded, argus_runtime_finalize
 * right before the real MPI_Finalize. With ARGUS_MODE=off (the default) both return at
 * once and Argus stays inert. Any failure turns Argus off on every rank together (the
 * decision is agreed over Argus's private communicator) with one line from rank 0, and
 * the application goes on. Called only from the thread that calls MPI_Init/Finalize.
 */
#ifndef ARGUS_REDUCE_RUNTIME_H
#define ARGUS_REDUCE_RUNTIME_H

/* thread_level: what PMPI_Init_thread provided; below MPI_THREAD_MULTIPLE there is no
 * Argus thread and the exchange happens at finalize (said once by rank 0). */
void argus_runtime_init(int thread_level);
void argus_runtime_finalize(void);

#endif /* ARGUS_REDUCE_RUNTIME_H */
