/* search_fast.c - the fast CPU grid search (see tusk/psa.h).
 *
 * The basis block is [channel][sample][point], point fastest, so the inner
 * loop runs over points: one measured sample against a row of basis
 * samples, contiguous, which the compiler vectorises. |d|^p is computed as
 * exp2(p log2 |d|) with polynomials instead of powf, which does not
 * vectorise (psa_pow_poly in psa_shared.h, the function the OpenCL kernel
 * uses on CPU devices): relative error about 3e-7 at p = 0.3, under 2e-6 for p <= 1.5
 * and |d| <= 16 (PSA_FOM_TOLERANCE is 1e-5 on the sum); NaN and infinite
 * |d| give +inf, so such points are never chosen, as in the reference. Points go
 * in chunks; a chunk stops early once every one of its partial sums is
 * above the best FoM so far (sums only grow). Problems are spread over
 * threads. On x86-64 with GCC the inner loop is also built for AVX2 and
 * AVX-512 and picked at run time; the library is compiled with
 * -fno-trapping-math (no FP exceptions are used), without which GCC
 * does not if-convert the selects of the power function.
 *
 * Where the CPU has AVX-512 the inner loop is written with intrinsics
 * instead (accumulate_avx512): getmant/getexp split |d| into mantissa and
 * exponent and scalef rebuilds 2^y, one instruction each where the
 * portable code needs about ten, which halves the instructions per term.
 * Its polynomials are Chebyshev fits of the same accuracy (relative error
 * under 6e-7 at p = 0.3). Every term is independent of the others, so
 * early termination is unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psa_private.h"
#include "psa_shared.h"

#define CHUNK 512

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PSA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PSA_CLONES
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define PSA_AVX512 1
#include <immintrin.h>
#endif

PSA_CLONES static void accumulate(float *restrict acc, const float *restrict row, float m, size_t n, float p)
{
    for (size_t q = 0; q < n; q++)
        acc[q] += psa_pow_poly(m - row[q], p);
}

typedef void (*accumulate_fn)(float *restrict acc, const float *restrict row, float m, size_t n, float p);

#ifdef PSA_AVX512
/* |d|^p for 16 lanes: |d| = 2^e m with m in [0.75, 1.5), log2 m by a
 * degree-8 polynomial in m - 1, then 2^y = 2^n 2^f, n = round(y), f in
 * [-1/2, 1/2] by a degree-5 polynomial; scalef gives 0 or +inf where 2^y
 * leaves the float range. As psa_pow_poly: 0 for |d| < 1e-30, +inf for NaN
 * and infinite |d|. */
__attribute__((target("avx512f"))) static inline __m512 pow16(__m512 d, __m512 p)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 x = _mm512_abs_ps(d);
    __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_zero);
    __m512 e = _mm512_getexp_ps(x);
    e = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask(m, one, _CMP_LT_OQ), e, one); /* m was halved */
    __m512 t = _mm512_sub_ps(m, one);
    __m512 l = _mm512_set1_ps(-0.0938960967f);
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(0.202076588f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(-0.250414432f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(0.290264516f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(-0.360368292f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(0.480842665f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(-0.72135008f));
    l = _mm512_fmadd_ps(l, t, _mm512_set1_ps(1.44269527f));
    l = _mm512_fmadd_ps(l, t, e); /* log2 |d| */
    __m512 y = _mm512_mul_ps(l, p);
    __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_sub_ps(y, n);
    __m512 q = _mm512_set1_ps(0.00133908634f);
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0.00967603192f));
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0.0555035711f));
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0.240221075f));
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0.693147188f));
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(1.00000008f));
    __m512 r = _mm512_scalef_ps(q, n);
    __mmask16 bad = _mm512_cmp_ps_mask(x, _mm512_set1_ps(3.4028235e38f), _CMP_NLE_UQ);
    __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(1e-30f), _CMP_LT_OQ);
    r = _mm512_mask_mov_ps(r, bad, _mm512_set1_ps(INFINITY));
    return _mm512_mask_mov_ps(r, tiny, _mm512_setzero_ps());
}

__attribute__((target("avx512f"))) static void accumulate_avx512(float *restrict acc, const float *restrict row,
                                                                  float m, size_t n, float p)
{
    const __m512 vm = _mm512_set1_ps(m), vp = _mm512_set1_ps(p);
    size_t q = 0;
    for (; q + 16 <= n; q += 16) {
        __m512 d = _mm512_sub_ps(vm, _mm512_loadu_ps(row + q));
        _mm512_storeu_ps(acc + q, _mm512_add_ps(_mm512_loadu_ps(acc + q), pow16(d, vp)));
    }
    if (q < n) {
        __mmask16 k = (__mmask16)((1u << (n - q)) - 1u);
        __m512 d = _mm512_sub_ps(vm, _mm512_maskz_loadu_ps(k, row + q));
        _mm512_mask_storeu_ps(acc + q, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, acc + q), pow16(d, vp)));
    }
}
#endif

