/* xcheck.h — the cross-check of argus-flows with an in-band Argus run of the same job
 * (`--argus-report DIR/report.json`, or the job directory): what the flows say against
 * what Argus measured, and where they disagree.
 *
 * Loaded: report.json's layout (tp, pp, dp), job.ranks and steps.median_ms (YAJL tree),
 * and, when it lies beside it, steps.csv (columns by the header's names: step, rank,
 * end_ns): per step the job's end, the latest end over ranks.
 *
 * The rank to NIC map is the topology's rank column (flows/topo.h). Argus's groups follow
 * from its layout in Megatron order (tp fastest, then dp, then pp): rank r has tp rank
 * r % tp, DP rank (r / tp) % dp, stage r / (tp dp). Compared (fl_xcheck_run), for the
 * flows job that holds the most mapped NICs:
 * - the layout (DP, PP, TP);
 * - every pair of that job between two mapped NICs: a DP pair must join ranks of one
 *   stage and one tp rank, a PP pair ranks of one DP rank and tp rank in adjacent
 *   stages; a rank with most of its pairs (two at least) disagreeing is a suspect: the
 *   rank to host map is likely wrong for it (its NIC carries another rank's traffic; a
 *   swap within one stage shows on the PP pairs only, on both stages alike);
 * - rails: a DP or PP pair between NICs of different GPU index crosses rails (traffic a
 *   rail-optimised fabric should not carry), whatever the map;
 * - each mapped endpoint's stage against its rank's;
 * - the median step time, and the step durations aligned: on one clock (the spans of
 *   step ends overlap) each flows step with Argus's nearest end (the median index shift),
 *   with the median offset of the ends (the flows' DP burst ends before Argus's step:
 *   the optimizer); else by the shift within +-3 steps that fits best. Reported: the
 *   median relative error of the durations.
 *
 * _load allocates (the step ends), _free releases; _run allocates per call and frees.
 * Not thread-safe.
 */
#ifndef ARGUS_FLOWS_XCHECK_H
#define ARGUS_FLOWS_XCHECK_H

#include <stddef.h>
#include <stdint.h>

#define FL_XCHECK_SUSPECTS 32

struct argus_flows;

struct fl_xcheck {
    char path[512];
    int tp, pp, dp, ranks;
    double argus_median_ms;
    uint64_t *step_end;      /* per step index (first .. last), 0: no row */
    size_t nsteps;
    /* results of _run */
    int ran, job;            /* the flows job compared (-1: none holds a mapped NIC) */
    size_t ranks_mapped, ranks_seen;   /* ranks with a NIC in the map; of them, in flows */
    int layout_agrees;
    size_t pairs_checked, pairs_disagree, rail_crossings, stages_checked, stage_disagree;
    int suspect[FL_XCHECK_SUSPECTS];
    size_t nsuspect;
    double flows_median_ms, median_rel_diff;
    size_t steps_compared;
    int shift;
    double dur_err_median;   /* NaN: not compared */
    double end_offset_ms;    /* one clock: flows' step end minus Argus's (median); NaN */
};

/* Read path (report.json, or a directory holding it). 0, or -errno with errbuf naming the
 * file and what is wrong. */
int fl_xcheck_load(struct fl_xcheck *x, const char *path, char *errbuf, size_t errlen);
void fl_xcheck_free(struct fl_xcheck *x);
/* Compare with the analysed flows (the comparison above). 0 or -ENOMEM. */
int fl_xcheck_run(struct fl_xcheck *x, const struct argus_flows *f);

#endif /* ARGUS_FLOWS_XCHECK_H */
