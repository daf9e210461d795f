/* rng.c - pseudo-random numbers (see rng.h). */
#include "base/rng.h"

#include <math.h>

#define PI 3.14159265358979323846

uint64_t tusk_rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double tusk_rng_uniform(uint64_t *state)
{
    /* 52 bits: k + 0.5 is exact below 2^52 (with 53 bits, 2^53 - 0.5 would
     * round up to 2^53 and give 1.0). */
    return ((double)(tusk_rng_next(state) >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

double tusk_rng_gauss(uint64_t *state)
{
    /* Box-Muller; the uniform is never 0, so the log is finite. */
    double u = tusk_rng_uniform(state), v = tusk_rng_uniform(state);
    return sqrt(-2.0 * log(u)) * cos(2.0 * PI * v);
}

unsigned tusk_rng_poisson(uint64_t *state, double mean)
{
    /* Knuth's product of uniforms, in pieces of at most 30 (a sum of
     * Poisson numbers is Poisson), so exp(-piece) never underflows. */
    unsigned k = 0;
    while (mean > 0.0) {
        double piece = mean > 30.0 ? 30.0 : mean;
        mean -= piece;
        double limit = exp(-piece), p = tusk_rng_uniform(state);
        while (p > limit) {
            k++;
            p *= tusk_rng_uniform(state);
        }
    }
    return k;
}

double tusk_rng_exponential(uint64_t *state, double mean)
{
    return -mean * log(tusk_rng_uniform(state));
}
