/* pmpi.c — PMPI interposition of MPI_Init, MPI_Init_thread and MPI_Finalize in
 * libargus.so (loaded with LD_PRELOAD or linked). Each hook calls the real PMPI_ function
 * and hands over to runtime.c; the application's return codes are never changed.
 * When Argus is on, the hooks ask for MPI_THREAD_MULTIPLE (the Argus thread makes MPI
 * calls on its private communicator); `provided` then reports what the library gave,
 * which is at least what the application asked for whenever the library can.
 * A program that never calls MPI_Init gets MPI from Argus's own thread (selfinit.c);
 * its later MPI_Init, if any, then succeeds without initialising again. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reduce/runtime.h"
#include "reduce/selfinit.h"
#include "tracer/tracer.h"

/* Cheap pre-check: only an explicit ARGUS_MODE=on|full changes the thread level. */
static int argus_wanted(void)
{
    const char *m = getenv("ARGUS_MODE");
    return m && (strcasecmp(m, "on") == 0 || strcasecmp(m, "full") == 0);
}

ARGUS_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int provided = MPI_THREAD_SINGLE;
    int rc;

    if (!argus_wanted())
        return PMPI_Init(argc, argv);
    if (argus_selfinit_claim(&provided)) /* Argus initialised MPI already */
        return MPI_SUCCESS;
    rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc == MPI_SUCCESS)
        argus_runtime_init(provided);
    return rc;
}

ARGUS_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc;

    if (!argus_wanted())
        return PMPI_Init_thread(argc, argv, required, provided);
    if (argus_selfinit_claim(provided))
        return MPI_SUCCESS;
    rc = PMPI_Init_thread(argc, argv, required > MPI_THREAD_MULTIPLE ? required
                                                                      : MPI_THREAD_MULTIPLE,
                          provided);
    if (rc == MPI_SUCCESS)
        argus_runtime_init(*provided);
    return rc;
}

ARGUS_EXPORT int MPI_Finalize(void)
{
    if (argus_selfinit_finalize()) /* Argus's thread owned MPI and has finalized it */
        return MPI_SUCCESS;
    argus_runtime_finalize();
    return PMPI_Finalize();
}
