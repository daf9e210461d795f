/* psa_private.h - what the PSA backends share inside libtusk-psa. */
#ifndef TUSK_PSA_PRIVATE_H
#define TUSK_PSA_PRIVATE_H

#include "tusk/export.h"

#include "detector/grid.h"
#include "psa_shared.h"
#include "tusk/psa.h"

struct psa_engine {
    psa_config_t cfg;
    const det_basis_t *basis;
    det_grid_t *grid;
    unsigned samples;                    /* basis samples, all compared */
    double sample_ns;
    unsigned rings, sectors;
    size_t npoints[PSA_SEGMENTS];
    const float *block[PSA_SEGMENTS];    /* [channel][sample][point], aligned (below) */
    const float *edge[PSA_SEGMENTS];     /* each point's own leading-edge offset (samples) */
    uint8_t mask[PSA_SEGMENTS][PSA_CHANNELS]; /* before leaving out other hits */
    unsigned mask_n[PSA_SEGMENTS];
    uint32_t *coarse[PSA_SEGMENTS];      /* adaptive: the coarse sub-grid's points */
    size_t coarse_n[PSA_SEGMENTS];
    double basis_t0;                     /* mean leading-edge offset of the basis' core, samples: where
                                            every point's core leading edge lies in the aligned blocks */
    float *aligned;                      /* the aligned blocks and the edges (one allocation) */
    float *rows;                         /* residual, subgrid: the basis' blocks (not aligned) point-major,
                                            [point][channel][sample] (a signal read in a row; NULL without
                                            either) */
    const float *row[PSA_SEGMENTS];      /* each segment's in rows */
    double *gram;                        /* subgrid: each point's products with its neighbours on its segment's
                                            mask (psa_subgrid_prepare); NULL without */
    const double *gram_of[PSA_SEGMENTS]; /* each segment's in gram, PSA_SUBGRID_GRAM a point */
    psa_job_t *job;                      /* psa_analyse's working memory */
    struct tusk_pool *pool;              /* cfg.threads threads, made by the first analysis that needs
                                            them (NULL: one thread, or not yet) */
};

/* A parallel for over items begin .. end - 1: fn(ctx, first, step, end)
 * handles items first, first + step, ... < end; one call per thread
 * (threads 0: one per online CPU, at most one per item), the calling
 * thread taking part. They run on `pool` when there is one (a job at a
 * time: the engine's pool serves its analyses, which run one at a time),
 * else on threads started for the call; should none start, every share
 * runs on the calling thread. */
typedef void (*psa_work_fn)(void *ctx, size_t first, size_t step, size_t end);
void psa_parallel(struct tusk_pool *pool, size_t begin, size_t end, unsigned threads, psa_work_fn fn, void *ctx);
/* The same over contiguous blocks of items: fn(ctx, lo, 1, hi), the
 * blocks of nearly equal size, in order; on a pool four a thread (of 16
 * items at least), which its threads take one by one as they come, else
 * one a thread. For work whose items write small neighbouring records
 * (the preprocessing's problems: segments, channels, slots), so that two
 * threads share a cache line only at the blocks' edges, not all along as
 * stripes do. */
void psa_parallel_blocks(struct tusk_pool *pool, size_t begin, size_t end, unsigned threads, psa_work_fn fn,
                         void *ctx);
unsigned psa_threads(unsigned threads, size_t items);

/* The engine's pool, made now if cfg.threads needs one and it is not
 * there yet (NULL: one thread, or the threads did not start: psa_parallel
 * then starts its own). */
struct tusk_pool *psa_engine_pool(psa_engine_t *e);

/* Room for n problems in the batch (its arrays grown; b->n unchanged):
 * 0, or -1 when out of memory. */
int psa_batch_reserve(psa_batch_t *b, size_t n);

/* The fast search on `pool` (NULL: threads started for the call). */
int psa_search_fast_on(const psa_engine_t *e, psa_batch_t *b, unsigned threads, struct tusk_pool *pool,
                       tusk_error_t *err);

/* psa_record_check on the energies of a record. */
unsigned psa_energies_check(const psa_config_t *cfg, const float segment_energy[PSA_SEGMENTS],
                            const float core_energy[ADF_CRYSTAL_CORES], char *why, size_t cap);

/* What every backend refuses before searching (tusk/psa.h): other
 * samples than the basis', a segment without points, no channel, too
 * many, or channels that are not ascending basis channels. */
int psa_batch_check(const psa_engine_t *e, const psa_batch_t *b, tusk_error_t *err);

/* Channel c of point q of segment s, aligned as the blocks are (the
 * same floats), from the point-major rows (residual or subgrid): S
 * samples into out. */
void psa_engine_aligned_row(const psa_engine_t *e, unsigned s, uint32_t q, unsigned c, float *out);

/* |d|^p as the reference computes it. */
float psa_pow(float d, float p);


/* Sample x (basis time, samples) of one basis trace whose samples are
 * row[0], row[stride], ... row[(S - 1) * stride]: 0 before the basis' time
 * zero (x <= 0: no charge has moved), linear between samples, the last
 * sample after the end. The one formula for placing a basis signal at a
 * fractional time (the basis' alignment, residual subtraction). */
