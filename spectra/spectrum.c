/* spectrum.c - settings, accumulation of the spectra from ADF frames, and
 * the CSV files of the spectra (see tusk/spectrum.h, spectra/README.md).
 * The bottom of libtusk-spectra: peaks.c and spectra_plot.c read the
 * spectra through its accessors; spec_write.c puts everything together.
 *
 * Every frame is decoded with the libtusk-adf codecs; a frame that does
 * not decode stops the feed with its byte offset. Frames of other types
 * are counted per type and reported, never dropped silently. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <tusk/adf.h>
#include <tusk/spectrum.h>

#include "base/parse.h"

#define MAX_DEPTH ADF_WRITER_MAX_DEPTH
#define N_CRYSTAL_IDS 65536u

/* One cluster's sum in the event being built. */
typedef struct cluster_sum {
    unsigned cluster;
    double energy;
} cluster_sum_t;

struct spec {
    spec_config_t cfg;
    size_t nbins;
    uint64_t *hist[SPEC_KINDS];
    uint64_t **core_by_id;  /* N_CRYSTAL_IDS pointers, allocated on first sight */
    uint16_t *ids;          /* crystals seen, increasing */
    size_t n_ids;
    adf_reader_t *reader[MAX_DEPTH + 1]; /* one per composite nesting level */
    adf_psa_t *psa;         /* SPEC_MAX_EVENT_CRYSTALS, for composites */
    adf_key_t *keys;
    adf_truth_t *truth;
    adf_tracked_t *tracked;
    /* The event of standalone data:psa frames being collected. */
    bool pending;
    uint32_t pending_event;
    size_t n_sums;
    cluster_sum_t sums[SPEC_MAX_EVENT_CRYSTALS];
    uint64_t line_gammas[SPEC_MAX_LINES]; /* truth gammas within SPEC_LINE_MATCH_KEV of each line */
    spec_stats_t stats;
};

/* ---- settings ------------------------------------------------------------------- */

static const char *const config_keys[] = {"bin_kev",       "max_kev", "addback_group", "lines", "peak_window_kev",
                                          "threshold_kev", "emitted", "out",           "format", "plot",
                                          NULL};

const char *const *spec_config_keys(void)
{
    return config_keys;
}

void spec_config_init(spec_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->bin_kev = 1.0;
    cfg->max_kev = 4096.0;
    cfg->addback_group = 3;
    cfg->peak_window_kev = 8.0;
    cfg->threshold_kev = 10.0;
    strcpy(cfg->out, "spectra");
    cfg->format = SPEC_PNG;
    cfg->plot = true;
}

/* A finite number (base/parse.h), spaces and tabs around it allowed. */
static bool parse_double(const char *text, double *v)
{
    char item[128];
    text += strspn(text, " \t");
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (n >= sizeof item)
        return false;
    memcpy(item, text, n);
    item[n] = '\0';
    return tusk_parse_double(item, -DBL_MAX, DBL_MAX, v) == 0;
}

/* A list of numbers separated by spaces or commas. */
static int parse_list(const char *key, const char *value, double min, double *out, unsigned *n, tusk_error_t *err)
{
    unsigned count = 0;
    const char *s = value;
    for (;;) {
        s += strspn(s, " \t,");
        if (!*s)
            break;
        size_t len = strcspn(s, " \t,");
        char item[64];
        if (len >= sizeof item)
            return tusk_error_set(err, TUSK_EPARAM, "setting '%s': '%.*s' is not a number", key, (int)len, s);
        memcpy(item, s, len);
        item[len] = '\0';
        double d;
        if (!parse_double(item, &d))
            return tusk_error_set(err, TUSK_EPARAM, "setting '%s': '%s' is not a number (in '%s')", key, item,
                                  value);
        if (d < min)
            return tusk_error_set(err, TUSK_EPARAM, "setting '%s': %s is below %g", key, item, min);
        if (count == SPEC_MAX_LINES)
            return tusk_error_set(err, TUSK_EPARAM, "setting '%s': more than %d values", key, SPEC_MAX_LINES);
        out[count++] = d;
        s += len;
    }
    *n = count;
    return TUSK_OK;
}

