/* condensed.h — what a condensed window promises its readers. A condensing reduction tree
 * (reduce/condense.h) sends rank 0 full summaries only for reference ranks and extreme
 * cells, and a row (aggrow.h: the thin summary) for every other cell. The reference rule
 * is shared vocabulary: the tree decides by it which ranks it sends in full, and the
 * analysis relies on it to judge a group on its reference members alone. Pure.
 */
#ifndef ARGUS_COMMON_CONDENSED_H
#define ARGUS_COMMON_CONDENSED_H

#include <stdint.h>

#include "common/types.h"

#define ARGUS_CONDENSE_REF_DP 2      /* layout known: ranks with dp index below this */
#define ARGUS_CONDENSE_REF_MAX 32    /* layout unknown: at most this many reference ranks */

/* Is this summary's rank a reference rank: with a known layout, data-parallel index
 * below ARGUS_CONDENSE_REF_DP (every pipeline and tensor position keeps that many
 * ordinary peers); without one, every rank of a job of at most ARGUS_CONDENSE_REF_MAX
 * ranks, else a fixed hash-chosen set of about that many. */
int argus_condense_reference(const struct argus_step_summary *s, uint32_t world);

#endif /* ARGUS_COMMON_CONDENSED_H */