static inline float psa_basis_at(const float *row, size_t stride, unsigned S, double x)
{
    if (x <= 0.0)
        return 0.0f;
    if (x >= (double)(S - 1))
        return row[(size_t)(S - 1) * stride];
    const unsigned k = (unsigned)x;
    const float f = (float)(x - k), b0 = row[(size_t)k * stride], b1 = row[(size_t)(k + 1) * stride];
    return b0 + f * (b1 - b0);
}

/* A trace of n samples resampled at x = a + t, t = 0 .. S - 1 (a: a
 * record's T0 plus a shift, in samples), as psa_analyse builds a
 * problem's traces: m[t] = v[0] where x <= 0, v[n - 1] where x >= n - 1,
 * else v[k] + f (v[k + 1] - v[k]) with k = (unsigned)x and f = (float)(x -
 * k), x = a + t in double. The plan (psa_resample_plan) is made once for
 * all the channels of a problem: x <= 0 for t < lo, x >= n - 1 for t >= hi
 * (x grows with t), fractions f[t] between; straight (nearly always) when
 * k grows by one a sample, so that psa_resample interpolates contiguous
 * samples in a loop that vectorises; otherwise (a + t rounded onto the
 * next integer) sample by sample. Bit for bit the same either way
 * (tests/check_psa.c compares it with the formula written out). */
typedef struct psa_resample {
    double a;
    unsigned n, S, lo, hi, k0;  /* k0: sample lo's k */
    bool straight;
    float f[PSA_MAX_SAMPLES];
} psa_resample_t;

TUSK_INTERNAL void psa_resample_plan(psa_resample_t *p, double a, unsigned n, unsigned S);
TUSK_INTERNAL void psa_resample(const psa_resample_t *p, const float *v, float *m);

/* m[t] = psa_subtract_placed(m[t], row, 1, S, k0, f, energy, t) for t = 0
 * .. S - 1, (k0, f) = psa_place_from(from): a basis signal of S
 * consecutive samples, placed `from` samples after the problem's first,
 * taken off m, in runs that vectorise; bit for bit the formula's. */
TUSK_INTERNAL void psa_subtract_row(float *m, const float *row, unsigned S, double from, float energy);

/* A crystal's hits for psa_subgrid (subgrid.c): n hits, strongest
 * first, each its segment, energy and basis point from the search; the
 * segments that are hits (the masks leave them out); the crystal's
 * interaction time (record samples, finite); its calibrated traces,
 * channel c at traces + c * len, every hit's mask channels among them;
 * psa_subgrid_scratch_bytes of working memory, zeroed before its first
 * use (calloc). */
typedef struct psa_subgrid_crystal {
    unsigned n;
    const uint8_t *seg;
    const float *energy;
    const uint32_t *best;
    const bool *is_hit;
    double inter;
    const float *traces;
    unsigned len;
    void *scratch;
} psa_subgrid_crystal_t;

/* Products a point in the engine's gram table: its signal with itself,
 * then with each of its 13 forward neighbours (subgrid.c). */
#define PSA_SUBGRID_GRAM 14

/* The engine's gram table (psa_engine_new with subgrid): TUSK_OK, or
 * TUSK_ENOMEM. */
TUSK_INTERNAL int psa_subgrid_prepare(psa_engine_t *e, tusk_error_t *err);
TUSK_INTERNAL size_t psa_subgrid_scratch_bytes(void);
/* Each hit's position between the grid points around its point (mm,
 * the basis' frame): pos[k] for hit k (subgrid.c says how). */
TUSK_INTERNAL void psa_subgrid(const psa_engine_t *e, const psa_subgrid_crystal_t *x, float pos[][3]);

/* Residual subtraction's later rounds on a device (psa_cl), after a
 * job's first round: the crystals of several hits and their hits
 * (psa_shared.h) and each hit's calibrated traces, written by psa_analyse
 * where the backend says (its staging memory), then all the rounds
 * submitted at once; the backend's collect (psa_analyse_step or _finish)
 * leaves each hit's last search in hits[] (best, fom_bits, at), read
 * before anything is submitted again. */
typedef struct psa_res_view {
    psa_dev_res_record_t *records;
    psa_dev_res_hit_t *hits;
    float *traces;
} psa_res_view_t;

struct psa_backend_ext {
    /* Room for `records` crystals, `hits` hits and `floats` trace samples,
     * for batch b's later rounds: TUSK_OK and the view, or an error (out
     * of memory, the device's). */
    int (*res_begin)(void *ctx, psa_batch_t *b, size_t records, size_t hits, size_t floats, psa_res_view_t *view,
                     tusk_error_t *err);
    /* Submit rounds 1 .. rounds - 1 of what res_begin's view holds, T0
     * shifts -t0_search .. t0_search. */
    int (*res_submit)(void *ctx, psa_batch_t *b, unsigned rounds, tusk_error_t *err);
    /* Wait for those rounds when they were the last submitted (batches
     * submitted before stay in flight), as collect does for the oldest. */
    int (*res_wait)(void *ctx, psa_batch_t *b, tusk_error_t *err);
};

/* The kernels' source, compiled into the library (Makefile.am's PSA_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_psa_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_psa_kernel_source_size;

#endif
