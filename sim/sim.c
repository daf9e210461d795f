/* sim.c - the event simulation: source, transport through the array,
 * detector response, frames (see tusk/sim.h). */
#include "tusk/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"
#include "tusk/basis.h"
#include "tusk/compton.h"
#include "tusk/crystal.h"
#include "tusk/gexs.h"
#include "sim/simresponse.h"
#include "base/rng.h"
#include "sim/simsource.h"
#include "base/textfile.h"

#define MAX_CONFIG_BYTES (1u << 20)
#define PHOTON_STACK 4 /* per gamma; two at most are used, see transport() */

typedef struct photon {
    double pos[3], dir[3];
    double e_kev;
    unsigned gamma;
} photon_t;

/* One interaction point with a deposit. */
typedef struct point {
    size_t crystal;      /* array index */
    int process;
    unsigned gamma;
    double energy;
    double world[3], local[3];
    int segment;
} point_t;

struct sim {
    transport_physics_t phys;  /* Rayleigh tables: filled once, then read only */
    det_basis_t *basis;
    det_crystal_t *crystal;
    array_t *array;
    sim_source_t *source;
    sim_response_t *response;
    uint64_t seed, rng, events_limit;
    double trigger_kev;
    bool truth_on;
    sim_stats_t stats;
    size_t ncrystals;
    /* per event */
    point_t *points;
    size_t npoints, cap;
    array_chord_t *chords;
    double *crystal_e;         /* per array index */
    double passive_e;          /* deposited in capsules and cryostats, this decay */
    double *gamma_e;           /* per emitted gamma of this decay: its deposits in germanium */
    sim_gamma_tally_t *tally;  /* sim_next_transport's answer */
    sim_deposit_t *deposits;   /* of one crystal */
    adf_crystal_t *records;    /* read out, ncrystals at most */
    adf_truth_t *truth;
    sim_event_t event;
    char description[1024];
};

static const char *const known_keys[] = {
    "basis", "array", "events", "seed", "trigger_kev", "truth", "rayleigh",
    /* source */
    "source", "energy", "energies", "multiplicity", "e_min", "e_max", "rate", "start_tick",
    /* response */
    "pretrigger", "samples", "noise_kev", "gain", "core_low_gain", "baseline", "fwhm_0", "fwhm_1332", NULL};

const char *const *sim_known_keys(void)
{
    return known_keys;
}

/* path taken from the folder of `file` (a copy of path when that has no
 * folder part). */
static char *resolve(const char *file, const char *path)
{
    const char *slash = strrchr(file, '/');
    size_t b = slash ? (size_t)(slash - file) + 1 : 0, n = strlen(path);
    char *s = malloc(b + n + 1);
    if (s) {
        memcpy(s, file, b);
        memcpy(s + b, path, n + 1);
    }
    return s;
}

int sim_config_load(tusk_params_t **out, const char *path, tusk_error_t *err)
{
    *out = NULL;
    char *text;
    size_t n;
    int st = tusk_file_read(path, MAX_CONFIG_BYTES, &text, &n, err);
    tusk_params_t *p = NULL;
    if (st == TUSK_OK && !(p = tusk_params_new()))
        st = tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", path);
    if (st == TUSK_OK)
        st = tusk_params_parse(p, text, n, path, err);
    free(text);
    /* The file's own paths are relative to its folder. */
    static const char *const path_keys[] = {"basis", "array"};
    for (size_t k = 0; st == TUSK_OK && k < 2; k++) {
        const char *v = tusk_params_get(p, path_keys[k]);
        if (!v || !*v || v[0] == '/')
            continue;
        char *full = resolve(path, v);
        if (!full)
            st = tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", path);
        else
            st = tusk_params_set(p, path_keys[k], full, err);
        free(full);
    }
    if (st != TUSK_OK) {
        tusk_params_destroy(&p);
        return st;
    }
    *out = p;
    return TUSK_OK;
}

