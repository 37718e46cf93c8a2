/* reduce_synth.c — bench/reduce_scale's random stream and rank speeds (reduce_synth.h). */
#include "bench/reduce_synth.h"

static struct {
    uint64_t rng;
} reduce_synth = {.rng = 0x853c49e6748fea9bull};

uint64_t rs_rnd(void)
{
    reduce_synth.rng ^= reduce_synth.rng << 13;
    reduce_synth.rng ^= reduce_synth.rng >> 7;
    reduce_synth.rng ^= reduce_synth.rng << 17;
    return reduce_synth.rng;
}

uint64_t rs_rank_speed(int rank)
{
    uint64_t z = (uint64_t)rank * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return 990 + (z >> 40) % 21;
}
