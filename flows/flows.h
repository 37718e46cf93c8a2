/* flows.h — argus-flows' analysis: from flow records (flows/flowrec.h) to jobs, their
 * data- and pipeline-parallel pairs, their layout, each GPU's step timeline, slow steps and
 * degraded links (docs/ALGORITHMS.md, "Flows"; man/argus-flows.1).
 *
 * - Records: only UDP to opts.port (RoCEv2, 4791) unless port is 0; bytes and packets are
 *   multiplied by the record's sampling interval. They go into a store of opts.max_records
 *   allocated by _create; argus_flows_add never allocates and counts what did not fit.
 *   With opts.window_ns the store is a sliding window over flow time (flows/store.c):
 *   records older than the window expire (counted) instead of newer ones being dropped.
 * - A record seen again at another observation point (same 5-tuple, start and end within
 *   50 us) is counted as a duplicate and skipped.
 * - Endpoints are addresses; a pair is two endpoints that exchanged records; a flowlet is
 *   a run of one direction's records (every 5-tuple of the pair) with gaps of at most
 *   opts.merge_gap_ns.
 * - Jobs: connected components of endpoints over pairs, merged through shared hosts of
 *   the topology, split by the node lists given (a pair across two lists joins nothing).
 * - Pairs: pipeline-parallel (PP) when both directions carry flowlets of one size each
 *   (90 % within 5 % of the direction's median, plus three binomial sigmas under packet
 *   sampling), data-parallel (DP) otherwise.
 * - Steps: per endpoint, its DP flowlets merged into bursts; the gaps between bursts are
 *   split into "inside a step" and "step boundary" twice: by the largest jump of the sorted
 *   log gaps (the baseline) and by Bayesian online change-point detection on the log gaps
 *   in time order (flows/bocpd.h: a run of boundaries is a level above its neighbours);
 *   the change points' answer is used, the agreement and the gaps where they differ kept.
 *   Gaps with no jump of a factor 4 among them are one class: step boundaries when the
 *   least is above twice the median burst length (records that merge a step's chunks).
 *   A step ends with the end of its last DP burst.
 * - Layout: DP groups and pipelines are the components over DP and PP pairs; DP and PP
 *   degree their modal size, TP = world / (DP x PP) with world the job's endpoints (one
 *   NIC per GPU; TP stays inside a host); stage 0 of a pipeline is the end whose first
 *   flowlet goes out.
 * - Slow steps: a step's duration (median over endpoints) above median + k_slow x 1.4826
 *   MAD of the job's durations (the scale at least 0.5 % of the median); with it the DP
 *   group whose DP burst started latest relative to its usual lateness.
 * - Links (with a topology; flows/links.c says more): each PP flowlet's bandwidth
 *   (bytes / duration) counts for its path's links: the two NIC-to-leaf links (leaf:port)
 *   and, between leaves, both leaves' uplinks (leaf:uplink). A link's capacity estimate is
 *   the 90th percentile of its flowlets' bandwidths, compared with its tier's links
 *   (median, MAD): z and relative drop, overall and in opts.link_windows equal time
 *   windows. Degraded: z <= -k_link and drop >= link_drop overall and in at least half of
 *   the windows with data, chosen greedily so that one bad link explains its peers' slow
 *   flowlets.
 *
 * argus_flows_analyse allocates (per analysis, never per record) and may be called once.
 * Not thread-safe; one context per thread.
 */
#ifndef ARGUS_FLOWS_FLOWS_H
#define ARGUS_FLOWS_FLOWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/outdir.h"
#include "flows/export.h"
#include "flows/flowrec.h"
#include "flows/ports.h"
#include "flows/topo.h"

struct argus_flows_opts {
    uint16_t port;          /* UDP destination port kept (4791); 0: every record */
    uint64_t merge_gap_ns;  /* flowlet merge gap (default 100 us) */
    double k_slow;          /* slow-step threshold in robust sigmas (3) */
    double k_link;          /* degraded-link threshold in robust sigmas (3) */
    double link_drop;       /* and relative drop at least (0.1) */
    unsigned link_windows;  /* persistence windows (4) */
    size_t max_records;     /* records kept (default 2,000,000) */
    uint64_t window_ns;     /* > 0: analyse only the records ending in the last window_ns
                               of flow time; older ones expire (flows/store.c) */
};

/* The defaults above. */
void argus_flows_opts_default(struct argus_flows_opts *o);

/* What the caller read, for flows.json's "inputs" and flows.md (all counts). */
struct argus_flows_inputs {
    uint64_t files, files_skipped, csv_lines_bad, packets_bad_framing;
    uint64_t udp_datagrams;
    uint64_t port_lines_bad;                      /* port-counter CSV lines refused */
    const struct argus_flow_decode_stats *decode; /* NULL: no export packets read */
};

struct argus_flows;

/* 0 and *out, or -ENOMEM / -EINVAL (errbuf says which option). */
int argus_flows_create(const struct argus_flows_opts *o, struct argus_flows **out,
                       char *errbuf, size_t errlen);
void argus_flows_free(struct argus_flows *f);
/* The record sink (argus_flow_sink): ctx is the struct argus_flows. Returns 0; never
 * allocates. */
int argus_flows_add(void *ctx, const struct argus_flow_rec *r);
/* A node list: the hosts (topology names, comma-separated) of one job. Endpoints of hosts
 * in different lists are never one job, whatever traffic they exchanged. Allocates (a
 * copy); 0, -ENOMEM, or -EINVAL (empty, more than 4096 lists) with errbuf. */
int argus_flows_add_nodes(struct argus_flows *f, const char *hosts, char *errbuf,
                          size_t errlen);
/* The topology the analysis uses (borrowed; must outlive the context). */
void argus_flows_set_topology(struct argus_flows *f, const struct argus_topo *t);
/* Switch port counters (flows/ports.h; borrowed, must outlive the context): the analysis
 * judges their ports too, and with no flow record kept judges them alone. */
void argus_flows_set_ports(struct argus_flows *f, struct argus_ports *ps);
/* An in-band Argus run of the same job to compare with (flows/xcheck.h; loaded by the
 * caller, borrowed, must outlive the context): the analysis runs the comparison last. */
struct fl_xcheck;
void argus_flows_set_xcheck(struct argus_flows *f, struct fl_xcheck *x);
/* Records kept, filtered out (not the port), dropped (store full). */
void argus_flows_counts(const struct argus_flows *f, uint64_t *kept, uint64_t *filtered,
                        uint64_t *dropped);
/* Run the inference and the diagnosis. 0, -ENOMEM, -ENODATA (no record kept and no port
 * sample). */
int argus_flows_analyse(struct argus_flows *f, char *errbuf, size_t errlen);
/* Write flows.json, timeline.csv and flows.md into od (common/outdir.h writers); 0 or
 * negative errno with errbuf naming the file. */
int argus_flows_write(const struct argus_flows *f, const struct argus_outdir *od,
                      const struct argus_flows_inputs *in, char *errbuf, size_t errlen);
/* A one-paragraph summary (jobs, layouts, slow steps, degraded links) for stdout. */
void argus_flows_summary(const struct argus_flows *f, char *out, size_t outlen);

#endif /* ARGUS_FLOWS_FLOWS_H */
