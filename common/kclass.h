/* kclass.h — the class of a GPU kernel from its name: NCCL/RCCL kernels are collectives,
 * or point-to-point when their name says Send or Recv; every other kernel is compute.
 * Memcpy and memset activities are classed by their kind, not here. Shared by the live
 * collector (tracer/collect.c) and the offline Kineto importer (import/kineto.c), so both
 * class the same kernel the same way. Pure; any thread.
 */
#ifndef ARGUS_COMMON_KCLASS_H
#define ARGUS_COMMON_KCLASS_H

/* enum argus_kclass (common/types.h) of a kernel named `name`; NULL is compute. */
int argus_kclass_from_name(const char *name);

#endif /* ARGUS_COMMON_KCLASS_H */