static int set_number(const char *key, const char *value, double lo, double hi, bool lo_open, double *out,
                      tusk_error_t *err)
{
    double d;
    if (!parse_double(value, &d))
        return tusk_error_set(err, TUSK_EPARAM, "setting '%s': '%s' is not a number", key, value);
    if (d < lo || (lo_open && d == lo) || d > hi)
        return tusk_error_set(err, TUSK_EPARAM, "setting '%s': %s is outside %s%g, %g]", key, value,
                              lo_open ? "(" : "[", lo, hi);
    *out = d;
    return TUSK_OK;
}

/* A list of up to SPEC_MAX_LINES positive numbers into out[] and *n
 * (both untouched on error); `what` ends the message for a bad one. */
static int parse_positive_list(const char *key, const char *value, const char *what, double *out, unsigned *n,
                               tusk_error_t *err)
{
    double v[SPEC_MAX_LINES];
    unsigned k = 0;
    int rc = parse_list(key, value, 0.0, v, &k, err);
    if (rc)
        return rc;
    for (unsigned i = 0; i < k; i++)
        if (!(v[i] > 0))
            return tusk_error_set(err, TUSK_EPARAM, "setting '%s': %g %s", key, v[i], what);
    memcpy(out, v, sizeof v);
    *n = k;
    return TUSK_OK;
}

int spec_config_set(spec_config_t *cfg, const char *key, const char *value, tusk_error_t *err)
{
    if (!cfg || !key || !value)
        return tusk_error_set(err, TUSK_EINVAL, "spec_config_set: NULL argument");
    if (strcmp(key, "bin_kev") == 0)
        return set_number(key, value, 0.0, 1000.0, true, &cfg->bin_kev, err);
    if (strcmp(key, "max_kev") == 0)
        return set_number(key, value, 0.0, 1e7, true, &cfg->max_kev, err);
    if (strcmp(key, "peak_window_kev") == 0)
        return set_number(key, value, 0.0, 1e5, true, &cfg->peak_window_kev, err);
    if (strcmp(key, "threshold_kev") == 0)
        return set_number(key, value, 0.0, 1e7, false, &cfg->threshold_kev, err);
    if (strcmp(key, "addback_group") == 0) {
        double d;
        int rc = set_number(key, value, 1.0, 65536.0, false, &d, err);
        if (rc)
            return rc;
        if (d != floor(d))
            return tusk_error_set(err, TUSK_EPARAM, "setting 'addback_group': '%s' is not a whole number", value);
        cfg->addback_group = (unsigned)d;
        return TUSK_OK;
    }
    if (strcmp(key, "lines") == 0)
        return parse_positive_list(key, value, "keV is not a positive energy", cfg->lines, &cfg->n_lines, err);
    if (strcmp(key, "emitted") == 0) {
        if (strcmp(value, "auto") == 0 || strcmp(value, "truth") == 0) {
            cfg->n_emitted = 0;
            return TUSK_OK;
        }
        return parse_positive_list(key, value, "is not a positive count", cfg->emitted, &cfg->n_emitted, err);
    }
    if (strcmp(key, "out") == 0) {
        if (!*value)
            return tusk_error_set(err, TUSK_EPARAM, "setting 'out': empty folder name");
        if (strlen(value) >= SPEC_OUT_MAX - 32)
            return tusk_error_set(err, TUSK_EPARAM, "setting 'out': the folder name is longer than %d bytes",
                                  SPEC_OUT_MAX - 32);
        if (strpbrk(value, "'\n\r"))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "setting 'out': '%s' has a quote or a line break, which gnuplot scripts cannot "
                                  "name",
                                  value);
        strcpy(cfg->out, value);
        return TUSK_OK;
    }
    if (strcmp(key, "format") == 0) {
        if (strcmp(value, "png") == 0)
            cfg->format = SPEC_PNG;
        else if (strcmp(value, "svg") == 0)
            cfg->format = SPEC_SVG;
        else
            return tusk_error_set(err, TUSK_EPARAM, "setting 'format': '%s' is neither png nor svg", value);
        return TUSK_OK;
    }
    if (strcmp(key, "plot") == 0) {
        static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false", "off", "0"};
        for (size_t i = 0; i < 4; i++) {
            if (strcasecmp(value, yes[i]) == 0) {
                cfg->plot = true;
                return TUSK_OK;
            }
            if (strcasecmp(value, no[i]) == 0) {
                cfg->plot = false;
                return TUSK_OK;
            }
        }
        return tusk_error_set(err, TUSK_EPARAM, "setting 'plot': '%s' is not yes or no", value);
    }
    return tusk_error_set(err, TUSK_EPARAM,
                          "unknown setting '%s' (bin_kev, max_kev, addback_group, lines, peak_window_kev, "
                          "threshold_kev, emitted, out, format, plot)",
                          key);
}