static int load_parts(sim_t *s, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    const char *basis = tusk_params_get(params, "basis"), *array = tusk_params_get(params, "array");
    if (!basis || !*basis)
        return tusk_error_set(err, TUSK_EPARAM, "%s: no 'basis' (a signal basis file, made by tusk-basis gen)",
                              origin);
    if (!array || !*array)
        return tusk_error_set(err, TUSK_EPARAM, "%s: no 'array' (an array geometry, e.g. array-demonstrator.conf)",
                              origin);
    const char *bpath = basis, *apath = array;
    int st = TUSK_OK;
    det_basis_expect_t expect = {ADF_CRYSTAL_SEGMENTS, ADF_CRYSTAL_SEGMENTS + 1, 0, 0.0};
    if ((st = det_basis_load(&s->basis, bpath, &expect, err)) != TUSK_OK) {
        if (access(bpath, F_OK) != 0)
            tusk_error_prefix(err, "%s: basis (make one with: tusk-basis gen -c crystal-coarse.conf --int16 -o %s)",
                              origin, bpath);
        else
            tusk_error_prefix(err, "%s: basis", origin);
    }
    det_config_t cfg;
    det_config_default(&cfg);
    if (st == TUSK_OK) {
        const char *text = det_basis_shape(s->basis)->config;
        st = det_config_parse(&cfg, text, strlen(text), bpath, err);
        if (st == TUSK_OK)
            st = det_crystal_new(&s->crystal, &cfg, err);
        if (st != TUSK_OK)
            tusk_error_prefix(err, "%s: the crystal of the basis", origin);
    }
    if (st == TUSK_OK && (st = array_load(&s->array, apath, &cfg, err)) != TUSK_OK)
        tusk_error_prefix(err, "%s: array", origin);
    return st;
}

