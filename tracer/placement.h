/* placement.h — where this rank runs, from hwloc: the GPU's PCI bus id, its NUMA node, the
 * nearest NIC, the CPUs the process is bound to and whether they are local to the GPU
 * (struct argus_placement, common/wire.h; docs/ARCHITECTURE.md, "Placement").
 *
 * A placer holds one loaded topology: this machine's, or a recorded one (an hwloc XML file,
 * the replay the tests use). Loading reads sysfs (or the file) and allocates, so it is done
 * once at start-up, never on a step path; filling looks objects up in the loaded topology and
 * asks the kernel for the binding (one system call), with no allocation other than hwloc's
 * two bitmaps. Not thread-safe: one thread at a time per placer. Never prints.
 */
#ifndef ARGUS_TRACER_PLACEMENT_H
#define ARGUS_TRACER_PLACEMENT_H

#include <stddef.h>

#include "common/wire.h"

struct argus_placer;

/* Load a topology with its PCI and OS devices (GPUs, NICs): from the hwloc XML file xml, or
 * this machine's when xml is NULL (hwloc's own HWLOC_XMLFILE still applies then). 0 and
 * *out, or negative errno with one line in errbuf ("<xml>: not a readable hwloc topology
 * XML"); *out is NULL then. */
int argus_placer_create(const char *xml, struct argus_placer **out, char *errbuf,
                        size_t errlen);

/* Fill *out (overwritten; flags has ARGUS_PLACE_KNOWN) for the GPU with PCI bus id bus
 * ("0000:17:00.0", case-insensitive, the domain optional; NULL or "": no GPU) and the CPU
 * set cpus in hwloc's list form ("0-3,8"; NULL: the process's binding now, which only a
 * topology of this machine can tell).
 * - gpu_bus is the bus id as given, normalised to "dddd:bb:dd.f"; ARGUS_PLACE_GPU only when
 *   the topology has that PCI device, and then gpu_numa is its NUMA node (-1 when its
 *   nearest CPU-side object spans several).
 * - nic is the network or OpenFabrics OS device whose common ancestor with the GPU (with
 *   the bound CPUs' object when there is no GPU) is the fewest steps above it, OpenFabrics
 *   first on a tie (an InfiniBand port is both), "" when the topology has none.
 * - ARGUS_PLACE_LOCAL when every bound CPU lies inside the CPU set of the GPU's nearest
 *   CPU-side object (its NUMA node or package).
 * Returns 0; -EINVAL with one line in errbuf for a malformed bus or cpus (out still holds
 * what was known).
 */
int argus_placer_fill(const struct argus_placer *p, const char *bus, const char *cpus,
                      struct argus_placement *out, char *errbuf, size_t errlen);

void argus_placer_free(struct argus_placer *p);

#endif /* ARGUS_TRACER_PLACEMENT_H */
