/* wire.h — versioned, checksummed binary encoding of step summaries (contract 3) and of
 * kernel-name dictionary entries. Used on the MPI wire and inside spool files.
 *
 * Record layout (little-endian):
 *   u32 magic  ARGUS_WIRE_MAGIC ("ARGS")
 *   u16 version ARGUS_WIRE_VERSION
 *   u16 type    (ARGUS_REC_SUMMARY | ARGUS_REC_NAME | ARGUS_REC_JOBINFO | ARGUS_REC_ROWS)
 *   u32 payload length in bytes
 *   ... payload ...
 *   u32 CRC32C over magic..payload
 * Only used kmodes are encoded, and of each sketch only its used bucket span.
 *
 * Summaries are written as version 5 (wire_summary.c has the byte layout) and versions 1
 * (fixed widths), 2 (varints), 3 (version 4 without the idle interval: idle_long_ns and
 * idle_long_end_ns decode as 0) and 4 (version 5 without the NCCL block: nccl decodes as
 * zeros) are still read. Versions 3 to 5 are LOSSLESS: every field
 * of struct argus_step_summary decodes to exactly the value encoded (no precision is lost;
 * tests/common/test_wire_summary.c checks it bit for bit), except last_end_ns of kernel modes
 * that are not collectives, which types.h defines as 0 and which decodes as 0. Its savings
 * over version 2 come from redundancy only: class, phase and mode in one key byte; a kernel's later
 * modes reuse the previous mode's 8-byte name hash (one flag bit); count is implied by the sketch
 * (zeros + bucket counts) unless it differs; sketch flags/zeros only when non-zero; max, sum, end,
 * host gap and clocks as differences from values already sent (max - min, sum - count * min, ...)
 * and the sketch base as its difference from a predictor computed from min (integer arithmetic, so
 * identical on every host); coords as varints. Each record stands alone (no state shared between
 * records: a lost record loses only itself). The realistic step of bench/tracer_bench (50,000
 * launches over 200 names, coverage 0.97, 34 kernel modes) took 1,263 B as version 2 and 904 B as
 * version 3, 11,947x less than its CUPTI records; with the collective modes' last end times (clk
 * bit 1, for inferring communication groups) it takes 944 B; tests/common/test_wire_step.c fails
 * past 1,024 B. Version 4 adds the step's longest GPU idle interval (its length and end; clk
 * bit 2, no bytes when both are 0) with the end counted from the nearer side of the step (clk
 * bit 3): 3 B more on that step (its longest idle, 1 us, ends the step), 947 B at most over
 * test_wire_step's 20 steps; a 0.5 s stall from the step's start takes 6 B. Version 5 adds
 * the NCCL profiler plugin's block (clk bit 4, after the kernel modes; wire_nccl.h): two
 * communicators take 68 B at most on test_wire_step's realistic block, 1,015 B in all
 * (10,640x). Name and
 * rank-info records have the same layout in every version; a rank-info record may end after the
 * host name (written so before communicator memberships were added): it decodes with no
 * memberships; one that ends after the memberships decodes with no placement; and one that
 * ends after the placement decodes with no planned steps (planned_steps and planned_at_ns
 * 0: u64 each after the placement, which is then written even when not probed, flags 0);
 * one that ends after the planned steps decodes with no environment plan
 * (env_planned_steps 0: a u64 after them, which are then written even when 0, 0).
 * Rank info is sent once and again when it changes, never per step: it costs nothing of
 * a step's wire budget.
 *
 * Decoders never trust input: every length is bounds-checked, a bad magic, unknown version
 * or type, short buffer or checksum mismatch returns a negative code and fills errbuf
 * with one line naming the offset. No allocation.
 */
#ifndef ARGUS_COMMON_WIRE_H
#define ARGUS_COMMON_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define ARGUS_WIRE_MAGIC 0x53475241u /* "ARGS" read little-endian */
#define ARGUS_WIRE_VERSION 5     /* written; 2: varint summaries with overhead + clock triple;
                                    3: lossless compact summaries (see above); 4: with the
                                    longest idle interval; 5: with the NCCL plugin block */
#define ARGUS_WIRE_VERSION_MIN 1 /* oldest still read (spools written by older builds) */
#define ARGUS_WIRE_HDR 12  /* magic + version + type + length */
#define ARGUS_WIRE_TRAILER 4

enum argus_rec_type {
    ARGUS_REC_SUMMARY = 1, /* struct argus_step_summary */
    ARGUS_REC_NAME = 2,    /* u64 hash, u16 len, bytes: one kernel name */
    ARGUS_REC_JOBINFO = 3, /* struct argus_rank_info */
    ARGUS_REC_ROWS = 4,    /* rank 0's thin cells as aggregate rows (wire_rows.h) */
};

#define ARGUS_ROWS_PER_RECORD 512 /* at most, in one rows record */

#define ARGUS_NAME_MAX 512  /* longest kernel name kept (longer names are truncated) */
#define ARGUS_HOST_MAX 64

/* Where a rank runs (tracer/placement.h fills it from hwloc; docs/REPORT_SCHEMA.md,
 * "placement"). Plain data, fixed size; strings NUL-terminated, "" when unknown. */