int spec_config_check(const spec_config_t *cfg, tusk_error_t *err)
{
    double bins = ceil(cfg->max_kev / cfg->bin_kev - 1e-9);
    if (!(bins >= 1) || bins > SPEC_MAX_BINS)
        return tusk_error_set(err, TUSK_EPARAM, "settings 'max_kev' %g / 'bin_kev' %g give %.0f bins (1 to %u)",
                              cfg->max_kev, cfg->bin_kev, bins, SPEC_MAX_BINS);
    if (cfg->peak_window_kev < cfg->bin_kev)
        return tusk_error_set(err, TUSK_EPARAM, "setting 'peak_window_kev': %g keV is narrower than a bin (%g keV)",
                              cfg->peak_window_kev, cfg->bin_kev);
    double top = bins * cfg->bin_kev;
    for (unsigned i = 0; i < cfg->n_lines; i++) {
        double l = cfg->lines[i], w = cfg->peak_window_kev;
        if (l - 2 * w < 0 || l + 2 * w > top)
            return tusk_error_set(err, TUSK_EPARAM,
                                  "setting 'lines': %g keV with its side bands (+-%g keV, twice 'peak_window_kev') "
                                  "leaves the range 0-%g keV ('max_kev')",
                                  l, 2 * w, top);
    }
    if (cfg->n_emitted > 1 && cfg->n_emitted != cfg->n_lines)
        return tusk_error_set(err, TUSK_EPARAM,
                              "setting 'emitted': %u counts for %u lines (give one for every line, or one for all)",
                              cfg->n_emitted, cfg->n_lines);
    return TUSK_OK;
}

/* ---- the object ------------------------------------------------------------------ */

spec_t *spec_new(const spec_config_t *cfg, tusk_error_t *err)
{
    if (!cfg) {
        tusk_error_set(err, TUSK_EINVAL, "spec_new: no settings");
        return NULL;
    }
    if (spec_config_check(cfg, err))
        return NULL;
    spec_t *s = calloc(1, sizeof *s);
    if (!s)
        goto nomem;
    s->cfg = *cfg;
    s->nbins = (size_t)ceil(cfg->max_kev / cfg->bin_kev - 1e-9);
    for (int k = 0; k < SPEC_KINDS; k++)
        if (!(s->hist[k] = calloc(s->nbins, sizeof(uint64_t))))
            goto nomem;
    s->core_by_id = calloc(N_CRYSTAL_IDS, sizeof *s->core_by_id);
    s->ids = malloc(N_CRYSTAL_IDS * sizeof *s->ids);
    s->psa = malloc(SPEC_MAX_EVENT_CRYSTALS * sizeof *s->psa);
    s->keys = malloc(SPEC_MAX_EVENT_CRYSTALS * sizeof *s->keys);
    s->truth = malloc(sizeof *s->truth);
    s->tracked = malloc(sizeof *s->tracked);
    if (!s->core_by_id || !s->ids || !s->psa || !s->keys || !s->truth || !s->tracked)
        goto nomem;
    for (int d = 0; d <= MAX_DEPTH; d++)
        if (!(s->reader[d] = adf_reader_new(ADF_ON_ERROR_STOP)))
            goto nomem;
    return s;
nomem:
    spec_destroy(&s);
    tusk_error_set(err, TUSK_ENOMEM, "spectra: out of memory");
    return NULL;
}

void spec_destroy(spec_t **spec)
{
    if (!spec || !*spec)
        return;
    spec_t *s = *spec;
    for (int k = 0; k < SPEC_KINDS; k++)
        free(s->hist[k]);
    if (s->core_by_id)
        for (size_t i = 0; i < s->n_ids; i++)
            free(s->core_by_id[s->ids[i]]);
    free(s->core_by_id);
    free(s->ids);
    free(s->psa);
    free(s->keys);
    free(s->truth);
    free(s->tracked);
    for (int d = 0; d <= MAX_DEPTH; d++)
        adf_reader_destroy(&s->reader[d]);
    free(s);
    *spec = NULL;
}

