/* spoolcap.h — rank 0's spool stays under ARGUS_SPOOL_MAX (issue 16, item 16): bounded
 * output whatever the job's length.
 *
 * The spool is a head file (summaries.argus, appended to) and segments: when the head
 * reaches max/16 bytes it is closed (its END mark written), moved into the segment
 * directory (summaries.d/NNNNNNNN.argus, renameat within the job directory's fd) and a
 * new head begun with a SEGMENT mark naming how many segments precede it. Then:
 *   - recent horizon: the newest segments that fit in max/2 with the head keep full
 *     detail;
 *   - older segments are rewritten thinned (level 0): every summary of a step that is not
 *     within `margin` steps of an anomaly the latest analysis holds becomes a thin row
 *     (rows record, wire_rows.h: step and phase times, no kernel statistics), the others
 *     stay whole;
 *   - while the total is over max less two head sizes (room for the head to grow to its
 *     next rotation, and a window past it), the oldest segment below level
 *     ARGUS_SPOOLCAP_LEVELS is
 *     rewritten one level down (level k keeps only steps that are multiples of 2^k, as
 *     rows), and when every segment is at the last level the oldest is removed, the steps
 *     it held named in a DROPPED mark in the next.
 * Every rewrite writes a DOWNSAMPLED mark (common/spool.h) stating the step range, level
 * and steps kept whole; argus-analyze reads the segments before the head and reports the
 * marks (import/spool.c). Names and rank info records are always kept.
 *
 * One owner (the pipeline, rank 0's Argus thread). Memory: the segment list (one entry
 * per segment) and one rows record; allocates at rotation, never per record. Errors: a
 * segment that cannot be moved or rewritten turns the policy off (said once); the spool
 * itself goes on.
 */
#ifndef ARGUS_PIPELINE_SPOOLCAP_H
#define ARGUS_PIPELINE_SPOOLCAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/spool.h"

#define ARGUS_SPOOLCAP_LEVELS 8 /* the deepest level: one step in 256 kept */

struct argus_spoolcap;

/* A range of steps to keep whole (an anomaly's, widened by the margin). */
struct argus_spoolcap_keep {
    uint64_t first, last;
};

struct argus_spoolcap_stats {
    uint64_t rotations, rewrites, dropped_segments;
    uint64_t total_bytes; /* head + segments, now */
};

/* max: bytes (> 0). 0 or -ENOMEM. */
int argus_spoolcap_create(uint64_t max, struct argus_spoolcap **out);
void argus_spoolcap_free(struct argus_spoolcap *c);
/* After a flush of *w: rotate and downsample as needed. *w may be replaced by a new head
 * (or NULL when a new head could not be created; errbuf then says why). keep[0..nkeep):
 * steps kept whole on thinning. 0, or negative with errbuf (the policy is then off). */
int argus_spoolcap_after_flush(struct argus_spoolcap *c, struct argus_spool_writer **w,
                               const struct argus_spoolcap_keep *keep, size_t nkeep,
                               char *errbuf, size_t errlen);
void argus_spoolcap_stats(const struct argus_spoolcap *c, const struct argus_spool_writer *w,
                          struct argus_spoolcap_stats *st);

#endif /* ARGUS_PIPELINE_SPOOLCAP_H */
