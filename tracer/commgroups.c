/* commgroups.c — the table of this rank's communicator memberships (commgroups.h): a
 * fixed array under a mutex, filled by the interposers on the application's thread when
 * it creates a communicator (rare), read when a summary is handed over. Must not
 * allocate or block for long. */
#include "tracer/commgroups.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static struct {
    pthread_mutex_t mu;
    uint32_t n, dropped;
    uint64_t gen;
    struct argus_comm_group v[ARGUS_MAX_COMM_GROUPS];
} commgroups_state = {.mu = PTHREAD_MUTEX_INITIALIZER};

int argus_commgroups_add(const struct argus_comm_group *g)
{
    int rc = 0;

    if (!g || g->size < 2)
        return 0;
    pthread_mutex_lock(&commgroups_state.mu);
    if (commgroups_state.n < ARGUS_MAX_COMM_GROUPS) {
        commgroups_state.v[commgroups_state.n++] = *g;
        commgroups_state.gen++;
    } else { /* no new generation: a program making communicators every step past the
              * bound must not make every rank send its rank info again every step */
        commgroups_state.dropped++;
        rc = -ENOSPC;
    }
    pthread_mutex_unlock(&commgroups_state.mu);
    return rc;
}

uint32_t argus_commgroups_get(struct argus_comm_group *out, uint32_t max, uint32_t *dropped)
{
    pthread_mutex_lock(&commgroups_state.mu);
    uint32_t n = commgroups_state.n < max ? commgroups_state.n : max;
    if (n)
        memcpy(out, commgroups_state.v, n * sizeof *out);
    if (dropped)
        *dropped = commgroups_state.dropped + (commgroups_state.n - n);
    pthread_mutex_unlock(&commgroups_state.mu);
    return n;
}

uint64_t argus_commgroups_generation(void)
{
    pthread_mutex_lock(&commgroups_state.mu);
    uint64_t g = commgroups_state.gen;
    pthread_mutex_unlock(&commgroups_state.mu);
    return g;
}
