/* jobstore.c — the job store's life (store/jobstore.h): create (each part's init),
 * free (each part's fini), the job metadata, and the reader's work memory lent from the
 * arena. Holds no logic of its parts: the summaries are store/cells.c's, retention
 * store/retain.c's, the ingest of wire records store/ingest.c's (the files and the way
 * their calls point: store/jobstore_int.h); none of them calls this file. One owner; not
 * thread-safe.
 */
#include "store/jobstore_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int argus_jobstore_create(uint32_t n_ranks, struct argus_jobstore **out)
{
    struct argus_jobstore *js;

    if (!out || n_ranks == 0)
        return -EINVAL;
    *out = NULL;
    js = calloc(1, sizeof *js);
    if (!js)
        return -ENOMEM;
    /* jobs of 512 ranks and more store >= 1 MiB per window: huge chunks from the start;
     * small jobs stay small */
    jobstore_arena_init(&js->arena, n_ranks >= 512);
    if (jobstore_cells_init(js, n_ranks) != 0) {
        free(js);
        return -ENOMEM;
    }
    jobstore_retain_init(js);
    snprintf(js->meta.step, sizeof js->meta.step, "0");
    *out = js;
    return 0;
}

void argus_jobstore_free(struct argus_jobstore *js)
{
    if (!js)
        return;
    jobstore_ingest_fini(js);
    jobstore_retain_fini(js);
    jobstore_ranks_fini(js);
    jobstore_names_fini(js);
    jobstore_cells_fini(js); /* js->ranks: after the parts that hang things off it */
    jobstore_arena_fini(&js->arena);
    free(js);
}

uint32_t argus_jobstore_nranks(const struct argus_jobstore *js)
{
    return js ? js->n_ranks : 0;
}

struct argus_job_meta *argus_jobstore_meta(struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

const struct argus_job_meta *argus_jobstore_meta_c(const struct argus_jobstore *js)
{
    return js ? &js->meta : NULL;
}

void *argus_jobstore_scratch(const struct argus_jobstore *cjs, size_t bytes)
{
    struct argus_jobstore *js = (struct argus_jobstore *)cjs; /* see store/jobstore.h */

    return js ? jobstore_arena_work(&js->arena, bytes) : NULL;
}
