/* reduce_synth.h — what bench/reduce_scale's synthetic job draws on (reduce_synth.c): one
 * xorshift stream of random numbers for the whole run, shared by the ranks' summaries
 * (reduce_scale.c) and the forecast's rows (reduce_fc.c) so that a run's figures repeat
 * run to run, and each virtual rank's steady speed. Not thread-safe (the bench is one
 * thread); no allocation. */
#ifndef ARGUS_BENCH_REDUCE_SYNTH_H
#define ARGUS_BENCH_REDUCE_SYNTH_H

#include <stdint.h>

/* The next number of the run's stream (xorshift64, fixed seed). */
uint64_t rs_rnd(void);
/* A rank's constant speed (per mille, 990..1010): peers differ a little, steadily. Pure. */
uint64_t rs_rank_speed(int rank);

#endif /* ARGUS_BENCH_REDUCE_SYNTH_H */