#define ARGUS_PLACE_BUS_MAX 20   /* "dddddddd:bb:dd.f" and the NUL */
#define ARGUS_PLACE_NIC_MAX 16   /* an OS device name ("mlx5_0", "ib0", "eth0") */
#define ARGUS_PLACE_CPUS_MAX 48  /* the bound CPUs in list form ("0-15,64-79") */
enum {
    ARGUS_PLACE_KNOWN = 1,       /* the rank read its topology (every other field is
                                    meaningful only with this bit) */
    ARGUS_PLACE_GPU = 2,         /* gpu_bus names a GPU found in that topology */
    ARGUS_PLACE_CPUS = 4,        /* cpuset is the process's binding */
    ARGUS_PLACE_LOCAL = 8,       /* GPU and CPUS: every bound CPU is local to the GPU (its
                                    NUMA node or package) */
    ARGUS_PLACE_CPUS_CUT = 16,   /* cpuset was longer than ARGUS_PLACE_CPUS_MAX - 1 */
};
struct argus_placement {
    uint8_t flags;               /* ARGUS_PLACE_* */
    int16_t gpu_numa;            /* the GPU's NUMA node, -1 unknown or several */
    int16_t cpu_numa;            /* the NUMA node of every bound CPU, -1 unknown or several */
    char gpu_bus[ARGUS_PLACE_BUS_MAX];  /* PCI bus id of the rank's GPU */
    char nic[ARGUS_PLACE_NIC_MAX];      /* the NIC nearest to the GPU (else to the CPUs) */
    char cpuset[ARGUS_PLACE_CPUS_MAX];
};

/* What a rank says about itself once per job. */
struct argus_rank_info {
    uint32_t rank;
    uint32_t world_size;
    int32_t device;            /* -1 unknown */
    uint32_t pid;
    struct argus_coords coords;
    uint64_t started_ns;       /* CLOCK_REALTIME when the tracer started */
    char host[ARGUS_HOST_MAX]; /* NUL-terminated */
    uint32_t n_groups;         /* valid entries of groups (<= ARGUS_MAX_COMM_GROUPS) */
    uint32_t groups_dropped;   /* memberships past ARGUS_MAX_COMM_GROUPS, not kept */
    struct argus_comm_group groups[ARGUS_MAX_COMM_GROUPS]; /* in creation order */
    struct argus_placement place; /* flags 0: not probed (records of older builds) */
    uint64_t planned_steps;    /* the job's planned steps as this rank was told them
                                  (argus_set_total_steps); 0: not told (and in records of
                                  older builds) */
    uint64_t planned_at_ns;    /* CLOCK_REALTIME when the rank saw planned_steps change,
                                  0 when never: the latest of the ranks' values wins */
    uint64_t env_planned_steps; /* the planned steps ARGUS_TOTAL_STEPS gave this rank
                                  (0: unset, and in records of older builds); the
                                  program's (planned_steps, any rank's) win over it */
};

/* CRC32C (Castagnoli), reflected, init/final xor 0xffffffff. crc32c("123456789") ==
 * 0xe3069283. */
uint32_t argus_crc32c(const void *data, size_t len);

/* Upper bound of the encoded size of a summary with n kmodes. */
size_t argus_summary_encoded_max(uint32_t n_kmodes);

/* Encode into buf[cap] (summaries as version 5). Returns bytes written (> 0) or -ENOSPC
 * (nothing written) / -EINVAL (NULL, more than ARGUS_MAX_KMODES kmodes, a sketch wider than
 * ARGUS_QSKETCH_BUCKETS, a kmode class or phase out of range, or an NCCL block that
 * common/wire_nccl.h refuses). */
long argus_summary_encode(const struct argus_step_summary *s, uint8_t *buf, size_t cap);
long argus_name_encode(uint64_t hash, const char *name, uint8_t *buf, size_t cap);
long argus_rankinfo_encode(const struct argus_rank_info *ri, uint8_t *buf, size_t cap);

/* Look at the record at buf[0..len): on success returns its total size (header + payload
 * + trailer) and sets *type; the checksum is verified. Negative errno-style on error with
 * errbuf filled ("bad magic at offset N", "checksum mismatch at offset N", ...);
 * base_offset is added to offsets in messages (the record's offset in its file/stream). */
long argus_record_peek(const uint8_t *buf, size_t len, uint64_t base_offset, int *type,
                       char *errbuf, size_t errlen);

/* Decode a record already validated by argus_record_peek. Return 0 or negative. */
int argus_summary_decode(const uint8_t *rec, size_t len, struct argus_step_summary *out,
                         char *errbuf, size_t errlen);
/* name must hold ARGUS_NAME_MAX + 1 bytes. */
int argus_name_decode(const uint8_t *rec, size_t len, uint64_t *hash, char *name,
                      char *errbuf, size_t errlen);
int argus_rankinfo_decode(const uint8_t *rec, size_t len, struct argus_rank_info *out,
                          char *errbuf, size_t errlen);

#endif /* ARGUS_COMMON_WIRE_H */
