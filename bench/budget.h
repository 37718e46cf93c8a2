/* budget.h — the benchmark's budgeted per-step record, a second encoding of a step
 * summary that tracer_bench sets beside the wire summary (common/wire.h) to compare their
 * sizes. Nothing ships it and nothing reads it: it is not in libargus.so.
 *
 * Every collective/p2p (kernel, mode) kept; compute, memcpy and memset modes by
 * descending total time until >= coverage (default 0.97) of all kernel time is covered;
 * the rest folded into one record per class. Each kept mode is 16 bytes: a u16 key id
 * (per-rank dictionary, entries sent once in the first record that uses them), u8
 * mode|class<<4, u8 phase, u16 count (saturating), then min, p50, p99, max, mean as u16
 * log codes round(1024 * log2(ns)) (0.07 % resolution).
 *
 * Record (little-endian): u32 magic "ARGB", u8 version, u8 flags, u16 n_modes, u16
 * n_dict, u16 reserved, u64 step, u64 start_ns, u32 wall_us, u32 busy_us, u32 kernels,
 * u32 dropped, u32 overhead_us, 4 x u16 coords (tp, pp, dp, ep), 6 x u32 phase wall µs,
 * then n_dict x (u16 id, u64 hash), n_modes x 16 B, u32 CRC32C of everything before.
 * Header 80 B; a steady-state step with K kept modes is 80 + 16 K + 4 bytes.
 *
 * The encoder state (dictionary) is per rank; no allocation after create; one thread.
 */
#ifndef ARGUS_BENCH_BUDGET_H
#define ARGUS_BENCH_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define ARGUS_BUDGET_MAGIC 0x42475241u /* "ARGB" */
#define ARGUS_BUDGET_VERSION 1
#define ARGUS_BUDGET_HDR 80
#define ARGUS_BUDGET_MODE 16
#define ARGUS_BUDGET_DICT 10
#define ARGUS_BUDGET_FOLD_ID 0xffffu /* key id of a per-class fold record */

struct argus_budget;

int argus_budget_create(struct argus_budget **out);
void argus_budget_free(struct argus_budget *b);

/* Encode s into buf[cap]. coverage in (0, 1]; overhead_ns: CUPTI overhead in the step.
 * Returns bytes written or -ENOSPC / -EINVAL / -E2BIG (dictionary full). */
long argus_budget_encode(struct argus_budget *b, const struct argus_step_summary *s,
                         double coverage, uint64_t overhead_ns, uint8_t *buf, size_t cap);

/* Log code of a duration and back (ns >= 1; 0 maps to code 0). */
uint16_t argus_budget_code(uint64_t ns);
double argus_budget_uncode(uint16_t code);

/* Check a record (magic, version, length, CRC); returns n_modes or -EINVAL. */
int argus_budget_check(const uint8_t *buf, size_t len);

#endif /* ARGUS_BENCH_BUDGET_H */