static int configure(sim_t *s, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    int st;
    if ((st = tusk_params_expect(params, known_keys, err)) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    if ((st = tusk_params_u64(params, "events", 1000, &s->events_limit, err)) != TUSK_OK ||
        (st = tusk_params_u64(params, "seed", 1, &s->seed, err)) != TUSK_OK ||
        (st = tusk_params_double(params, "trigger_kev", 10.0, &s->trigger_kev, err)) != TUSK_OK ||
        (st = tusk_params_bool(params, "truth", true, &s->truth_on, err)) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    if (!(s->trigger_kev >= 0.0 && s->trigger_kev < 1e6))
        return tusk_error_set(err, TUSK_EPARAM, "%s: trigger_kev = %g: must be within 0 and 1e6", origin,
                              s->trigger_kev);
    const char *rayleigh = tusk_params_get(params, "rayleigh");
    enum transport_rayleigh mode = TRANSPORT_RAYLEIGH_FORM_FACTOR;
    if (rayleigh && strcmp(rayleigh, "thomson") == 0)
        mode = TRANSPORT_RAYLEIGH_THOMSON;
    else if (rayleigh && strcmp(rayleigh, "form_factor") != 0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: rayleigh = %s: expected form_factor or thomson", origin,
                              rayleigh);
    transport_physics_init(&s->phys, mode);
    if ((st = sim_source_new(&s->source, params, origin, err)) != TUSK_OK)
        return st;
    sim_response_config_t rc;
    sim_response_config_default(&rc);
    if ((st = sim_response_config_read(&rc, params, origin, err)) != TUSK_OK)
        return st;
    if ((st = load_parts(s, params, origin, err)) != TUSK_OK)
        return st;
    if ((st = sim_response_new(&s->response, s->basis, s->crystal, &rc, err)) != TUSK_OK) {
        tusk_error_prefix(err, "%s: detector response", origin);
        return st;
    }
    s->ncrystals = array_count(s->array);
    s->chords = malloc(s->ncrystals * sizeof *s->chords);
    s->crystal_e = malloc(s->ncrystals * sizeof *s->crystal_e);
    s->records = malloc(s->ncrystals * sizeof *s->records);
    s->truth = malloc(sizeof *s->truth);
    s->gamma_e = malloc(SIM_MAX_GAMMAS * sizeof *s->gamma_e);
    s->tally = malloc(SIM_MAX_GAMMAS * sizeof *s->tally);
    s->cap = 256;
    s->points = malloc(s->cap * sizeof *s->points);
    s->deposits = malloc(s->cap * sizeof *s->deposits);
    if (!s->chords || !s->crystal_e || !s->records || !s->truth || !s->points || !s->deposits || !s->gamma_e ||
        !s->tally)
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory (%zu crystals)", origin, s->ncrystals);
    const det_basis_shape_t *bs = det_basis_shape(s->basis);
    char arr[512];
    array_describe(s->array, arr, sizeof arr);
    snprintf(s->description, sizeof s->description,
             "source: %s\narray: %s\nbasis: %zu points, %g mm grid, %u samples of %g ns\n"
             "germanium: %.1f kg in %zu crystals; Rayleigh scattering %s\n"
             "response: %u samples per channel (%u before the interaction), noise %g keV, gain %g ch/keV, "
             "FWHM %g keV at 0 and %g keV at 1332 keV\nevents: %llu decays, seed %llu, trigger %g keV, truth %s",
             sim_source_describe(s->source), arr, det_basis_points(s->basis), bs->grid_mm, bs->samples,
             bs->sample_ns, array_germanium_cm3(s->array) * GEXS_DENSITY / 1000.0, s->ncrystals,
             mode == TRANSPORT_RAYLEIGH_THOMSON ? "without form factors (thomson)" : "with the atomic form factor",
             sim_response_samples(s->response), rc.pretrigger, rc.noise_kev, rc.gain, rc.fwhm_0, rc.fwhm_1332,
             (unsigned long long)s->events_limit, (unsigned long long)s->seed, s->trigger_kev,
             s->truth_on ? "yes" : "no");
    return TUSK_OK;
}

int sim_new(sim_t **out, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    *out = NULL;
    sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", origin);
    int st = configure(s, params, origin, err);
    if (st != TUSK_OK) {
        sim_destroy(&s);
        return st;
    }
    sim_rewind(s);
    *out = s;
    return TUSK_OK;
}

void sim_destroy(sim_t **sim)
{
    if (!sim || !*sim)
        return;
    sim_t *s = *sim;
    sim_response_destroy(&s->response);
    sim_source_destroy(&s->source);
    array_destroy(&s->array);
    det_crystal_destroy(&s->crystal);
    det_basis_destroy(&s->basis);
    free(s->chords);
    free(s->crystal_e);
    free(s->records);
    free(s->truth);
    free(s->points);
    free(s->deposits);
    free(s->gamma_e);
    free(s->tally);
    free(s);
    *sim = NULL;
}

void sim_rewind(sim_t *s)
{
    s->rng = s->seed;
    sim_source_rewind(s->source);
    memset(&s->stats, 0, sizeof s->stats);
}

static int add_point(sim_t *s, size_t crystal, const double world[3], double edep, int process, unsigned gamma,
                     tusk_error_t *err)
{
    if (s->npoints == s->cap) {
        size_t cap = 2 * s->cap;
        point_t *p = realloc(s->points, cap * sizeof *p);
        if (!p)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu interaction points)", cap);
        s->points = p;
        sim_deposit_t *d = realloc(s->deposits, cap * sizeof *d);
        if (!d)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu interaction points)", cap);
        s->deposits = d;
        s->cap = cap;
    }
    point_t *p = &s->points[s->npoints++];
    p->crystal = crystal;
    p->process = process;
    p->gamma = gamma;
    p->energy = edep;
    memcpy(p->world, world, sizeof p->world);
    array_to_local(s->array, crystal, world, p->local);
    /* The segment that collects the charge (the basis knows). */
    p->segment = sim_response_segment_at(s->response, p->local);
    if (p->segment < 0)
        return tusk_error_set(err, TUSK_EINVAL,
                              "crystal %u: a deposit at (%.2f, %.2f, %.2f) mm has no segment in the basis' crystal",
                              array_place(s->array, crystal)->id, p->local[0], p->local[1], p->local[2]);
    s->crystal_e[crystal] += edep;
    s->gamma_e[gamma] += edep;
    return TUSK_OK;
}

