/* pmpi.c — PMPI interposition of MPI_Init, MPI_Init_thread and MPI_Finalize in
 * libargus.so (loaded with LD_PRELOAD or linked). Each hook calls the real PMPI_ function
 * and hands over to runtime.c; the application's return codes are never changed. */
#include <mpi.h>

#include "reduce/runtime.h"
#include "tracer/tracer.h"

ARGUS_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);

    if (rc == MPI_SUCCESS)
        argus_runtime_init();
    return rc;
}

ARGUS_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);

    if (rc == MPI_SUCCESS)
        argus_runtime_init();
    return rc;
}

ARGUS_EXPORT int MPI_Finalize(void)
{
    argus_runtime_finalize();
    return PMPI_Finalize();
}
