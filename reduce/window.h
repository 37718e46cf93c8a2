/* window.h — one rank's outgoing records for one window (a growable byte buffer of
 * encoded wire records). handoff.c keeps a few of these in its ring; agent.c moves
 * them up the tree.
 *
 * The buffer grows only when a summary, a kernel name or a rank-info record is added
 * (geometric doubling), never per kernel event. handoff.c reserves the first buffer's
 * capacity at create (window summaries of 64 modes, at most 8 MiB: agent.c) and bounds
 * every buffer by argus_handoff_cap_max(window), so any ARGUS_WINDOW fits.
 */
#ifndef ARGUS_REDUCE_WINDOW_H
#define ARGUS_REDUCE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"
#include "common/wire.h"

struct argus_window {
    uint8_t *buf;
    size_t len, cap;
    uint32_t n_summaries;  /* summaries in buf */
    uint64_t bytes_summaries; /* encoded summary bytes sent so far (for the report) */
    uint64_t n_summaries_total;
};

int argus_window_init(struct argus_window *w, size_t reserve);
void argus_window_free(struct argus_window *w);
int argus_window_add_summary(struct argus_window *w, const struct argus_step_summary *s);
int argus_window_add_name(struct argus_window *w, uint64_t hash, const char *name);
int argus_window_add_rankinfo(struct argus_window *w, const struct argus_rank_info *ri);
void argus_window_reset(struct argus_window *w);

#endif /* ARGUS_REDUCE_WINDOW_H */
