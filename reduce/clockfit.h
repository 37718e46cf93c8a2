/* clockfit.h — the clock offset line that fits a window of ping-pong bounds (used by
 * clockkeep.c; no MPI, no allocation).
 *
 * A ping sent at local time t1, answered by a server whose reading (converted to rank
 * 0's clock) is s, and whose answer arrived at local time t2, proves two things whatever
 * the delays were: the offset o (add to the local clock to get rank 0's) satisfies
 *     o(t1) <= s - t1   and   o(t2) >= s - t2.
 * The midpoint of one ping's interval (the classic estimate) is off by half the delay
 * asymmetry, which on a loaded node is milliseconds and does not average out: the
 * minimum-RTT ping of a burst is usually the one whose *both* legs were quick, and when
 * no such ping exists the estimate is biased. The bounds, though, combine: a ping with a
 * quick outbound leg gives a tight upper bound, another with a quick return a tight lower
 * bound. With the clock drifting, o(t) = a + b (t - base) is a line; every line inside
 * all bounds of the window is possible, and the estimate is the middle of the offsets
 * they allow at the newest ping (the smallest worst-case error there), carried on with
 * the middle of the slopes they allow. The width of the band at slope b,
 *     w(b) = min_i (up_i - b x1_i) - max_j (lo_j - b x2_j),
 * is concave in b, so the possible slopes are an interval found by ternary search and
 * bisection, and the band's edges are extremal by ternary search too. When the bounds
 * contradict each other (the server's own offset moved by more than it said), the line
 * of largest w, which then minimises the largest violation, is taken instead. The slope
 * is fitted only once the window spans ARGUS_CLOCKFIT_MIN_SPAN_NS (two bursts); before
 * that it stays 0.
 */
#ifndef ARGUS_REDUCE_CLOCKFIT_H
#define ARGUS_REDUCE_CLOCKFIT_H

#include <stdint.h>

#define ARGUS_CLOCKFIT_CAP 128               /* pings in the window (16 bursts of 8) */
#define ARGUS_CLOCKFIT_MIN_SPAN_NS 200000000ll /* 200 ms before the rate is fitted */
#define ARGUS_CLOCKFIT_MAX_RATE 0.01         /* |b| searched up to 10,000 ppm */

struct argus_clockfit {
    int64_t x1[ARGUS_CLOCKFIT_CAP], x2[ARGUS_CLOCKFIT_CAP]; /* local send / receive */
    int64_t up[ARGUS_CLOCKFIT_CAP], lo[ARGUS_CLOCKFIT_CAP]; /* s - t1, s - t2 */
    int n, head;
    int64_t base;   /* t of the line's level */
    double a, b;    /* o(t) = a + b (t - base) */
    double width;   /* offsets allowed at base: top - bottom (negative: contradiction) */
    int rated;      /* the slope has been fitted (the window spanned the minimum) */
};

/* Start from a known offset at local time t0 (the start-up estimate). */
void argus_clockfit_init(struct argus_clockfit *f, int64_t t0, int64_t offset0);
/* Add one completed ping (local send t1, local receive t2 >= t1, server reading in rank
 * 0's clock s, known to within +-s_err: the server's own uncertainty, 0 for rank 0); the
 * oldest drops out once the window is full. Does not refit. */
void argus_clockfit_add(struct argus_clockfit *f, int64_t t1, int64_t t2, int64_t s,
                        int64_t s_err);
/* Half the width of the offsets the window allows at its newest ping (>= 0; for
 * contradictory bounds, half the largest violation). */
int64_t argus_clockfit_uncertainty(const struct argus_clockfit *f);
/* Refit the line to the pings in the window (no-op without any). */
void argus_clockfit_solve(struct argus_clockfit *f);
/* The fitted offset at local time t. */
int64_t argus_clockfit_at(const struct argus_clockfit *f, int64_t t);

#endif /* ARGUS_REDUCE_CLOCKFIT_H */
