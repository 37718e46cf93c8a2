/* crc32c.h — CRC32C (Castagnoli) implementations behind argus_crc32c (declared in wire.h,
 * the one callers use). The variants below exist for the tests and benchmarks: they all
 * return the same value for the same bytes. Any thread; no allocation.
 */
#ifndef ARGUS_COMMON_CRC32C_H
#define ARGUS_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The reference: one table lookup per byte. */
uint32_t argus_crc32c_bytewise(const void *data, size_t len);
/* Portable slice-by-8 (the fallback when the CPU has no CRC32C instruction). */
uint32_t argus_crc32c_slice8(const void *data, size_t len);
/* The SSE4.2 crc32 instruction: 0 and *out, or -ENOTSUP on a CPU or build without it. */
int argus_crc32c_hw(const void *data, size_t len, uint32_t *out);
/* Name of the implementation argus_crc32c uses: "sse4.2", "slice-by-8" or "bytewise". */
const char *argus_crc32c_impl(void);

#endif /* ARGUS_COMMON_CRC32C_H */