const spec_config_t *spec_config(const spec_t *spec)
{
    return &spec->cfg;
}

/* ---- accumulation ------------------------------------------------------------------ */

/* The bin of an energy; -1 below 0 (or not a number), -2 at or above max. */
static long bin_of(const spec_t *s, double e)
{
    if (!(e >= 0))
        return -1;
    double b = floor(e / s->cfg.bin_kev);
    if (b >= (double)s->nbins)
        return -2;
    return (long)b;
}

/* Count `e` in `hist` (out-of-range counts go to spectrum kind's counters). */
static void fill(spec_t *s, spec_kind_t kind, uint64_t *hist, double e)
{
    long b = bin_of(s, e);
    if (b == -1)
        s->stats.underflow[kind]++;
    else if (b == -2)
        s->stats.overflow[kind]++;
    else
        hist[b]++;
}

static int add_core(spec_t *s, const adf_psa_t *p, tusk_error_t *err)
{
    uint64_t *core = s->core_by_id[p->crystal_id];
    if (!core) {
        if (!(core = calloc(s->nbins, sizeof *core)))
            return tusk_error_set(err, TUSK_ENOMEM, "spectra: out of memory (core spectrum of crystal %u)",
                                  p->crystal_id);
        s->core_by_id[p->crystal_id] = core;
        size_t i = s->n_ids;
        while (i > 0 && s->ids[i - 1] > p->crystal_id) {
            s->ids[i] = s->ids[i - 1];
            i--;
        }
        s->ids[i] = p->crystal_id;
        s->n_ids++;
    }
    double e = p->core_energy[0];
    long b = bin_of(s, e);
    if (b >= 0)
        core[b]++;
    fill(s, SPEC_SINGLES, s->hist[SPEC_SINGLES], e);
    s->stats.psa_frames++;
    return TUSK_OK;
}

/* Add a crystal's core energy to its cluster's sum in the current event. */
static void add_to_event(spec_t *s, const adf_psa_t *p)
{
    unsigned cluster = p->crystal_id / s->cfg.addback_group;
    for (size_t i = 0; i < s->n_sums; i++)
        if (s->sums[i].cluster == cluster) {
            s->sums[i].energy += p->core_energy[0];
            return;
        }
    if (s->n_sums == SPEC_MAX_EVENT_CRYSTALS) {
        /* More clusters than crystals in a composite: only standalone frames
         * of one event get here; the overflow is its own addback count. */
        fill(s, SPEC_ADDBACK, s->hist[SPEC_ADDBACK], p->core_energy[0]);
        return;
    }
    s->sums[s->n_sums].cluster = cluster;
    s->sums[s->n_sums].energy = p->core_energy[0];
    s->n_sums++;
}

static void close_event(spec_t *s)
{
    for (size_t i = 0; i < s->n_sums; i++)
        fill(s, SPEC_ADDBACK, s->hist[SPEC_ADDBACK], s->sums[i].energy);
    if (s->n_sums)
        s->stats.events++;
    s->n_sums = 0;
    s->pending = false;
}

void spec_finish(spec_t *spec)
{
    if (spec && spec->pending)
        close_event(spec);
}

static void count_ignored(spec_t *s, uint32_t type)
{
    spec_stats_t *st = &s->stats;
    st->ignored_frames++;
    for (unsigned i = 0; i < st->n_ignored_types && i < 8; i++)
        if (st->ignored_type[i] == type) {
            st->ignored_count[i]++;
            return;
        }
    if (st->n_ignored_types < 8) {
        st->ignored_type[st->n_ignored_types] = type;
        st->ignored_count[st->n_ignored_types] = 1;
    }
    st->n_ignored_types++;
}

static int decode_failed(const adf_frame_t *f, const char *what, const adf_error_t *ae, tusk_error_t *err)
{
    return tusk_error_set(err, TUSK_EINVAL, "offset %llu: %s frame does not decode: %s",
                          (unsigned long long)f->offset, what, ae->message);
}

static int feed(spec_t *s, const adf_frame_t *f, int depth, tusk_error_t *err);

