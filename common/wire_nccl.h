/* wire_nccl.h — internal to common/wire_summary.c: the NCCL block of a version-5 summary
 * record (struct argus_nccl_sum, common/types.h), lossless.
 *
 * Layout (uv: LEB128; zz: zigzag varint of a u64 difference modulo 2^64):
 *   uv n_comms (<= ARGUS_NCCL_SUM_COMMS), uv comms_dropped,
 *   n_comms x { u64 comm_hash, uv colls,
 *               uv key = (peer + 1) << 2 | peer_xfer follows << 1 | last collective follows,
 *               uv peer_wait_ns, uv xfer_ns, uv gpu_wait_ns, [uv peer_xfer_ns],
 *               [uv last_seq, zz last_start_ns - the summary's start_ns] }
 * "last collective follows" is set when last_start_ns is not 0 (0 means none; then
 * last_seq is 0 too, or the block is refused). No allocation.
 */
#ifndef ARGUS_COMMON_WIRE_NCCL_H
#define ARGUS_COMMON_WIRE_NCCL_H

#include <stdint.h>

#include "common/types.h"
#include "common/wire_io.h"

/* Does s carry an NCCL block (any communicator, kept or dropped)? */
int argus_wire_nccl_present(const struct argus_nccl_sum *n);
/* 0 when n can be written losslessly; -EINVAL otherwise (more than ARGUS_NCCL_SUM_COMMS
 * communicators, comms_dropped past ARGUS_NCCL_DROPPED_MAX, a peer below -1 or at
 * ARGUS_NCCL_PEER_LIMIT or past it, a last seq without a start). */
int argus_wire_nccl_check(const struct argus_nccl_sum *n);
void argus_wire_nccl_put(struct wbuf *w, const struct argus_nccl_sum *n, uint64_t start_ns);
/* Reads the block into *out (zeroed first). A count out of range sets *range_at to its
 * offset (when still 0); a short or bad read is left in r->bad. */
void argus_wire_nccl_get(struct rbuf *r, struct argus_nccl_sum *out, uint64_t start_ns,
                         size_t *range_at);
/* The most bytes argus_wire_nccl_put writes: one-byte counts, and per communicator the
 * hash, colls (u32), the key (3 B: peer + 1 < 2^19) and six u64 varints. */
#define ARGUS_WIRE_NCCL_MAX (2 + ARGUS_NCCL_SUM_COMMS * (8 + 5 + 3 + 6 * 10))

#endif /* ARGUS_COMMON_WIRE_NCCL_H */
