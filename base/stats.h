/* stats.h - sums for a mean and a spread, percentages, the order of
 * doubles for qsort (internal;
 * header only, so that each library computes with its own floating-point
 * flags).
 *
 * A tusk_moments_t gathers n, the sum and the sum of squares of values;
 * from them:
 *   mean  s / n
 *   rms   sqrt(s2 / n), the root mean square (about zero)
 *   std   sqrt(s2 / n - mean^2), the standard deviation of the values
 *   sd    sqrt((s2 - n mean^2) / (n - 1)), the estimate from a sample
 * each 0 when there are too few values (none; sd: fewer than two) and
 * never the root of a negative rounding remainder. Moments of parts add
 * up (tusk_moments_merge) in any grouping, but floating-point sums depend
 * on the order: merge in a fixed order for reproducible figures. */
#ifndef TUSK_BASE_STATS_H
#define TUSK_BASE_STATS_H

#include <math.h>
#include <stdint.h>

typedef struct tusk_moments {
    double n, s, s2;
} tusk_moments_t;

static inline void tusk_moments_add(tusk_moments_t *m, double x)
{
    m->n += 1;
    m->s += x;
    m->s2 += x * x;
}

static inline void tusk_moments_merge(tusk_moments_t *to, const tusk_moments_t *m)
{
    to->n += m->n;
    to->s += m->s;
    to->s2 += m->s2;
}

static inline double tusk_moments_mean(const tusk_moments_t *m)
{
    return m->n > 0 ? m->s / m->n : 0.0;
}

static inline double tusk_moments_rms(const tusk_moments_t *m)
{
    return m->n > 0 ? sqrt(m->s2 / m->n) : 0.0;
}

static inline double tusk_moments_std(const tusk_moments_t *m)
{
    if (m->n <= 0)
        return 0.0;
    double mu = m->s / m->n, v = m->s2 / m->n - mu * mu;
    return v > 0 ? sqrt(v) : 0.0;
}

static inline double tusk_moments_sd(const tusk_moments_t *m)
{
    double mu = tusk_moments_mean(m);
    return m->n > 1 ? sqrt(fmax(0.0, (m->s2 - m->n * mu * mu) / (m->n - 1))) : 0.0;
}

/* qsort's comparison of doubles, ascending (by < and >: a NaN compares
 * equal to everything). */
static inline int tusk_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 100 a / b, 0 when b is 0. */
static inline double tusk_pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

#endif