/* Where along the ray the photon interacts next, and in what: delta
 * (Woodcock) tracking over the union of the crystals' envelopes with
 * germanium's attenuation, the largest of any material's (aluminium's is
 * at most 0.55 of it: check_germanium). A tentative point in germanium is
 * an interaction; in aluminium one with probability mu_Al / mu_Ge; in
 * vacuum none. A point in no envelope ends the flight there, and a new one
 * starts at the next envelope (the exponential forgets). false: the
 * photon leaves the array. */
static bool next_interaction(sim_t *s, const photon_t *ph, double where[3], size_t *crystal,
                             gexs_material_t *material)
{
    size_t n = array_chords(s->array, ph->pos, ph->dir, s->chords, s->ncrystals, NULL);
    if (n == 0)
        return false;
    double mu = gexs_linear_attenuation(ph->e_kev) / 10.0; /* 1/mm */
    double al = array_passive(s->array)
                    ? gexs_material_linear_attenuation(GEXS_ALUMINIUM, ph->e_kev) / 10.0 / mu
                    : 0.0;
    size_t first = 0; /* the chords before it end before t */
    double t = s->chords[0].t_in;
    for (;;) {
        t += -log(tusk_rng_uniform(&s->rng)) / mu;
        while (first < n && s->chords[first].t_out <= t)
            first++;
        if (first == n)
            return false;
        bool covered = false;
        for (size_t c = first; c < n && s->chords[c].t_in <= t; c++) {
            if (s->chords[c].t_out <= t)
                continue;
            covered = true;
            double p[3] = {ph->pos[0] + t * ph->dir[0], ph->pos[1] + t * ph->dir[1], ph->pos[2] + t * ph->dir[2]};
            enum array_material m = array_material_at(s->array, s->chords[c].crystal, p);
            if (m == ARRAY_VACUUM)
                continue;
            if (m == ARRAY_ALUMINIUM && tusk_rng_uniform(&s->rng) >= al)
                break; /* a virtual collision */
            memcpy(where, p, sizeof p);
            *crystal = s->chords[c].crystal;
            *material = m == ARRAY_GERMANIUM ? GEXS_GERMANIUM : GEXS_ALUMINIUM;
            return true;
        }
        if (!covered) {
            /* Between envelopes: the next one that lies ahead. */
            size_t c = first;
            while (c < n && s->chords[c].t_in <= t)
                c++;
            if (c == n)
                return false;
            t = s->chords[c].t_in;
        }
    }
}

/* Follow every gamma of the decay; points, escaped energy and the
 * energy left in passive material. */
static int transport(sim_t *s, const sim_decay_t *d, double *escaped, tusk_error_t *err)
{
    photon_t stack[PHOTON_STACK];
    size_t n = 0;
    *escaped = 0.0;
    s->passive_e = 0.0;
    for (unsigned g = 0; g < d->n; g++) {
        stack[0] = (photon_t){{0.0, 0.0, 0.0}, {d->dir[g][0], d->dir[g][1], d->dir[g][2]}, d->energy[g], g};
        n = 1;
        while (n > 0) {
            photon_t ph = stack[--n];
            for (;;) {
                double p[3];
                size_t c;
                gexs_material_t mat;
                if (!next_interaction(s, &ph, p, &c, &mat)) {
                    *escaped += ph.e_kev;
                    break;
                }
                memcpy(ph.pos, p, sizeof p);
                transport_step_t st;
                transport_interact(&s->phys, mat, ph.e_kev, ph.dir, &s->rng, &st);
                if (mat != GEXS_GERMANIUM) {
                    s->passive_e += st.edep_kev; /* lost: nothing reads aluminium out */
                } else if (st.edep_kev > 0.0) {
                    int rc = add_point(s, c, p, st.edep_kev, st.process, g, err);
                    if (rc != TUSK_OK)
                        return rc;
                }
                if (st.e_kev > 0.0) {
                    ph.e_kev = st.e_kev;
                    continue;
                }
                if (st.annihilation) {
                    /* At most two photons wait: 511 keV ones never pair, and
                     * the stack starts empty for every gamma. */
                    const double m = COMPTON_MEC2_KEV;
                    stack[n++] = (photon_t){{p[0], p[1], p[2]}, {-st.ann_dir[0], -st.ann_dir[1], -st.ann_dir[2]}, m, g};
                    stack[n++] = (photon_t){{p[0], p[1], p[2]}, {st.ann_dir[0], st.ann_dir[1], st.ann_dir[2]}, m, g};
                }
                break;
            }
        }
    }
    return TUSK_OK;
}

