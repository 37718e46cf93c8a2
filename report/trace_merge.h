/* trace_merge.h — rank 0's L4 merge: the target ranks' Chrome-trace events (each reply an
 * array written by tracer/ring.c, timestamps already moved onto rank 0's clock by the
 * rank's ping-pong offset) become one document, with each rank's offset refined on
 * collective ends (docs/ALGORITHMS.md, "Clock alignment: L4 traces"): all members of one collective
 * finish together, so for a rank that shares collectives with the reference (the first part, the
 * first source) the differences of end times of the same instances are its residual clock error.
 * Instances are matched by (kernel name, step, occurrence in the step); per name the median
 * difference and its spread (MAD) are computed; the name with the most consistent differences (MAD
 * <= ARGUS_MERGE_MAX_MAD_NS, at least ARGUS_MERGE_MIN_MATCH instances) gives the correction.
 * Collectives of other groups that only share a name (TP all-reduces of different TP groups) end at
 * unrelated times, show a large spread and are not used. A rank without a consistent match keeps
 * its ping-pong alignment.
 *
 * Parts are parsed with YAJL's tree API (each was already checked as JSON); events are
 * re-emitted into the caller's yajl_gen (docs/STYLE.md, "File formats and JSON"), so the
 * document they belong to goes through one generator. Pure: no MPI, no globals, no output
 * of its own.
 */
#ifndef ARGUS_REPORT_TRACE_MERGE_H
#define ARGUS_REPORT_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#define ARGUS_MERGE_MIN_MATCH 3
#define ARGUS_MERGE_MAX_MAD_NS 20000 /* 20 us */

struct argus_trace_part {
    uint32_t rank;
    const char *json; /* a JSON array of Chrome-trace events, NUL-terminated */
    size_t len;
    /* out: the refinement applied to this part's timestamps (ns, added) and the number
     * of collective instances it rests on (0: none applied) */
    int64_t refine_ns;
    uint32_t matched;
    double mad_ns;
};

/* Emit the events of parts[0..n) (refined as above), part after part, into g as elements
 * of the array g has open (the caller opens and closes it; g's own configuration, such as
 * yajl_gen_validate_utf8, applies). Numbers keep their text, except a shifted "ts", which
 * g formats as yajl_gen_double does. Every part is parsed and refined before the first
 * token, so g is untouched on -EINVAL and -ENOMEM. *wrote is set to 1 when at least one
 * event was emitted. Allocates the parsed parts, freed before it returns; g is not freed.
 * 0, -EINVAL (a part does not parse as an array), -ENOMEM, or -EIO (g refused a token,
 * e.g. past its maximum depth; what g holds is then incomplete). */
int argus_trace_merge(yajl_gen g, struct argus_trace_part *parts, size_t n, int *wrote);

#endif /* ARGUS_REPORT_TRACE_MERGE_H */
