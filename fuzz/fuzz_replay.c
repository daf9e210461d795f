/* fuzz_replay - run the fuzz targets without libFuzzer.
 *
 *   fuzz_replay [-n MUTATIONS] [-s SEED] [-d DIR] FILE...
 *
 * For every FILE (a corpus file: an ADF file, or any bytes), all the
 * targets run on its whole content and on its prefixes (every length for
 * files up to 1024 bytes, about 1024 evenly spaced lengths beyond), which
 * covers truncation anywhere. The frames found in the files also become
 * inputs of fuzz_decoders (a type selector byte, then the payload), run
 * whole and truncated too. Then MUTATIONS (default 1000) random mutations
 * of randomly chosen inputs - bit flips, byte and word overwrites, inserted
 * and deleted bytes, truncations, duplicated ranges - go through all the
 * targets. The run is deterministic for a given SEED (default 1).
 *
 * -d DIR writes the derived fuzz_decoders inputs into DIR (dec-NNNNN), a
 * seed corpus for the libFuzzer binary.
 *
 * A broken invariant aborts (see fuzz_targets.h); otherwise a one-line
 * summary is printed and the exit status is 0 (2 for usage or I/O errors).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"
#include "base/grow.h"
#include "base/textfile.h"
#include "base/parse.h"

#define PROG "fuzz_replay"
#define PREFIXES_MAX 1024 /* prefix lengths tried per input, about */
#define GROWTH_MAX 4096   /* a mutant is at most this much longer than its input */

typedef struct input {
    uint8_t *data;
    size_t size;
} input_t;

typedef struct pool {
    input_t *items;
    size_t n, cap;
    size_t n_files; /* items[0 .. n_files) are the files */
} pool_t;

typedef struct run {
    uint64_t executions;
    uint64_t prefix_runs;
} run_t;

/* splitmix64 */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        exit(2);
    }
    return p;
}

static void pool_add(pool_t *p, uint8_t *data, size_t size)
{
    if (tusk_grow(&p->items, &p->cap, p->n + 1, sizeof *p->items) != 0) {
        fprintf(stderr, PROG ": out of memory\n");
        exit(2);
    }
    p->items[p->n++] = (input_t){data, size};
}

static void pool_free(pool_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i].data);
    free(p->items);
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
    char *text = NULL;
    tusk_error_t err;
    if (tusk_file_read(path, (size_t)1 << 30, &text, size, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return -1;
    }
    *data = (uint8_t *)text;
    return 0;
}

/* All the targets on one input. */
static void run_all(run_t *run, const uint8_t *data, size_t size)
{
    fuzz_reader_one(data, size);
    fuzz_decoders_one(data, size);
    fuzz_file_one(data, size);
    fuzz_params_one(data, size);
    fuzz_topology_one(data, size);
    fuzz_wire_one(data, size);
    fuzz_cl_cache_one(data, size);
    fuzz_basis_one(data, size);
    fuzz_chain_one(data, size);
    fuzz_zfinder_one(data, size);
    fuzz_sts_one(data, size);
    fuzz_ut_one(data, size);
    fuzz_tpc_one(data, size);
    fuzz_hostlist_one(data, size);
    fuzz_tap_link_one(data, size);
    fuzz_webctl_one(data, size);
    run->executions += 16;
}

/* The whole input and its prefixes. */
static void run_prefixes(run_t *run, const input_t *in)
{
    size_t step = in->size / PREFIXES_MAX + 1;
    for (size_t len = 0; len < in->size; len += step) {
        run_all(run, in->data, len);
        run->prefix_runs++;
    }
    if (in->size > 0 && (in->size - 1) % step != 0) {
        run_all(run, in->data, in->size - 1);
        run->prefix_runs++;
    }
    run_all(run, in->data, in->size);
}

/* The selector byte fuzz_decoders maps to `type`, or -1. */
static int decoder_selector(uint32_t type)
{
    static const uint32_t types[FUZZ_DECODER_TYPES] = FUZZ_DECODER_TYPE_LIST;
    for (int i = 0; i < FUZZ_DECODER_TYPES; i++)
        if (types[i] == type)
            return i;
    return -1;
}

/* Add a fuzz_decoders input for every frame (nested ones included) of a
 * type it knows, read with `readers[depth]`. */