static void fill_truth(sim_t *s, const sim_decay_t *d)
{
    adf_truth_t *t = s->truth;
    t->decay = d->index;
    t->gammas_total = s->stats.gammas;
    t->flags = 0;
    t->n_gammas = (uint16_t)d->n;
    for (unsigned g = 0; g < d->n; g++) {
        t->gamma[g].energy = (float)d->energy[g];
        for (int a = 0; a < 3; a++)
            t->gamma[g].dir[a] = (float)d->dir[g][a];
    }
    size_t n = s->npoints;
    if (n > ADF_TRUTH_MAX_POINTS) {
        n = ADF_TRUTH_MAX_POINTS;
        t->flags |= SIM_TRUTH_TRUNCATED;
        s->stats.truth_truncated++;
    }
    t->n_points = (uint16_t)n;
    for (size_t i = 0; i < n; i++) {
        const point_t *p = &s->points[i];
        adf_truth_point_t *q = &t->point[i];
        q->crystal = (uint16_t)array_place(s->array, p->crystal)->id;
        q->segment = (int16_t)p->segment;
        q->gamma = (uint16_t)p->gamma;
        q->process = (uint16_t)p->process;
        q->energy = (float)p->energy;
        for (int a = 0; a < 3; a++) {
            q->local[a] = (float)p->local[a];
            q->world[a] = (float)p->world[a];
        }
    }
}

/* Read out the crystals over threshold, in array (id) order. */
static int read_out(sim_t *s, double after_ns, size_t *count, tusk_error_t *err)
{
    *count = 0;
    for (size_t c = 0; c < s->ncrystals; c++) {
        if (s->crystal_e[c] <= 0.0 || s->crystal_e[c] < s->trigger_kev)
            continue;
        size_t nd = 0;
        for (size_t i = 0; i < s->npoints; i++) {
            const point_t *p = &s->points[i];
            if (p->crystal != c)
                continue;
            sim_deposit_t *d = &s->deposits[nd++];
            memcpy(d->pos, p->local, sizeof d->pos);
            d->energy = p->energy;
            d->segment = p->segment;
        }
        adf_crystal_t *rec = &s->records[*count];
        int st = sim_response_crystal(s->response, s->deposits, nd, after_ns, &s->rng, rec, err);
        if (st != TUSK_OK) {
            tusk_error_prefix(err, "crystal %u", array_place(s->array, c)->id);
            return st;
        }
        rec->crystal_id = (uint16_t)array_place(s->array, c)->id;
        (*count)++;
    }
    return TUSK_OK;
}

/* One decay, transported: its points, the sums per crystal and per gamma,
 * the statistics. */
static int decay_once(sim_t *s, sim_decay_t *d, double *emitted, double *deposited, double *escaped,
                      tusk_error_t *err)
{
    int st = sim_source_next(s->source, &s->rng, d, err);
    if (st != TUSK_OK)
        return st;
    s->stats.decays++;
    s->stats.gammas += d->n;
    *emitted = 0.0;
    for (unsigned g = 0; g < d->n; g++) {
        *emitted += d->energy[g];
        s->gamma_e[g] = 0.0;
    }
    s->npoints = 0;
    for (size_t c = 0; c < s->ncrystals; c++)
        s->crystal_e[c] = 0.0;
    if ((st = transport(s, d, escaped, err)) != TUSK_OK) {
        tusk_error_prefix(err, "decay %llu", (unsigned long long)d->index);
        return st;
    }
    *deposited = 0.0;
    for (size_t i = 0; i < s->npoints; i++)
        *deposited += s->points[i].energy;
    s->stats.points += s->npoints;
    s->stats.emitted_kev += *emitted;
    s->stats.deposited_kev += *deposited;
    s->stats.escaped_kev += *escaped;
    s->stats.passive_kev += s->passive_e;
    return TUSK_OK;
}

