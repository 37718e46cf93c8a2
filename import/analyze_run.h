/* analyze_run.h — internal to argus-analyze: the state of one offline run (summaries and
 * names staged from every input before they go into the job store, per-file Kineto facts
 * for clock alignment, the inputs skipped and why) and the input side
 * (import/inputs.c): argus_analyze_import_path imports a file, or every regular
 * non-hidden file of a directory (sorted, one level), detecting the format from content;
 * a bad file costs one line on stderr and an entry in skipped[], never the run.
 */
#ifndef ARGUS_IMPORT_ANALYZE_RUN_H
#define ARGUS_IMPORT_ANALYZE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"
#include "common/types.h"

#define PROG "argus-analyze"
#define MAX_SKIPPED 64


struct staged {
    struct argus_step_summary *s; /* trimmed copy */
    int file;                     /* index of the input it came from */
};

struct names {
    uint64_t hash;
    char *name;
};

struct run {
    struct staged *sums;
    size_t n_sums, cap_sums;
    struct names *names;
    size_t n_names, cap_names;
    int cur_file;
    int oom;
    /* Kineto ranks: info per file that imported */
    struct argus_kineto_info **kinfo;
    size_t n_kinfo, cap_kinfo;
    char **spools;
    size_t n_spools, cap_spools;
    uint32_t n_ranks;
    int source;
    int any_kineto, any_csv;
    size_t n_inputs, n_ok;
    char *skipped[MAX_SKIPPED];   /* "path: reason" */
    size_t n_skipped;
    char jobid[256];
    struct argus_kineto_opts kopts;
};

void argus_analyze_import_path(struct run *r, const char *path);

#endif /* ARGUS_IMPORT_ANALYZE_RUN_H */