static void derive_decoder_inputs(pool_t *p, adf_reader_t **readers, int depth, const uint8_t *data, size_t size)
{
    adf_reader_t *r = readers[depth];
    adf_reader_reset(r, data, size, 0);
    adf_frame_t f;
    while (adf_reader_next(r, &f) == ADF_OK) {
        int sel = decoder_selector(f.key.type);
        if (sel >= 0) {
            uint8_t *d = xmalloc(1 + (size_t)f.payload_size);
            d[0] = (uint8_t)sel;
            if (f.payload_size)
                memcpy(d + 1, f.payload, f.payload_size);
            pool_add(p, d, 1 + (size_t)f.payload_size);
        }
        if (adf_type_is_composite(f.key.type) && depth + 1 < ADF_WRITER_MAX_DEPTH)
            derive_decoder_inputs(p, readers, depth + 1, f.payload, f.payload_size);
    }
}

static int write_decoder_inputs(const pool_t *p, const char *dir)
{
    for (size_t i = p->n_files; i < p->n; i++) {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/dec-%05zu", dir, i - p->n_files);
        if (n < 0 || (size_t)n >= sizeof path) {
            fprintf(stderr, PROG ": %s: path too long\n", dir);
            return -1;
        }
        FILE *fp = fopen(path, "wb");
        if (!fp || fwrite(p->items[i].data, 1, p->items[i].size, fp) != p->items[i].size) {
            fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
            if (fp)
                fclose(fp);
            return -1;
        }
        if (fclose(fp) != 0) {
            fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* A mutable byte string. */
typedef struct bytes {
    uint8_t *data;
    size_t size, cap;
} bytes_t;

/* Make room at `at` for `n` more bytes (within cap). */
static bool open_gap(bytes_t *b, size_t at, size_t n)
{
    if (b->size + n > b->cap)
        return false;
    memmove(b->data + at + n, b->data + at, b->size - at);
    b->size += n;
    return true;
}

static void mutate_once(bytes_t *b, uint64_t *rng)
{
    static const uint32_t words[] = {0, 1, 19, 20, 21, 24, 40, 44, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000,
                                     0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu, 0xFA010101u, 0xFA010102u,
                                     0xFA010105u, 0xFA001100u, 0xCA010102u, 0xFA0101F0u, 0x314B5354u};
    static const uint8_t special[] = {0x00, 0x01, 0x14, 0x26, 0x7F, 0x80, 0xCA, 0xFA, 0xFE, 0xFF};
    switch (rng_below(rng, 8)) {
    case 0: /* flip a bit */
        if (b->size)
            b->data[rng_below(rng, b->size)] ^= (uint8_t)(1u << rng_below(rng, 8));
        break;
    case 1: /* overwrite a byte */
        if (b->size)
            b->data[rng_below(rng, b->size)] = rng_below(rng, 2)
                                                   ? (uint8_t)rng_next(rng)
                                                   : special[rng_below(rng, sizeof special)];
        break;
    case 2: /* overwrite a little-endian word: lengths, types, magic numbers */
        if (b->size >= 4) {
            size_t at = rng_below(rng, b->size - 3);
            uint32_t v = rng_below(rng, 4) ? words[rng_below(rng, sizeof words / sizeof words[0])]
                                           : (uint32_t)rng_below(rng, b->size + 64);
            for (int k = 0; k < 4; k++)
                b->data[at + (size_t)k] = (uint8_t)(v >> (8 * k));
        }
        break;
    case 3: { /* insert random bytes */
        size_t n = 1 + rng_below(rng, 16), at = rng_below(rng, b->size + 1);
        if (open_gap(b, at, n))
            for (size_t k = 0; k < n; k++)
                b->data[at + k] = (uint8_t)rng_next(rng);
        break;
    }
    case 4: /* delete a range */
        if (b->size) {
            size_t at = rng_below(rng, b->size);
            size_t n = 1 + rng_below(rng, b->size - at < 64 ? b->size - at : 64);
            memmove(b->data + at, b->data + at + n, b->size - at - n);
            b->size -= n;
        }
        break;
    case 5: /* truncate */
        if (b->size)
            b->size = rng_below(rng, b->size);
        break;
    case 6: { /* duplicate a range (a frame, often) somewhere */
        if (!b->size)
            break;
        size_t from = rng_below(rng, b->size);
        size_t n = 1 + rng_below(rng, b->size - from < 256 ? b->size - from : 256);
        size_t at = rng_below(rng, b->size + 1);
        if (!open_gap(b, at, n))
            break;
        /* The source may have moved if it lay at or after the gap. */
        size_t src = from >= at ? from + n : from;
        if (src < at && src + n > at) { /* straddles the gap: copy in two parts */
            size_t first = at - src;
            memmove(b->data + at, b->data + src, first);
            memmove(b->data + at + first, b->data + at + n, n - first);
        } else {
            memmove(b->data + at, b->data + src, n);
        }
        break;
    }
    default: /* swap two bytes */
        if (b->size >= 2) {
            size_t i = rng_below(rng, b->size), j = rng_below(rng, b->size);
            uint8_t t = b->data[i];
            b->data[i] = b->data[j];
            b->data[j] = t;
        }
        break;
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " [-n MUTATIONS] [-s SEED] [-d DIR] FILE...\n");
}

int main(int argc, char **argv)
{
    uint64_t mutations = 1000, seed = 1;
    const char *dec_dir = NULL;
    int c;
    while ((c = getopt(argc, argv, "n:s:d:h")) != -1) {
        switch (c) {
        case 'n':
            if (tusk_parse_u64x(optarg, 0, UINT64_MAX, &mutations) != 0) {
                fprintf(stderr, PROG ": -n: not a number: %s\n", optarg);
                return 2;
            }
            break;
        case 's':
            if (tusk_parse_u64x(optarg, 0, UINT64_MAX, &seed) != 0) {
                fprintf(stderr, PROG ": -s: not a number: %s\n", optarg);
                return 2;
            }
            break;
        case 'd': dec_dir = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }

    pool_t pool = {0};
    uint64_t file_bytes = 0;
    for (int i = optind; i < argc; i++) {
        uint8_t *data;
        size_t size;
        if (read_file(argv[i], &data, &size) != 0) {
            pool_free(&pool);
            return 2;
        }
        pool_add(&pool, data, size);
        file_bytes += size;
    }
    pool.n_files = pool.n;

    adf_reader_t *readers[ADF_WRITER_MAX_DEPTH];
    for (int d = 0; d < ADF_WRITER_MAX_DEPTH; d++)
        if (!(readers[d] = adf_reader_new(ADF_ON_ERROR_STOP))) {
            fprintf(stderr, PROG ": out of memory\n");
            return 2;
        }
    for (size_t i = 0; i < pool.n_files; i++)
        derive_decoder_inputs(&pool, readers, 0, pool.items[i].data, pool.items[i].size);
    for (int d = 0; d < ADF_WRITER_MAX_DEPTH; d++)
        adf_reader_destroy(&readers[d]);
    if (dec_dir && write_decoder_inputs(&pool, dec_dir) != 0) {
        pool_free(&pool);
        return 2;
    }

    run_t run = {0};
    /* The files, whole and cut short anywhere. */
    for (size_t i = 0; i < pool.n_files; i++)
        run_prefixes(&run, &pool.items[i]);
    /* The frames of the files as decoder inputs, whole and cut short. */
    for (size_t i = pool.n_files; i < pool.n; i++) {
        const input_t *in = &pool.items[i];
        size_t step = in->size / PREFIXES_MAX + 1;
        for (size_t len = 1; len <= in->size; len += step) {
            fuzz_decoders_one(in->data, len);
            run.executions++;
        }
        fuzz_decoders_one(in->data, in->size);
        run.executions++;
    }

    /* Seeded mutations of randomly chosen inputs. */
    uint64_t rng = seed;
    size_t max_size = 0;
    for (size_t i = 0; i < pool.n; i++)
        max_size = pool.items[i].size > max_size ? pool.items[i].size : max_size;
    bytes_t b = {.data = xmalloc(max_size + GROWTH_MAX), .cap = max_size + GROWTH_MAX};
    for (uint64_t m = 0; m < mutations; m++) {
        const input_t *in = &pool.items[rng_below(&rng, pool.n)];
        memcpy(b.data, in->data, in->size);
        b.size = in->size;
        size_t ops = 1 + rng_below(&rng, 4);
        for (size_t k = 0; k < ops; k++)
            mutate_once(&b, &rng);
        /* Exact-size copy: the targets copy again, but this keeps reads
         * past the end visible even if one forgot to. */
        uint8_t *exact = xmalloc(b.size);
        if (b.size)
            memcpy(exact, b.data, b.size);
        run_all(&run, exact, b.size);
        free(exact);
    }
    free(b.data);

    printf(PROG ": %zu inputs (%" PRIu64 " bytes) + %zu decoder inputs from their frames, %" PRIu64
           " prefix runs, %" PRIu64 " mutations (seed %" PRIu64 "): %" PRIu64 " executions, all invariants held\n",
           pool.n_files, file_bytes, pool.n - pool.n_files, run.prefix_runs, mutations, seed, run.executions);
    pool_free(&pool);
    return 0;
}