int sim_next_transport(sim_t *s, const sim_gamma_tally_t **tally, size_t *n, tusk_error_t *err)
{
    *tally = NULL;
    *n = 0;
    if (s->events_limit != 0 && s->stats.decays >= s->events_limit)
        return TUSK_OK;
    sim_decay_t d;
    double emitted, deposited, escaped;
    int st = decay_once(s, &d, &emitted, &deposited, &escaped, err);
    if (st != TUSK_OK)
        return st;
    for (unsigned g = 0; g < d.n; g++) {
        s->tally[g].energy_kev = d.energy[g];
        s->tally[g].germanium_kev = s->gamma_e[g];
    }
    *tally = s->tally;
    *n = d.n;
    return TUSK_OK;
}

int sim_next(sim_t *s, const sim_event_t **ev, tusk_error_t *err)
{
    *ev = NULL;
    while (s->events_limit == 0 || s->stats.decays < s->events_limit) {
        sim_decay_t d;
        double emitted, deposited, escaped;
        int st = decay_once(s, &d, &emitted, &deposited, &escaped, err);
        if (st != TUSK_OK)
            return st;
        size_t nread;
        if ((st = read_out(s, d.after_ns, &nread, err)) != TUSK_OK) {
            tusk_error_prefix(err, "decay %llu", (unsigned long long)d.index);
            return st;
        }
        if (nread == 0)
            continue;
        fill_truth(s, &d);
        sim_event_t *e = &s->event;
        e->event = (uint32_t)s->stats.events;
        e->timestamp = d.timestamp;
        e->after_ns = d.after_ns;
        e->decay = d.index;
        e->n_crystals = nread;
        e->crystal = s->records;
        e->truth = s->truth;
        e->emitted_kev = emitted;
        e->deposited_kev = deposited;
        e->escaped_kev = escaped;
        e->passive_kev = s->passive_e;
        s->stats.events++;
        s->stats.crystals += nread;
        *ev = e;
        return TUSK_OK;
    }
    return TUSK_OK;
}

static int writer_failed(const adf_error_t *e, tusk_error_t *err)
{
    return tusk_error_set(err, e->code == ADF_EFULL ? TUSK_ELIMIT : TUSK_EINVAL, "%s", e->message);
}

int sim_encode(const sim_t *s, const sim_event_t *ev, adf_writer_t *w, tusk_error_t *err)
{
    adf_error_t ae;
    for (size_t i = 0; i < ev->n_crystals; i++)
        if (adf_crystal_encode(w, ev->event, ev->timestamp, &ev->crystal[i], &ae) != ADF_OK)
            return writer_failed(&ae, err);
    if (s->truth_on && adf_truth_encode(w, ev->event, ev->timestamp, ev->truth, &ae) != ADF_OK)
        return writer_failed(&ae, err);
    return TUSK_OK;
}

size_t sim_event_bytes_max(const sim_t *s)
{
    size_t crystal = ADF_KEY_SIZE + adf_crystal_payload_size(sim_response_samples(s->response));
    size_t truth = s->truth_on ? ADF_KEY_SIZE + adf_truth_payload_size(ADF_TRUTH_MAX_GAMMAS, ADF_TRUTH_MAX_POINTS)
                               : 0;
    return s->ncrystals * crystal + truth;
}

sim_stats_t sim_stats(const sim_t *s)
{
    return s->stats;
}

const array_t *sim_array(const sim_t *s)
{
    return s->array;
}

unsigned sim_samples(const sim_t *s)
{
    return sim_response_samples(s->response);
}

const char *sim_describe(const sim_t *s)
{
    return s->description;
}
