/* simrng.c - splitmix64 (see tusk/simrng.h). */
#include "tusk/simrng.h"

uint64_t sim_rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double sim_rng_uniform(uint64_t *state)
{
    /* 52 bits: k + 0.5 is exact below 2^52 (with 53 bits, 2^53 - 0.5 would
     * round up to 2^53 and give 1.0). */
    return ((double)(sim_rng_next(state) >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}
