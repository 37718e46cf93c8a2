/* clock.c — wall and monotonic clocks in ns, RFC 3339 formatting. */
#include "common/clock.h"

#include <stdio.h>
#include <time.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;

    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t argus_clock_realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }
uint64_t argus_clock_monotonic_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

void argus_clock_rfc3339(uint64_t realtime_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(realtime_ns / 1000000000ull);
    unsigned ms = (unsigned)((realtime_ns / 1000000ull) % 1000ull);
    struct tm tm;
    char date[32];

    if (!buf || len == 0)
        return;
    if (!gmtime_r(&secs, &tm) || strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
        snprintf(buf, len, "1970-01-01T00:00:00.000Z");
        return;
    }
    snprintf(buf, len, "%s.%03uZ", date, ms);
}

struct timespec argus_clock_abstime_in_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