/* The frames inside a composite of a type without its own codec. */
static int feed_composite(spec_t *s, const adf_frame_t *f, int depth, tusk_error_t *err)
{
    if (depth >= MAX_DEPTH)
        return tusk_error_set(err, TUSK_EINVAL, "offset %llu: composite frames nested deeper than %d",
                              (unsigned long long)f->offset, MAX_DEPTH);
    adf_reader_t *r = s->reader[depth + 1];
    if (adf_reader_open_composite(r, f) != ADF_OK)
        return tusk_error_set(err, TUSK_EINVAL, "offset %llu: %s", (unsigned long long)f->offset,
                              adf_reader_error(r)->message);
    adf_frame_t in;
    int rc;
    while ((rc = adf_reader_next(r, &in)) == ADF_OK) {
        int st = feed(s, &in, depth + 1, err);
        if (st)
            return st;
    }
    if (rc != ADF_END)
        return tusk_error_set(err, TUSK_EINVAL, "inside the composite frame at offset %llu: %s",
                              (unsigned long long)f->offset, adf_reader_error(r)->message);
    return TUSK_OK;
}

static int feed(spec_t *s, const adf_frame_t *f, int depth, tusk_error_t *err)
{
    adf_error_t ae;
    int st;
    s->stats.frames++;
    switch (f->key.type) {
    case ADF_TYPE_DATA_PSA: {
        adf_psa_t *p = &s->psa[0];
        if (adf_psa_decode(f, p, &ae) != ADF_OK)
            return decode_failed(f, "data:psa", &ae, err);
        if (s->pending && s->pending_event != f->key.event)
            close_event(s);
        if ((st = add_core(s, p, err)))
            return st;
        s->pending = true;
        s->pending_event = f->key.event;
        add_to_event(s, p);
        return TUSK_OK;
    }
    case ADF_TYPE_EVENT_DATA_PSA: {
        size_t n = 0;
        if (adf_event_psa_decode(f, s->keys, s->psa, SPEC_MAX_EVENT_CRYSTALS, &n, &ae) != ADF_OK)
            return decode_failed(f, "event:data:psa", &ae, err);
        if (s->pending)
            close_event(s);
        s->stats.composites++;
        s->stats.frames += n;
        for (size_t i = 0; i < n; i++) {
            if ((st = add_core(s, &s->psa[i], err)))
                return st;
            add_to_event(s, &s->psa[i]);
        }
        close_event(s);
        return TUSK_OK;
    }
    case ADF_TYPE_DATA_TRACKED: {
        if (adf_tracked_decode(f, s->tracked, &ae) != ADF_OK)
            return decode_failed(f, "data:tracked", &ae, err);
        s->stats.tracked_frames++;
        for (unsigned i = 0; i < s->tracked->n_gammas; i++) {
            fill(s, SPEC_TRACKED, s->hist[SPEC_TRACKED], s->tracked->gamma[i].energy);
            s->stats.tracked_gammas++;
        }
        return TUSK_OK;
    }
    case ADF_TYPE_DATA_TRUTH: {
        adf_truth_t *t = s->truth;
        if (adf_truth_decode(f, t, &ae) != ADF_OK)
            return decode_failed(f, "data:truth", &ae, err);
        if (s->stats.truth_frames == 0 || t->decay > s->stats.max_decay)
            s->stats.max_decay = t->decay;
        s->stats.truth_frames++;
        for (unsigned i = 0; i < t->n_gammas; i++) {
            double e = t->gamma[i].energy;
            fill(s, SPEC_TRUTH, s->hist[SPEC_TRUTH], e);
            s->stats.truth_gammas++;
            for (unsigned l = 0; l < s->cfg.n_lines; l++)
                if (fabs(e - s->cfg.lines[l]) <= SPEC_LINE_MATCH_KEV)
                    s->line_gammas[l]++;
        }
        return TUSK_OK;
    }
    case ADF_TYPE_META_EOF:
        s->stats.eof_frames++;
        return TUSK_OK;
    default:
        if (adf_type_is_composite(f->key.type))
            return feed_composite(s, f, depth, err);
        count_ignored(s, f->key.type);
        return TUSK_OK;
    }
}

int spec_feed_frame(spec_t *spec, const adf_frame_t *frame, tusk_error_t *err)
{
    if (!spec || !frame)
        return tusk_error_set(err, TUSK_EINVAL, "spec_feed_frame: NULL argument");
    return feed(spec, frame, 0, err);
}

