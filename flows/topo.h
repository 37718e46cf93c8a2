/* topo.h — the topology CSV: one line per NIC address,
 *   ip,host,nic,gpu,leaf,port[,rank]
 * (host, nic, leaf, port: names of at most 63 bytes; gpu: an integer, empty for none;
 * rank: the global rank of an in-band Argus run that uses this NIC, empty or absent for
 * none: the rank to NIC map of the cross-check, flows/xcheck.h). A
 * header line (starting with "ip,"), an empty line or one starting with '#' is skipped.
 * The table is the caller's (_create/_free); add allocates (argus_grow), find does not.
 * Not thread-safe.
 */
#ifndef ARGUS_FLOWS_TOPO_H
#define ARGUS_FLOWS_TOPO_H

#include <stddef.h>

#include "flows/flowrec.h"

#define ARGUS_TOPO_NAME 64

struct argus_topo_entry {
    struct argus_flow_addr ip;
    char host[ARGUS_TOPO_NAME], nic[ARGUS_TOPO_NAME];
    char leaf[ARGUS_TOPO_NAME], port[ARGUS_TOPO_NAME];
    int gpu;  /* -1: none */
    int rank; /* -1: none */
};

struct argus_topo {
    struct argus_topo_entry *e;
    size_t n, cap;
};

void argus_topo_init(struct argus_topo *t);
void argus_topo_free(struct argus_topo *t);
/* Parse one line and add it. 1 added, 0 skipped (header, comment, empty), -EINVAL with
 * errbuf naming the column, -EEXIST (the address is there already), -ENOMEM. */
int argus_topo_add_line(struct argus_topo *t, const char *line, size_t len, char *errbuf,
                        size_t errlen);
/* The entry of ip, or NULL. Linear scan over a sorted copy is not kept: O(n); the analysis
 * looks each endpoint up once. */
const struct argus_topo_entry *argus_topo_find(const struct argus_topo *t,
                                               const struct argus_flow_addr *ip);

#endif /* ARGUS_FLOWS_TOPO_H */