/* The inner loop for this CPU; TUSK_PSA_PORTABLE=1 keeps the portable one
 * (for comparing the two). */
static accumulate_fn pick_accumulate(void)
{
#ifdef PSA_AVX512
    const char *portable = getenv("TUSK_PSA_PORTABLE");
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && !(portable && *portable == '1'))
        return accumulate_avx512;
#endif
    return accumulate;
}

static float min_of(const float *a, size_t n)
{
    float m = INFINITY;
    for (size_t i = 0; i < n; i++)
        m = a[i] < m ? a[i] : m;
    return m;
}

/* One problem over every point of its segment. */
static void search_all(const psa_engine_t *e, psa_batch_t *b, size_t i, float *acc, accumulate_fn accumulate_row)
{
    const unsigned S = b->samples, s = b->segment[i];
    const size_t N = e->npoints[s];
    const float *blk = e->block[s];
    const float p = (float)e->cfg.p;
    float best = INFINITY;
    uint32_t at = 0;
    for (size_t c0 = 0; c0 < N; c0 += CHUNK) {
        size_t cn = N - c0 < CHUNK ? N - c0 : CHUNK;
        memset(acc, 0, cn * sizeof *acc);
        bool beaten = false;
        for (unsigned j = 0; j < b->n_channels[i] && !beaten; j++) {
            unsigned ch = b->channel[i * PSA_CHANNELS + j];
            const float *m = b->trace + (i * PSA_CHANNELS + j) * S;
            for (unsigned t = 0; t < S; t++)
                accumulate_row(acc, blk + ((size_t)ch * S + t) * N + c0, m[t], cn, p);
            beaten = min_of(acc, cn) > best;
        }
        if (beaten)
            continue;
        for (size_t q = 0; q < cn; q++)
            if (acc[q] < best) {
                best = acc[q];
                at = (uint32_t)(c0 + q);
            }
    }
    b->best[i] = at;
    b->fom[i] = best;
}

/* One problem over a candidate list (adaptive mode): point by point. */
static void search_list(const psa_engine_t *e, psa_batch_t *b, size_t i)
{
    const unsigned S = b->samples, s = b->segment[i];
    const size_t N = e->npoints[s];
    const float *blk = e->block[s];
    const float p = (float)e->cfg.p;
    float best = INFINITY;
    uint32_t at = 0;
    for (uint32_t k = b->cand_start[i]; k < b->cand_start[i + 1]; k++) {
        uint32_t q = b->cand[k];
        float f = 0.0f;
        for (unsigned j = 0; j < b->n_channels[i] && f <= best; j++) {
            unsigned ch = b->channel[i * PSA_CHANNELS + j];
            const float *m = b->trace + (i * PSA_CHANNELS + j) * S;
            for (unsigned t = 0; t < S; t++)
                f += psa_pow_poly(m[t] - blk[((size_t)ch * S + t) * N + q], p);
        }
        if (f < best || (f == best && q < at)) {
            best = f;
            at = q;
        }
    }
    b->best[i] = at;
    b->fom[i] = best;
}

typedef struct job {
    const psa_engine_t *e;
    psa_batch_t *b;
    accumulate_fn accumulate_row;
} job_t;

static void run(void *ctx, size_t first, size_t step, size_t end)
{
    job_t *j = ctx;
    float acc[CHUNK];
    for (size_t i = first; i < end; i += step) {
        if (j->b->cand && j->b->cand_start[i + 1] > j->b->cand_start[i])
            search_list(j->e, j->b, i);
        else
            search_all(j->e, j->b, i, acc, j->accumulate_row);
    }
}

int psa_search_fast_on(const psa_engine_t *e, psa_batch_t *b, unsigned threads, struct tusk_pool *pool,
                       tusk_error_t *err)
{
    int st = psa_batch_check(e, b, err);
    if (st != TUSK_OK)
        return st;
    job_t job = {e, b, pick_accumulate()};
    psa_parallel(pool, 0, b->n, threads, run, &job);
    return TUSK_OK;
}

int psa_search_fast(const psa_engine_t *e, psa_batch_t *b, unsigned threads, tusk_error_t *err)
{
    return psa_search_fast_on(e, b, threads, NULL, err);
}