int spec_feed(spec_t *spec, const void *data, size_t size, uint64_t base_offset, tusk_error_t *err)
{
    if (!spec || (!data && size))
        return tusk_error_set(err, TUSK_EINVAL, "spec_feed: NULL argument");
    adf_reader_t *r = spec->reader[0];
    adf_reader_reset(r, data, size, base_offset);
    adf_frame_t f;
    int rc;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        int st = feed(spec, &f, 0, err);
        if (st)
            return st;
    }
    if (rc != ADF_END)
        return tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    return TUSK_OK;
}

/* ---- accessors ---------------------------------------------------------------------- */

size_t spec_bins(const spec_t *spec)
{
    return spec->nbins;
}

double spec_bin_centre(const spec_t *spec, size_t bin)
{
    return ((double)bin + 0.5) * spec->cfg.bin_kev;
}

const uint64_t *spec_histogram(const spec_t *spec, spec_kind_t kind)
{
    return (unsigned)kind < SPEC_KINDS ? spec->hist[kind] : NULL;
}

const char *spec_kind_name(spec_kind_t kind)
{
    static const char *const names[SPEC_KINDS] = {"singles", "addback", "tracked", "truth"};
    return (unsigned)kind < SPEC_KINDS ? names[kind] : "?";
}

size_t spec_crystals(const spec_t *spec)
{
    return spec->n_ids;
}

unsigned spec_crystal_id(const spec_t *spec, size_t i)
{
    return i < spec->n_ids ? spec->ids[i] : 0;
}

const uint64_t *spec_core(const spec_t *spec, size_t i)
{
    return i < spec->n_ids ? spec->core_by_id[spec->ids[i]] : NULL;
}

const spec_stats_t *spec_stats(const spec_t *spec)
{
    return &spec->stats;
}

bool spec_emitted(const spec_t *spec, unsigned line, double *emitted)
{
    const spec_config_t *c = &spec->cfg;
    if (line >= c->n_lines)
        return false;
    if (c->n_emitted > 0) {
        *emitted = c->emitted[c->n_emitted == 1 ? 0 : line];
        return true;
    }
    if (spec->stats.truth_frames == 0)
        return false;
    /* decays x (gammas of the line per truth frame): truth frames exist only
     * for decays that were read out, the decay index counts them all. */
    double decays = (double)spec->stats.max_decay + 1.0;
    *emitted = decays * (double)spec->line_gammas[line] / (double)spec->stats.truth_frames;
    return true;
}

/* ---- files --------------------------------------------------------------------------- */

static FILE *open_in(const char *dir, const char *name, char *path, size_t cap, tusk_error_t *err)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno));
    return fp;
}

static int close_file(FILE *fp, const char *path, tusk_error_t *err)
{
    int bad = ferror(fp);
    if (fclose(fp) != 0)
        bad = 1;
    if (bad)
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno ? errno : EIO));
    return TUSK_OK;
}

int spec_write_spectra(const spec_t *spec, const char *dir, tusk_error_t *err)
{
    char path[SPEC_OUT_MAX + 64];
    FILE *fp = open_in(dir, "core.csv", path, sizeof path, err);
    if (!fp)
        return TUSK_EIO;
    fputs("energy_kev", fp);
    for (size_t i = 0; i < spec->n_ids; i++)
        fprintf(fp, ",crystal_%u", spec->ids[i]);
    fputc('\n', fp);
    for (size_t b = 0; b < spec->nbins; b++) {
        fprintf(fp, "%.10g", spec_bin_centre(spec, b));
        for (size_t i = 0; i < spec->n_ids; i++)
            fprintf(fp, ",%llu", (unsigned long long)spec->core_by_id[spec->ids[i]][b]);
        fputc('\n', fp);
    }
    int st = close_file(fp, path, err);
    if (st)
        return st;
    for (int k = 0; k < SPEC_KINDS; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s.csv", spec_kind_name((spec_kind_t)k));
        if (!(fp = open_in(dir, name, path, sizeof path, err)))
            return TUSK_EIO;
        fputs("energy_kev,counts\n", fp);
        for (size_t b = 0; b < spec->nbins; b++)
            fprintf(fp, "%.10g,%llu\n", spec_bin_centre(spec, b), (unsigned long long)spec->hist[k][b]);
        if ((st = close_file(fp, path, err)))
            return st;
    }
    return TUSK_OK;
}
