/* check_spectrum.c - libtusk-spectra (tusk/spectrum.h): synthetic Gaussian
 * peaks over a linear background are recovered (position, FWHM, area, and
 * the area's error is the right size); efficiency and peak-to-total on
 * hand-made spectra; addback grouping, events of standalone data:psa
 * frames, emitted gammas counted from truth frames; the CSV files exactly
 * as documented; pictures through gnuplot and its failures; bad settings
 * and bad frames named. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tusk/spectrum.h"

#define BUF_CAP (1u << 20)

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ------------------------------------------------------------------ */

static double gauss(void)
{
    double u = tu_uniform(), v = tu_uniform();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* Poisson: Knuth below 30, a rounded normal above. */
static uint64_t poisson(double mean)
{
    if (mean <= 0)
        return 0;
    if (mean < 30) {
        double l = exp(-mean), p = 1.0;
        uint64_t k = 0;
        do {
            k++;
            p *= tu_uniform();
        } while (p > l);
        return k - 1;
    }
    double x = floor(mean + sqrt(mean) * gauss() + 0.5);
    return x < 0 ? 0 : (uint64_t)x;
}

static double phi(double z)
{
    return 0.5 * (1.0 + erf(z / sqrt(2.0)));
}

/* A writer on a fresh buffer. */
typedef struct frames {
    uint8_t *buf;
    adf_writer_t *w;
} frames_t;

static void frames_open(frames_t *f)
{
    f->buf = malloc(BUF_CAP);
    f->w = adf_writer_new();
    ck_assert_ptr_nonnull(f->buf);
    ck_assert_ptr_nonnull(f->w);
    adf_writer_reset(f->w, f->buf, BUF_CAP);
}

static void frames_close(frames_t *f)
{
    adf_writer_destroy(&f->w);
    free(f->buf);
}

static size_t frames_used(const frames_t *f)
{
    return adf_writer_used(f->w);
}

static void put_psa(frames_t *f, uint32_t event, unsigned crystal, double energy)
{
    adf_psa_t p;
    memset(&p, 0, sizeof p);
    p.crystal_id = (uint16_t)crystal;
    p.core_energy[0] = (float)energy;
    p.core_energy[1] = (float)energy;
    adf_error_t ae;
    ck_assert_int_eq(adf_psa_encode(f->w, event, 100 + event, &p, &ae), ADF_OK);
}

static void put_composite(frames_t *f, uint32_t event, const unsigned *crystals, const double *energies, size_t n)
{
    adf_psa_t *p = calloc(n, sizeof *p);
    adf_key_t keys[16];
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_le(n, 16);
    for (size_t i = 0; i < n; i++) {
        p[i].crystal_id = (uint16_t)crystals[i];
        p[i].core_energy[0] = p[i].core_energy[1] = (float)energies[i];
        keys[i] = (adf_key_t){.type = ADF_TYPE_DATA_PSA, .event = event, .timestamp = 100 + event};
    }
    adf_error_t ae;
    ck_assert_int_eq(adf_event_psa_encode(f->w, event, 100 + event, keys, p, n, &ae), ADF_OK);
    free(p);
}

static void put_truth(frames_t *f, uint32_t event, uint64_t decay, const double *gammas, unsigned n)
{
    adf_truth_t *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->decay = decay;
    t->gammas_total = decay * 2 + n;
    t->n_gammas = (uint16_t)n;
    for (unsigned i = 0; i < n; i++) {
        t->gamma[i].energy = (float)gammas[i];
        t->gamma[i].dir[2] = 1.0f;
    }
    adf_error_t ae;
    ck_assert_int_eq(adf_truth_encode(f->w, event, 100 + event, t, &ae), ADF_OK);
    free(t);
}

static spec_t *make_spec(const char *const *settings)
{
    spec_config_t cfg;
    spec_config_init(&cfg);
    tusk_error_t err;
    for (size_t i = 0; settings && settings[i]; i += 2)
        if (spec_config_set(&cfg, settings[i], settings[i + 1], &err) != TUSK_OK)
            ck_abort_msg("setting %s=%s: %s", settings[i], settings[i + 1], err.message);
    spec_t *s = spec_new(&cfg, &err);
    if (!s)
        ck_abort_msg("spec_new: %s", err.message);
    return s;
}

static void feed_ok(spec_t *s, const frames_t *f)
{
    tusk_error_t err;
    if (spec_feed(s, f->buf, frames_used(f), 0, &err) != TUSK_OK)
        ck_abort_msg("spec_feed: %s", err.message);
}

static size_t bin_of(double e, double bin)
{
    return (size_t)floor(e / bin);
}

/* A whole file into a NUL-terminated string. */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        ck_abort_msg("cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
    s[n] = '\0';
    fclose(fp);
    return s;
}

static bool gnuplot_found(void)
{
    const char *env = getenv("TUSK_GNUPLOT");
    if (env && *env)
        return strchr(env, '/') ? access(env, X_OK) == 0 : true;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        char f[4096];
        snprintf(f, sizeof f, "%.*s/gnuplot", (int)n, n ? p : ".");
        if (access(f, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

static off_t file_size(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* ---- peaks ---------------------------------------------------------------------- */

/* Random peaks over random linear backgrounds, Poisson noise: the fit
 * finds position and FWHM within a few statistical errors, the net area
 * within 5 of its own errors, and over all trials the pulls of the area
 * have an RMS near 1 (the error is neither too small nor too large). */
START_TEST(gaussian_peaks_are_recovered)
{
    const double bin = 1.0, window = 8.0;
    const size_t nbins = 4096;
    uint64_t *h = malloc(nbins * sizeof *h);
    ck_assert_ptr_nonnull(h);
    const int trials = 200;
    double pull2 = 0;
    for (int t = 0; t < trials; t++) {
        double pos = 200 + 3500 * tu_uniform(), fwhm = 1.5 + 2.5 * tu_uniform();
        double area = 3000 + 27000 * tu_uniform(), level = 5 + 95 * tu_uniform();
        double slope = level * (tu_uniform() - 0.5) * 0.02; /* per keV, stays positive over +-16 keV */
        double sigma = fwhm / 2.3548200450309493;
        /* Only the bins the analysis reads (+-2 windows) are drawn: cheap under valgrind. */
        memset(h, 0, nbins * sizeof *h);
        for (size_t b = (size_t)(pos - 25); b < (size_t)(pos + 25); b++) {
            double lo = (double)b * bin, hi = lo + bin, x = lo + 0.5 * bin;
            double mean = level + slope * (x - pos);
            mean = mean > 0 ? mean : 0;
            mean += area * (phi((hi - pos) / sigma) - phi((lo - pos) / sigma));
            h[b] = poisson(mean);
        }
        spec_peak_t pk;
        tusk_error_t err;
        double line = pos + (tu_uniform() - 0.5) * 2.0; /* the configured line is near, not exact */
        ck_assert_int_eq(spec_peak_analyse(h, nbins, bin, line, window, &pk, &err), TUSK_OK);
        double bg_under = level * fwhm / bin; /* background counts under one FWHM */
        double rel = sqrt(area + 4 * bg_under) / area;
        if (!pk.fitted)
            ck_abort_msg("trial %d: no fit (pos %.3f fwhm %.3f area %.0f level %.1f)", t, pos, fwhm, area, level);
        if (fabs(pk.position_kev - pos) > 7 * sigma * rel + 0.01)
            ck_abort_msg("trial %d: position %.4f, true %.4f (fwhm %.3f area %.0f level %.1f)", t, pk.position_kev,
                         pos, fwhm, area, level);
        if (fabs(pk.fwhm_kev - fwhm) > fwhm * (6 * rel + 0.01))
            ck_abort_msg("trial %d: FWHM %.4f, true %.4f (area %.0f level %.1f)", t, pk.fwhm_kev, fwhm, area, level);
        double pull = (pk.area - area) / pk.area_error;
        if (fabs(pull) > 6)
            ck_abort_msg("trial %d: area %.1f +- %.1f, true %.1f", t, pk.area, pk.area_error, area);
        pull2 += pull * pull;
    }
    double rms = sqrt(pull2 / trials);
    if (rms < 0.75 || rms > 1.3)
        ck_abort_msg("area pulls: RMS %.3f over %d trials, expected about 1", rms, trials);
    free(h);
}
END_TEST

/* Counts in one bin: not resolved, so no FWHM; the position is the bin
 * centre and the area exact. No peak at all: area about 0, no position. */
START_TEST(single_bin_and_empty_peaks)
{
    uint64_t h[100] = {0};
    uint64_t n = 1 + tu_below(1000);
    h[50] = n;
    spec_peak_t pk;
    tusk_error_t err;
    ck_assert_int_eq(spec_peak_analyse(h, 100, 1.0, 50.2, 4.0, &pk, &err), TUSK_OK);
    ck_assert(!pk.fitted);
    ck_assert(isnan(pk.fwhm_kev));
    ck_assert_double_eq_tol(pk.position_kev, 50.5, 1e-9);
    ck_assert_double_eq_tol(pk.area, (double)n, 1e-9);
    ck_assert_double_eq_tol(pk.line_kev, 50.2, 1e-12);
    h[50] = 0;
    for (int b = 0; b < 100; b++)
        h[b] = 7;
    ck_assert_int_eq(spec_peak_analyse(h, 100, 1.0, 50.0, 4.0, &pk, &err), TUSK_OK);
    ck_assert(!pk.fitted);
    ck_assert_double_eq_tol(pk.area, 0.0, 1e-9);
    ck_assert(isnan(pk.position_kev));
    /* Side bands outside the histogram. */
    ck_assert_int_eq(spec_peak_analyse(h, 100, 1.0, 95.0, 4.0, &pk, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "side bands");
}
END_TEST

/* Efficiency and peak-to-total: K counts in the 1332.5 line, C counts of
 * continuum away from it, L counts below the threshold. */
START_TEST(efficiency_and_peak_to_total)
{
    unsigned k = 50 + tu_below(200), c = 100 + tu_below(300), l = 1 + tu_below(20);
    double emitted = (double)(k + 1 + tu_below(5000));
    char emitted_text[32];
    snprintf(emitted_text, sizeof emitted_text, "%.0f", emitted);
    const char *settings[] = {"lines", "1332.5", "emitted", emitted_text, "threshold_kev", "20", NULL};
    spec_t *s = make_spec(settings);
    frames_t f;
    frames_open(&f);
    uint32_t ev = 0;
    for (unsigned i = 0; i < k; i++)
        put_psa(&f, ev++, 3 * i, 1332.5);
    for (unsigned i = 0; i < c; i++)
        put_psa(&f, ev++, 3 * i, 25 + 1200 * tu_uniform()); /* below the left side band (1316.5) */
    for (unsigned i = 0; i < l; i++)
        put_psa(&f, ev++, 3 * i, 19 * tu_uniform());
    feed_ok(s, &f);
    spec_finish(s);
    spec_row_t rows[3 * SPEC_MAX_LINES];
    size_t n = 0;
    tusk_error_t err;
    ck_assert_int_eq(spec_summary(s, rows, &n, &err), TUSK_OK);
    ck_assert_uint_eq(n, 2); /* singles and addback; no tracked counts */
    for (size_t i = 0; i < n; i++) {
        ck_assert_double_eq_tol(rows[i].peak.area, (double)k, 1e-9);
        ck_assert_uint_eq(rows[i].total_counts, k + c);
        ck_assert_double_eq_tol(rows[i].emitted, emitted, 1e-9);
        ck_assert_double_eq_tol(rows[i].efficiency, k / emitted, 1e-12);
        ck_assert_double_eq_tol(rows[i].peak_to_total, (double)k / (k + c), 1e-12);
    }
    ck_assert_int_eq(rows[0].kind, SPEC_SINGLES);
    ck_assert_int_eq(rows[1].kind, SPEC_ADDBACK);
    spec_destroy(&s);
    ck_assert_ptr_null(s);

    /* Without truth and without the setting: no efficiency. */
    const char *no_emitted[] = {"lines", "1332.5", NULL};
    s = make_spec(no_emitted);
    feed_ok(s, &f);
    double e;
    ck_assert(!spec_emitted(s, 0, &e));
    ck_assert_int_eq(spec_summary(s, rows, &n, &err), TUSK_OK);
    ck_assert(isnan(rows[0].efficiency) && isnan(rows[0].emitted));
    spec_destroy(&s);
    frames_close(&f);
}
END_TEST

/* ---- accumulation ------------------------------------------------------------------ */

/* Composites: crystals 3K..3K+2 are summed per event; standalone data:psa
 * frames of one event number are one event, a truth frame between them
 * does not split it; core spectra per crystal, singles their sum. */
START_TEST(addback_groups_crystals_by_cluster)
{
    const char *settings[] = {"addback_group", "3", NULL};
    spec_t *s = make_spec(settings);
    frames_t f;
    frames_open(&f);
    double e[6];
    for (int i = 0; i < 6; i++)
        e[i] = 50 + tu_below(2400) / 8.0; /* exact in float: sums land in known bins */
    unsigned crys[] = {0, 1, 2, 4, 9, 10};
    put_composite(&f, 1, crys, e, 6); /* clusters 0 (e0+e1+e2), 1 (e3), 3 (e4+e5) */
    put_psa(&f, 2, 7, e[0]);          /* event 2: cluster 2 gets e0 + e1 */
    double g[] = {1173.2};
    put_truth(&f, 2, 0, g, 1);
    put_psa(&f, 2, 8, e[1]);
    put_psa(&f, 3, 8, e[2]); /* event 3: cluster 2 alone */
    feed_ok(s, &f);
    spec_finish(s);
    const uint64_t *ab = spec_histogram(s, SPEC_ADDBACK);
    double sums[] = {e[0] + e[1] + e[2], e[3], e[4] + e[5], e[0] + e[1], e[2]};
    uint64_t expect[4096] = {0};
    for (size_t i = 0; i < 5; i++)
        expect[bin_of(sums[i], 1.0)]++;
    uint64_t total = 0;
    for (size_t b = 0; b < spec_bins(s); b++) {
        tu_check(ab[b] == expect[b]);
        total += ab[b];
    }
    ck_assert_uint_eq(total, 5);
    const spec_stats_t *st = spec_stats(s);
    ck_assert_uint_eq(st->events, 3);
    ck_assert_uint_eq(st->composites, 1);
    ck_assert_uint_eq(st->psa_frames, 9);
    ck_assert_uint_eq(st->truth_frames, 1);
    ck_assert_uint_eq(st->frames, 1 + 6 + 4);
    /* Core spectra: crystals in increasing order, each with its counts. */
    unsigned ids[] = {0, 1, 2, 4, 7, 8, 9, 10};
    ck_assert_uint_eq(spec_crystals(s), 8);
    for (size_t i = 0; i < 8; i++)
        ck_assert_uint_eq(spec_crystal_id(s, i), ids[i]);
    ck_assert_uint_eq(spec_core(s, 5)[bin_of(e[1], 1.0)] + spec_core(s, 5)[bin_of(e[2], 1.0)],
                      bin_of(e[1], 1.0) == bin_of(e[2], 1.0) ? 4 : 2);
    const uint64_t *singles = spec_histogram(s, SPEC_SINGLES);
    uint64_t sum = 0;
    for (size_t b = 0; b < spec_bins(s); b++)
        sum += singles[b];
    ck_assert_uint_eq(sum, 9);
    spec_destroy(&s);

    /* addback_group = 1: addback is singles. */
    const char *one[] = {"addback_group", "1", NULL};
    s = make_spec(one);
    feed_ok(s, &f);
    spec_finish(s);
    ab = spec_histogram(s, SPEC_ADDBACK);
    singles = spec_histogram(s, SPEC_SINGLES);
    for (size_t b = 0; b < spec_bins(s); b++)
        tu_check(ab[b] == singles[b]);
    spec_destroy(&s);
    frames_close(&f);
}
END_TEST

/* Emitted gammas: decays = largest decay index + 1; per line, the mean
 * count per truth frame within 0.5 keV, times decays. */
START_TEST(emitted_counted_from_truth)
{
    const char *settings[] = {"lines", "1173.2 1332.5 661.7", NULL};
    spec_t *s = make_spec(settings);
    frames_t f;
    frames_open(&f);
    unsigned frames = 3 + tu_below(20);
    uint64_t decay = 0, n1173 = 0, n1332 = 0;
    for (unsigned i = 0; i < frames; i++) {
        decay += 1 + tu_below(10);
        double g[3] = {1173.2 + (tu_uniform() - 0.5) * 0.98, 1332.5, 1174.0}; /* 1174.0: 0.8 keV off */
        unsigned n = 1 + tu_below(3);
        n1173 += 1;
        n1332 += n >= 2;
        put_truth(&f, i, decay, g, n);
    }
    feed_ok(s, &f);
    double e;
    ck_assert(spec_emitted(s, 0, &e));
    ck_assert_double_eq_tol(e, (double)(decay + 1) * (double)n1173 / frames, 1e-9);
    ck_assert(spec_emitted(s, 1, &e));
    ck_assert_double_eq_tol(e, (double)(decay + 1) * (double)n1332 / frames, 1e-9);
    ck_assert(spec_emitted(s, 2, &e));
    ck_assert_double_eq(e, 0.0);
    ck_assert(!spec_emitted(s, 3, &e));
    ck_assert_uint_eq(spec_stats(s)->max_decay, decay);
    /* The truth spectrum has every emitted gamma. */
    const uint64_t *t = spec_histogram(s, SPEC_TRUTH);
    ck_assert_uint_eq(t[1332], n1332);
    spec_destroy(&s);

    /* The setting wins: one count for every line, or one per line. */
    const char *one[] = {"lines", "1173.2 1332.5", "emitted", "1e6", NULL};
    s = make_spec(one);
    feed_ok(s, &f);
    ck_assert(spec_emitted(s, 1, &e));
    ck_assert_double_eq(e, 1e6);
    spec_destroy(&s);
    const char *two[] = {"lines", "1173.2 1332.5", "emitted", "100, 200", NULL};
    s = make_spec(two);
    ck_assert(spec_emitted(s, 1, &e));
    ck_assert_double_eq(e, 200);
    spec_destroy(&s);
    frames_close(&f);
}
END_TEST

/* A frame that does not decode: TUSK_EINVAL naming its offset (with the
 * caller's base); a truncated buffer likewise. */
START_TEST(bad_frames_are_named)
{
    spec_t *s = make_spec(NULL);
    frames_t f;
    frames_open(&f);
    put_psa(&f, 1, 1, 100);
    size_t at = frames_used(&f);
    uint8_t junk[30];
    memset(junk, 0, sizeof junk);
    size_t len = tu_put_frame(f.buf + at, ADF_TYPE_DATA_PSA, 2, 5, junk, 7); /* 7 bytes: no crystal header */
    uint64_t base = tu_below(100000);
    tusk_error_t err;
    ck_assert_int_eq(spec_feed(s, f.buf, at + len, base, &err), TUSK_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "offset %llu: data:psa", (unsigned long long)(base + at));
    tu_assert_error(&err, TUSK_EINVAL, want);
    /* Cut in the middle of the first frame. */
    ck_assert_int_eq(spec_feed(s, f.buf, at - 3, base, &err), TUSK_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "offset"));
    spec_destroy(&s);
    frames_close(&f);
}
END_TEST

/* ---- files -------------------------------------------------------------------------- */

/* CSV files exactly as documented; frames of other types reported. */
START_TEST(csv_files_as_documented)
{
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    const char *settings[] = {"bin_kev", "2", "max_kev", "2048", "lines", "1332.5", "emitted", "400", "plot", "no",
                              NULL};
    spec_t *s = make_spec(settings);
    frames_t f;
    frames_open(&f);
    unsigned k = 1 + tu_below(50);
    for (unsigned i = 0; i < k; i++)
        put_psa(&f, i, 7, 1333.0);
    put_psa(&f, 900, 3, 101.0);
    put_psa(&f, 901, 3, 5000.0); /* over the range: counted, reported */
    uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    size_t used = frames_used(&f);
    used += tu_put_frame(f.buf + used, 0xFA0199F1u, 1, 1, payload, sizeof payload);
    used += tu_put_frame(f.buf + used, 0xFA0199F1u, 2, 2, payload, sizeof payload);
    used += tu_put_frame(f.buf + used, ADF_TYPE_DATA_CRYSTAL, 3, 3, payload, 0); /* ignored, not decoded */
    tusk_error_t err;
    ck_assert_int_eq(spec_feed(s, f.buf, used, 0, &err), TUSK_OK);
    char *rpath = tu_temp_path();
    FILE *report = fopen(rpath, "w+");
    ck_assert_ptr_nonnull(report);
    if (spec_write(s, dir, report, &err) != TUSK_OK)
        ck_abort_msg("spec_write: %s", err.message);
    fclose(report);

    char p[512];
    snprintf(p, sizeof p, "%s/singles.csv", dir);
    char *text = slurp(p);
    ck_assert(strncmp(text, "energy_kev,counts\n1,0\n3,0\n", 26) == 0);
    char line[64];
    snprintf(line, sizeof line, "\n1333,%u\n", k); /* bin [1332, 1334) */
    ck_assert_ptr_nonnull(strstr(text, line));
    ck_assert_ptr_nonnull(strstr(text, "\n101,1\n"));
    size_t lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    ck_assert_uint_eq(lines, 1 + 1024);
    ck_assert_ptr_nonnull(strstr(text, "\n2047,0\n"));
    free(text);

    snprintf(p, sizeof p, "%s/core.csv", dir);
    text = slurp(p);
    ck_assert(strncmp(text, "energy_kev,crystal_3,crystal_7\n1,0,0\n", 37) == 0);
    snprintf(line, sizeof line, "\n1333,0,%u\n", k);
    ck_assert_ptr_nonnull(strstr(text, line));
    ck_assert_ptr_nonnull(strstr(text, "\n101,1,0\n"));
    free(text);

    for (int kind = 0; kind < SPEC_KINDS; kind++) {
        snprintf(p, sizeof p, "%s/%s.csv", dir, spec_kind_name((spec_kind_t)kind));
        text = slurp(p);
        ck_assert(strncmp(text, "energy_kev,counts\n", 18) == 0);
        free(text);
    }

    snprintf(p, sizeof p, "%s/summary.csv", dir);
    text = slurp(p);
    char expect[512];
    /* k + 1 counts in range over 10 keV; no truth, emitted from the setting. */
    snprintf(expect, sizeof expect,
             "spectrum,line_kev,position_kev,fwhm_kev,area,emitted,efficiency,peak_to_total,total_counts\n"
             "singles,1332.500,1333.0000,,%u.0,400.0,%.6f,%.6f,%u\n"
             "addback,1332.500,1333.0000,,%u.0,400.0,%.6f,%.6f,%u\n",
             k, k / 400.0, (double)k / (k + 1), k + 1, k, k / 400.0, (double)k / (k + 1), k + 1);
    ck_assert_str_eq(text, expect);
    free(text);

    text = slurp(rpath);
    ck_assert_ptr_nonnull(strstr(text, "ignored: 3 frames of other types: 0xFA0199F1 2 data:crystal 1"));
    ck_assert_ptr_nonnull(strstr(text, "out of range: singles: 0 below 0 keV or not a number, 1 at or above 2048 keV"));
    ck_assert_ptr_nonnull(strstr(text, "emitted gammas: from the setting 'emitted'"));
    free(text);
    unlink(rpath);
    free(rpath);
    /* plot = no: no pictures. */
    ck_assert_int_eq(file_size(dir, "spectra.png"), -1);
    spec_destroy(&s);
    frames_close(&f);
    tu_remove_dir(dir);
}
END_TEST

static spec_t *plot_spec(frames_t *f, const char *format)
{
    const char *settings[] = {"lines", "1173.2 1332.5", "format", format, NULL};
    spec_t *s = make_spec(settings);
    frames_open(f);
    for (unsigned i = 0; i < 500; i++)
        put_psa(f, i, tu_below(15), i % 3 == 0 ? 1173.2 + gauss() : i % 3 == 1 ? 1332.5 + gauss() : 1400 * tu_uniform());
    feed_ok(s, f);
    return s;
}

START_TEST(pictures_are_drawn)
{
    if (!gnuplot_found()) {
        fprintf(stderr, "check_spectrum: pictures_are_drawn: no gnuplot, nothing drawn (install gnuplot-nox)\n");
        return;
    }
    const char *formats[] = {"png", "svg"};
    for (int i = 0; i < 2; i++) {
        char dir[256];
        tu_make_dir(dir, sizeof dir);
        frames_t f;
        spec_t *s = plot_spec(&f, formats[i]);
        tusk_error_t err;
        if (spec_write(s, dir, NULL, &err) != TUSK_OK)
            ck_abort_msg("spec_write (%s): %s", formats[i], err.message);
        char name[32], p[512];
        for (int j = 0; j < 2; j++) {
            snprintf(name, sizeof name, "%s.%s", j ? "lines" : "spectra", formats[i]);
            ck_assert_int_gt(file_size(dir, name), 1000);
            snprintf(p, sizeof p, "%s/%s", dir, name);
            char *text = slurp(p);
            if (i == 0)
                ck_assert(memcmp(text, "\x89PNG", 4) == 0);
            else
                ck_assert_ptr_nonnull(strstr(text, "<svg"));
            free(text);
        }
        ck_assert_int_gt(file_size(dir, "spectra.dat"), 1000);
        ck_assert_int_gt(file_size(dir, "spectra.gp"), 100);
        ck_assert_int_gt(file_size(dir, "lines.gp"), 100);
        ck_assert_int_eq(file_size(dir, "spectra.log"), -1); /* empty logs are removed */
        spec_destroy(&s);
        frames_close(&f);
        tu_remove_dir(dir);
    }
}
END_TEST

/* TUSK_GNUPLOT naming a missing program, or one that fails: TUSK_EIO with
 * the script. */
START_TEST(gnuplot_failures_name_the_script)
{
    const char *old = getenv("TUSK_GNUPLOT");
    char *saved = old ? strdup(old) : NULL;
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    frames_t f;
    spec_t *s = plot_spec(&f, "png");
    tusk_error_t err;
    char script[512];
    snprintf(script, sizeof script, "%s/spectra.gp", dir);

    ck_assert_int_eq(setenv("TUSK_GNUPLOT", "/nonexistent/tusk/gnuplot", 1), 0);
    ck_assert_int_eq(spec_write(s, dir, NULL, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "gnuplot not found");
    ck_assert_ptr_nonnull(strstr(err.message, script));

    ck_assert_int_eq(setenv("TUSK_GNUPLOT", "false", 1), 0);
    ck_assert_int_eq(spec_write(s, dir, NULL, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "exit status 1");
    ck_assert_ptr_nonnull(strstr(err.message, script));

    if (saved)
        setenv("TUSK_GNUPLOT", saved, 1);
    else
        unsetenv("TUSK_GNUPLOT");
    free(saved);
    spec_destroy(&s);
    frames_close(&f);
    tu_remove_dir(dir);
}
END_TEST

/* ---- settings ---------------------------------------------------------------------- */

static void bad_setting(const char *key, const char *value, const char *needle)
{
    spec_config_t cfg;
    spec_config_init(&cfg);
    tusk_error_t err;
    ck_assert_int_eq(spec_config_set(&cfg, key, value, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, needle);
}

START_TEST(bad_settings_are_named)
{
    bad_setting("bin_width", "1", "unknown setting 'bin_width'");
    bad_setting("bin_kev", "-1", "'bin_kev': -1 is outside");
    bad_setting("bin_kev", "1keV", "'bin_kev': '1keV' is not a number");
    bad_setting("max_kev", "0", "'max_kev'");
    bad_setting("lines", "1173.2 abc", "'lines': 'abc' is not a number");
    bad_setting("lines", "-5", "'lines'");
    bad_setting("addback_group", "1.5", "'addback_group': '1.5' is not a whole number");
    bad_setting("addback_group", "0", "'addback_group'");
    bad_setting("format", "jpg", "'format': 'jpg'");
    bad_setting("plot", "maybe", "'plot': 'maybe'");
    bad_setting("emitted", "0", "'emitted'");
    bad_setting("out", "", "'out'");
    bad_setting("out", "it's", "'out'");
    bad_setting("threshold_kev", "nan", "'threshold_kev'");

    /* Checks across settings. */
    spec_config_t cfg;
    spec_config_init(&cfg);
    tusk_error_t err;
    ck_assert_int_eq(spec_config_set(&cfg, "lines", "4090", &err), TUSK_OK);
    ck_assert_int_eq(spec_config_check(&cfg, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "'lines': 4090 keV");
    ck_assert_ptr_null(spec_new(&cfg, &err));
    tu_assert_error(&err, TUSK_EPARAM, "max_kev");
    ck_assert_int_eq(spec_config_set(&cfg, "lines", "1000 2000 3000", &err), TUSK_OK);
    ck_assert_int_eq(spec_config_set(&cfg, "emitted", "5 6", &err), TUSK_OK);
    ck_assert_int_eq(spec_config_check(&cfg, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "'emitted': 2 counts for 3 lines");
    spec_config_init(&cfg);
    ck_assert_int_eq(spec_config_set(&cfg, "bin_kev", "0.0001", &err), TUSK_OK);
    ck_assert_int_eq(spec_config_check(&cfg, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "bins");
    /* Every documented key is accepted. */
    const char *const *keys = spec_config_keys();
    size_t n = 0;
    for (; keys[n]; n++)
        ;
    ck_assert_uint_eq(n, 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spectrum");
    TCase *tc = tcase_create("peaks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gaussian_peaks_are_recovered);
    tcase_add_test(tc, single_bin_and_empty_peaks);
    tcase_add_test(tc, efficiency_and_peak_to_total);
    suite_add_tcase(s, tc);
    tc = tcase_create("accumulation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, addback_groups_crystals_by_cluster);
    tcase_add_test(tc, emitted_counted_from_truth);
    tcase_add_test(tc, bad_frames_are_named);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, csv_files_as_documented);
    tcase_add_test(tc, pictures_are_drawn);
    tcase_add_test(tc, gnuplot_failures_name_the_script);
    suite_add_tcase(s, tc);
    tc = tcase_create("settings");
    tcase_add_test(tc, bad_settings_are_named);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
