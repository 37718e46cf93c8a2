/* clocksync.h — per-rank clock offset to rank 0 by Cristian-style ping-pong along the
 * reduction tree (docs/ALGORITHMS.md, "Clock alignment: start-up ping-pong"): each rank
 * pings its parent `rounds` times, keeps the minimum-RTT sample (offset = t_parent -
 * (t_send + rtt/2)), and adds its parent's offset to rank 0, which the parent sends down
 * once it knows it. Every rank serves its children's pings at the same time, so the whole
 * tree settles in about depth × rounds round trips. Non-blocking point-to-point on comm,
 * bounded by timeout_ms in all; a silent parent gives -ETIMEDOUT (offset 0) and never
 * hangs.
 *
 * Also the refinement on collective end times (argus_clock_refine): members of one
 * collective finish together, so the median over instances of (end_ref - end_r) measures
 * the offset at that time; a Holt filter (level alpha, trend beta) smooths it and tracks
 * a linear drift (20 ppm is 20 us per second) without lag. Pure arithmetic, no MPI.
 *
 * The test knobs CLOCK_SKEW_NS and CLOCK_DRIFT_PPM (test builds only, testknob.h:
 * ARGUS_TEST_CLOCK_SKEW_NS, ARGUS_TEST_CLOCK_DRIFT_PPM): rank r's clock readings here are r
 * times that ahead and run r times that many ppm fast (counted from the Unix epoch), so
 * that injected offsets and drifts can be recovered.
 */
#ifndef ARGUS_REDUCE_CLOCKSYNC_H
#define ARGUS_REDUCE_CLOCKSYNC_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

int argus_clocksync_run(MPI_Comm comm, int parent, const int *kids, int nkids, int rounds,
                        long timeout_ms, int64_t *off_to_root);

/* The clock the offsets are about: CLOCK_REALTIME with the test knobs applied (after the
 * first argus_clocksync_run), now and at a given CLOCK_REALTIME reading. */
uint64_t argus_clocksync_now(void);
uint64_t argus_clocksync_now_at(uint64_t real_ns);

/* One offset estimate from a ping-pong sample (all in ns). */
int64_t argus_clock_offset_sample(uint64_t t_send, uint64_t t_server, uint64_t t_recv);

/* Refinement state of one rank. */
struct argus_clock_refiner {
    double offset_ns;   /* current estimate at t_ns: add to local time for the reference */
    double rate;        /* drift, ns of offset per ns of local time */
    double alpha, beta; /* Holt weights (0.3, 0.1) */
    uint64_t t_ns;      /* local time of the last update */
    int n;              /* updates so far */
};
void argus_clock_refiner_init(struct argus_clock_refiner *cr, int64_t start_offset,
                              double alpha, double beta);
/* The estimate extrapolated to local time t_ns. */
double argus_clock_refiner_at(const struct argus_clock_refiner *cr, uint64_t t_ns);
/* ends_ref[i] / ends_local[i]: end times of the same n collective instances on the
 * reference rank and on this rank (local clock). Updates and returns the estimate.
 * scratch must hold n int64. */
double argus_clock_refine(struct argus_clock_refiner *cr, const uint64_t *ends_ref,
                          const uint64_t *ends_local, size_t n, int64_t *scratch);
/* The Holt step itself: one offset measurement meas taken at local time t. */
double argus_clock_refiner_update(struct argus_clock_refiner *cr, uint64_t t, double meas);

#endif /* ARGUS_REDUCE_CLOCKSYNC_H */
