/* inputs.h — internal to flows/: argus-flows' readers of whole inputs. A file of export
 * packets (back to back, or a pcap of UDP datagrams carrying them), a flow CSV, a topology
 * CSV, and the UDP collector on loopback. Each reports every bad packet, line or datagram
 * as one line on stderr (prefixed "argus-flows: " and naming the file and byte or line;
 * at most ARGUS_FLOWS_MAX_LINES lines per input, the rest counted only), goes on with the
 * rest, and feeds records to the sink. They allocate per input, never per record.
 */
#ifndef ARGUS_FLOWS_INPUTS_H
#define ARGUS_FLOWS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "flows/export.h"
#include "flows/flows.h"
#include "flows/ports.h"
#include "flows/topo.h"

#define ARGUS_FLOWS_MAX_LINES 100

struct fl_reader {
    struct argus_flow_decoder *dec;
    argus_flow_sink sink;
    void *ctx;
    struct argus_flows_inputs *in;
    uint64_t file_index;
};

/* Read a file, its format told by its first bytes. 0 when it was read (perhaps with bad
 * parts), -1 when it was skipped whole (said on stderr). */
int fl_read_file(struct fl_reader *r, const char *path);
/* Read the topology CSV into t. 0, or -1 (said on stderr); bad lines are skipped. */
int fl_read_topology(struct argus_topo *t, const char *path);
/* Read a port-counter CSV (flows/ports.h) into ps; bad lines are said and counted in
 * in->port_lines_bad. 0, or -1 (said on stderr). */
int fl_read_ports(struct argus_ports *ps, const char *path, struct argus_flows_inputs *in);
/* Collect on 127.0.0.1:port (0: a free port) until duration_ms passed (0: no limit) or
 * npackets datagrams came (0: no limit) or SIGINT/SIGTERM; the bound port is said on
 * stderr. 0, or -1 (said on stderr). */
int fl_collect(struct fl_reader *r, unsigned port, uint64_t duration_ms, uint64_t npackets);

#endif /* ARGUS_FLOWS_INPUTS_H */
