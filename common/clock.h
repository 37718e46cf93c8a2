/* clock.h — time sources. Every Argus timestamp is ns since the epoch on the rank's
 * CLOCK_REALTIME unless stated otherwise. */
#ifndef ARGUS_COMMON_CLOCK_H
#define ARGUS_COMMON_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

uint64_t argus_clock_realtime_ns(void);
uint64_t argus_clock_monotonic_ns(void);
/* The CLOCK_REALTIME instant ms milliseconds from now, for pthread_cond_timedwait. */
struct timespec argus_clock_abstime_in_ms(long ms);
/* RFC 3339 UTC with milliseconds ("2026-11-29T07:48:40.123Z") into buf (>= 32 bytes). */
void argus_clock_rfc3339(uint64_t realtime_ns, char *buf, size_t len);

#endif /* ARGUS_COMMON_CLOCK_H */
