/* labels.h — the words the diagnosis uses for kernels and ranks in its sentences
 * (explain.c), for the report writers to say the same: a kernel's short label, a list of
 * ranks. Both write into the caller's buffer; an_short_name reads the store's name
 * dictionary (the thread that owns the store), an_format_ranks any thread.
 */
#ifndef ARGUS_ANALYSIS_LABELS_H
#define ARGUS_ANALYSIS_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "store/jobstore.h"

/* Short label of a kernel for sentences: "AllReduce", "ReduceScatter", ... or the name
 * cut to fit. */
void an_short_name(const struct argus_jobstore *js, uint64_t hash, char *buf, size_t len);
/* "5", "1,3,5,7", "8-15" into buf. */
void an_format_ranks(const uint32_t *r, size_t n, char *buf, size_t len);

#endif /* ARGUS_ANALYSIS_LABELS_H */
