/* bocpd.h — Bayesian online change-point detection (Adams and MacKay 2007, "Bayesian Online
 * Changepoint Detection", arXiv 0710.3742) on one series, as LLMPrism uses it on the gaps
 * between an endpoint's bursts of traffic, and the step boundaries read from its segments.
 *
 * Model: within a run (a segment) the observations are Gaussian with a known variance
 * sigma^2 and an unknown mean, the mean's prior N(mu0, tau0^2) (conjugate: a run of n
 * observations with sum s predicts N(m_n, sigma^2 + 1/l_n), l_n = 1/tau0^2 + n/sigma^2,
 * m_n = (mu0/tau0^2 + s/sigma^2) / l_n); a new run begins before each observation with the
 * constant hazard h. The run-length posterior P(r_t | x_1..t) is updated once per
 * observation in the log domain; r_t = 1 means x_t began a new run (it is scored by the
 * prior predictive). Run lengths are truncated at rmax: the hypothesis "rmax or longer"
 * absorbs the runs that would grow past it (keeping the statistics of the likelier one),
 * so the state is O(rmax) and a series of n costs O(n x rmax) time: linear in n.
 * Hypotheses below e^-60 of the whole are pruned (no mass left to come back from).
 * A change is declared at t when P(r_t = 1 | x_1..t) > 1/2.
 *
 * Boundaries (fl_bocpd_boundaries): the changes cut the series into segments; adjacent
 * segments whose means differ by less than jump are merged (one level); a merged segment
 * whose mean is above every neighbour's is a run of step boundaries, the others lie inside
 * steps. With a single level the series is one class: all boundaries when its least value
 * is above ref, else none.
 *
 * The detector is the caller's (_create / _free: allocates 7 arrays of rmax + 1 doubles);
 * _run allocates nothing. Not thread-safe; one detector per thread.
 */
#ifndef ARGUS_FLOWS_BOCPD_H
#define ARGUS_FLOWS_BOCPD_H

#include <stddef.h>

#define FL_BOCPD_SIGMA 0.3      /* within-run spread of a log gap: a factor 1.35 */
#define FL_BOCPD_HAZARD (1.0 / 64)
#define FL_BOCPD_RMAX 32       /* a run of 32 gaps knows its mean: longer ones share it */

struct fl_bocpd;

/* sigma > 0, hazard in (0, 1), rmax in [2, 2^20]: 0 and *out, -EINVAL or -ENOMEM. */
int fl_bocpd_create(double sigma, double hazard, size_t rmax, struct fl_bocpd **out);
void fl_bocpd_free(struct fl_bocpd *b);
/* The changes of x[n]: chg[t] = 1 when x_t began a new run (chg[0] = 1). The prior's mean is
 * the median of x (mu0, passed in) and its spread tau0 = half the range of x plus sigma. */
void fl_bocpd_run(struct fl_bocpd *b, const double *x, size_t n, double mu0,
                  unsigned char *chg);
/* Step boundaries of the log gaps g[n] from chg[n] (fl_bocpd_run's) as described above:
 * out[i] = 1 for a boundary. jump: the least difference of levels (log units). */
void fl_bocpd_boundaries(const double *g, size_t n, const unsigned char *chg, double jump,
                         double ref, unsigned char *out);

#endif /* ARGUS_FLOWS_BOCPD_H */
