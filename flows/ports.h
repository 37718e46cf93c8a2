/* ports.h — switch port-counter series: one line per sample,
 *   time,device,port,in_octets,out_octets
 * (time: ns since the epoch as an integer, or seconds with a fraction or below 10^14;
 * device, port: names of at most 63 bytes; the octets: the port's cumulative counters, as
 * SNMP ifHCInOctets / ifHCOutOctets or streaming telemetry give them). A header (starting
 * with "time"), an empty line or one starting with '#' is skipped.
 *
 * The view (fl_ports_analyse): per port its samples in time order; an interval between
 * two samples gives a rate per direction (octets / seconds); a counter that went down (a
 * reset or a wrap) costs that interval, counted. Per port: the mean rates over its span,
 * the busy fraction (time in intervals that carried traffic), and its peak: the 90th
 * percentile of the rates of its full intervals (busy, between two busy ones: a transfer
 * covers them whole, so the rate is the link's), the larger direction; a port with fewer
 * than 5 full intervals has no peak (NaN, null in flows.json) and is not judged. Ports are judged
 * against the ports of their tier (the NIC-facing ports that the topology names as a
 * NIC's leaf and port; the others), median and MAD of the peaks, overall and in `windows`
 * equal time windows (at least 5 busy intervals a window): degraded when z <= -k and the
 * drop below the tier median >= drop overall and in at least half of the windows with
 * data. A synchronous job sends every port the same bytes per step, so the mean hides a
 * slow port; its peak does not (samples no longer than the transfers are needed).
 *
 * The table is the caller's (_init / _free); add allocates a port the first time it is
 * named and grows the sample array geometrically, at most max_samples samples (more are
 * counted as dropped). Not thread-safe.
 */
#ifndef ARGUS_FLOWS_PORTS_H
#define ARGUS_FLOWS_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include "flows/topo.h"

struct fl_port {
    char device[ARGUS_TOPO_NAME], port[ARGUS_TOPO_NAME];
    int tier;                  /* 0: faces a NIC of the topology, 1: the others */
    size_t samples, intervals, busy, full;   /* full: busy with busy intervals on both
                                                sides (a transfer covers it whole) */
    double mean_in, mean_out;  /* bytes/s over its span */
    double busy_frac, peak;    /* peak: bytes/s */
    double z, drop;
    unsigned win_used, win_flagged;
    int degraded;
};

struct fl_psample {
    uint64_t t, in, out;
    uint32_t port;
};

struct argus_ports {
    struct fl_port *p;
    size_t n, cap;
    struct fl_psample *s;
    size_t ns, scap, max_samples;
    uint64_t *slot;            /* hash of names -> port index + 1 (0: empty) */
    size_t slot_mask;
    uint64_t dropped, resets, lines;
    uint64_t t_first, t_last;
    int analysed;
};

void fl_ports_init(struct argus_ports *ps, size_t max_samples);
void fl_ports_free(struct argus_ports *ps);
/* Parse one line and add its sample. 1 added, 0 skipped (header, comment, empty, or the
 * table full: counted in dropped), -EINVAL with errbuf naming the column, -ENOMEM. */
int fl_ports_add_line(struct argus_ports *ps, const char *line, size_t len, char *errbuf,
                      size_t errlen);
/* The view above; topo may be NULL (one tier). k, drop, windows as in flows/flows.h's
 * links. 0 or -ENOMEM. */
int fl_ports_analyse(struct argus_ports *ps, const struct argus_topo *topo, double k,
                     double drop, unsigned windows);

#endif /* ARGUS_FLOWS_PORTS_H */
