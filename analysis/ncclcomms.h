/* ncclcomms.h — internal to analysis/: the NCCL communicators that the held summaries'
 * blocks name over a window of steps, and each one's members, for ncclview.c. Reads the
 * context's cells only (struct an_ctx); a bound on the work per window: at most
 * AN_NCCL_COMMS_MAX communicators, the first met in rank order (the rest ignored).
 * The caller owns the struct; one allocation per scan (the members); no globals.
 */
#ifndef ARGUS_ANALYSIS_NCCLCOMMS_H
#define ARGUS_ANALYSIS_NCCLCOMMS_H

#include <stddef.h>
#include <stdint.h>

#define AN_NCCL_COMMS_MAX 64 /* distinct communicators looked at per window */

struct an_ctx;

/* The communicators with an entry over [a, b] (the first AN_NCCL_COMMS_MAX met, in rank
 * order) and each one's members (slots, ascending) in CSR form: one pass to count, one
 * to fill. */
struct an_nccl_comms {
    size_t n;
    uint64_t h[AN_NCCL_COMMS_MAX];
    uint32_t cnt[AN_NCCL_COMMS_MAX], off[AN_NCCL_COMMS_MAX + 1], stamp[AN_NCCL_COMMS_MAX];
    uint16_t slot[2 * AN_NCCL_COMMS_MAX]; /* open addressing on the hash: index + 1, 0 empty */
    uint32_t *mem;                        /* [off[n]] */
    size_t order[AN_NCCL_COMMS_MAX];      /* indices by ascending hash */
};

/* Fill *q with the communicators over step indices [a, b] (a <= b < c->S), q->order by
 * ascending hash. 0 or -ENOMEM; either way an_nccl_comms_free releases what it holds. */
int an_nccl_comms_scan(const struct an_ctx *c, size_t a, size_t b, struct an_nccl_comms *q);
/* Copy the members of communicator index k (slots, ascending) into mem (room for c->n);
 * returns how many. */
uint32_t an_nccl_comm_members(const struct an_nccl_comms *q, size_t k, uint32_t *mem);
/* Free what a scan allocated (q->mem; NULL after). */
void an_nccl_comms_free(struct an_nccl_comms *q);

#endif /* ARGUS_ANALYSIS_NCCLCOMMS_H */
