/* pmpi.c — PMPI interposition of MPI_Init, MPI_Init_thread and MPI_Finalize in
 * libargus.so (loaded with LD_PRELOAD or linked). Each hook calls the real PMPI_ function
 * and hands over to runtime.c; the application's return codes are never changed.
 * When Argus is on, the hooks ask for MPI_THREAD_MULTIPLE (the Argus thread makes MPI
 * calls on its private communicator); `provided` then reports what the library gave,
 * which is at least what the application asked for whenever the library can.
 * A program that never calls MPI_Init gets MPI from Argus's own thread (selfinit.c);
 * its later MPI_Init, if any, then succeeds without initialising again.
 * MPI_Comm_split, MPI_Comm_split_type and MPI_Comm_create are hooked too: after the real
 * call, the new communicator's membership is worked out locally (no communication) and
 * kept in tracer/commgroups.c for rank 0's analysis (see note_comm). Argus's own
 * communicator calls go to PMPI_ directly and are not seen here. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/config.h"
#include "common/log.h"
#include "reduce/runtime.h"
#include "reduce/selfinit.h"
#include "tracer/commgroups.h"
#include "tracer/tracer.h"

/* Cheap pre-check: only an explicit ARGUS_MODE=on changes the thread level. */
static int argus_wanted(void)
{
    const char *m = getenv("ARGUS_MODE");
    return m && strcasecmp(m, "on") == 0;
}

/* ARGUS_MODE set to a value that is neither on nor off (a typo, or the retired "full"):
 * Argus stays off, and after MPI is up rank 0 says so in one line, so the user learns
 * why no report came (docs/ARCHITECTURE.md, "Rules of the road"). */
static void say_bad_mode(void)
{
    const char *m = getenv("ARGUS_MODE");
    struct argus_config c;
    char err[256];
    int rank = -1;

    if (!m || !*m || strcasecmp(m, "off") == 0)
        return;
    argus_config_defaults(&c);
    if (argus_config_load(&c, getenv, err, sizeof err) == 0 || c.mode != ARGUS_MODE_OFF)
        return;
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == 0)
        argus_log_once(ARGUS_LOG_WARN, "mode", "%s; Argus is off", err);
}

ARGUS_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int provided = MPI_THREAD_SINGLE;
    int rc;

    if (!argus_wanted()) {
        rc = PMPI_Init(argc, argv);
        if (rc == MPI_SUCCESS)
            say_bad_mode();
        return rc;
    }
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

    if (!argus_wanted()) {
        rc = PMPI_Init_thread(argc, argv, required, provided);
        if (rc == MPI_SUCCESS)
            say_bad_mode();
        return rc;
    }
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

/* ---- communicator memberships ------------------------------------------------------ */

#define PARENTS 16    /* parents with their own call counter; more share the last one */
#define XLATE_CHUNK 256 /* ranks translated at a time: the only temporary, on the stack */

/* The calls made on each parent member set so far (ordinals of creating calls). */
static struct {
    pthread_mutex_t mu;
    uint32_t n;
    uint64_t pid[PARENTS];
    uint32_t calls[PARENTS];
} pmpi_state = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Order-independent id of comm's member set in world ranks (commgroups.h); 0 on error. */
static uint64_t members_id(MPI_Comm comm, int size)
{
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int in[XLATE_CHUNK], out[XLATE_CHUNK];
    uint64_t acc = 0;
    int ok = PMPI_Comm_group(comm, &g) == MPI_SUCCESS &&
             PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS;

    for (int at = 0; ok && at < size; at += XLATE_CHUNK) {
        const int n = size - at < XLATE_CHUNK ? size - at : XLATE_CHUNK;
        for (int i = 0; i < n; i++)
            in[i] = at + i;
        ok = PMPI_Group_translate_ranks(g, n, in, wg, out) == MPI_SUCCESS;
        for (int i = 0; ok && i < n; i++) {
            ok = out[i] != MPI_UNDEFINED;
            acc = argus_commgroups_hash_add(acc, (uint32_t)out[i]);
        }
    }
    if (g != MPI_GROUP_NULL)
        PMPI_Group_free(&g);
    if (wg != MPI_GROUP_NULL)
        PMPI_Group_free(&wg);
    return ok ? argus_commgroups_hash_end(acc, (uint32_t)size) : 0;
}

/* Ordinal of this creating call among those on parent's member set: every member makes
 * them collectively in the same order, so (parent, ordinal) names one call on all. */
static uint32_t family_of(MPI_Comm parent)
{
    int psize = 0;
    uint64_t pid = 0;
    if (PMPI_Comm_size(parent, &psize) == MPI_SUCCESS)
        pid = members_id(parent, psize);
    pthread_mutex_lock(&pmpi_state.mu);
    uint32_t i = 0;
    while (i < pmpi_state.n && pmpi_state.pid[i] != pid)
        i++;
    if (i == pmpi_state.n) {
        if (pmpi_state.n < PARENTS)
            pmpi_state.pid[pmpi_state.n++] = pid;
        else
            i = PARENTS - 1;
    }
    const uint32_t k = pmpi_state.calls[i]++;
    pthread_mutex_unlock(&pmpi_state.mu);
    return (uint32_t)argus_commgroups_mix(pid ^ ((uint64_t)k << 40 | 0xc0u));
}

/* After a successful creating call on parent: note the new communicator (none, or of one
 * rank, or of the whole world: nothing to learn). Never fails the caller's call. */
static void note_comm(MPI_Comm parent, const MPI_Comm *newcomm)
{
    int inter = 0, size = 0, rank = 0, world = 0;

    if (!argus_wanted() || parent == MPI_COMM_NULL)
        return;
    if (PMPI_Comm_test_inter(parent, &inter) != MPI_SUCCESS || inter)
        return;
    const uint32_t fam = family_of(parent);
    if (!newcomm || *newcomm == MPI_COMM_NULL ||
        PMPI_Comm_size(*newcomm, &size) != MPI_SUCCESS ||
        PMPI_Comm_rank(*newcomm, &rank) != MPI_SUCCESS ||
        PMPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS || size < 2 || size >= world)
        return;
    const uint64_t id = members_id(*newcomm, size);
    if (id == 0)
        return;
    struct argus_comm_group g = {.id = id, .family = fam, .size = (uint32_t)size,
                                 .index = (uint32_t)rank, .kind = ARGUS_COMM_MPI};
    argus_commgroups_add(&g);
}

ARGUS_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    const int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        note_comm(comm, newcomm);
    return rc;
}

ARGUS_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                     MPI_Comm *newcomm)
{
    const int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    if (rc == MPI_SUCCESS)
        note_comm(comm, newcomm);
    return rc;
}

ARGUS_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS)
        note_comm(comm, newcomm);
    return rc;
}
