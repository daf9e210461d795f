/* fuzz_targets.h - the fuzz targets of tusk's parsers, callable without libFuzzer.
 *
 * Each target file (fuzz_reader.c, fuzz_decoders.c, fuzz_file.c) defines
 * one entry below. Built with -DFUZZ_LIBFUZZER (make fuzz) it also defines
 * LLVMFuzzerTestOneInput calling that entry; otherwise fuzz_replay.c links
 * all three and drives them over a corpus and seeded mutations of it.
 *
 * A target returns 0 for every input. A broken invariant is a bug: the
 * target prints what broke and calls abort(), which libFuzzer reports as a
 * crash and fuzz_replay turns into a failing test.
 */
#ifndef TUSK_FUZZ_TARGETS_H
#define TUSK_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Buffer reader, both error policies, composite frames descended into. */
int fuzz_reader_one(const uint8_t *data, size_t size);

/* data[0] picks a frame type, data[1..] is its payload: decode, re-encode,
 * compare byte for byte. */
int fuzz_decoders_one(const uint8_t *data, size_t size);

/* File reader with a small window against the buffer reader. */
int fuzz_file_one(const uint8_t *data, size_t size);

/* libtusk's parsers: parameters.conf text and topology XML. */
int fuzz_params_one(const uint8_t *data, size_t size);
int fuzz_topology_one(const uint8_t *data, size_t size);

/* What other processes send in a distributed run: data headers, control
 * messages (data[0] picks which). */
int fuzz_wire_one(const uint8_t *data, size_t size);

/* libtusk-cl's program-binary cache files (data[0] picks parse or round
 * trip). */
int fuzz_cl_cache_one(const uint8_t *data, size_t size);

/* libtusk-detector's signal-basis files (psa/BASIS.md). */
int fuzz_basis_one(const uint8_t *data, size_t size);

/* The buffers of the chain's later stages: event builder, tracker,
 * spectra. */
int fuzz_chain_one(const uint8_t *data, size_t size);

/* The buffers the z-finder's stages read: the filter (frames in, the
 * reference, frames out) and the quality analysis. */
int fuzz_zfinder_one(const uint8_t *data, size_t size);

/* The buffers the STS reconstruction's stages read: the filter (frames
 * in, both CPU backends, frames out) and the quality analysis. */
int fuzz_sts_one(const uint8_t *data, size_t size);

/* The buffers the UT tracking's stages read: the filter (frames in, both
 * CPU backends, frames out) and the quality analysis. */
int fuzz_ut_one(const uint8_t *data, size_t size);

/* The buffers the TPC slice tracker's stages read: the filter (frames in,
 * the reference and fast backends, frames out) and the quality analysis. */
int fuzz_tpc_one(const uint8_t *data, size_t size);

/* Slurm's compact host lists (SLURM_JOB_NODELIST): expanded names are
 * names, and the expansion joined with commas expands to itself. */
int fuzz_hostlist_one(const uint8_t *data, size_t size);

/* What an operator types: the link a sampling tap is put on (tusk-run
 * --tap/--untap) and tusk-run --web's argument; data[0] picks buffer
 * sizes (and tap or untap). */
int fuzz_tap_link_one(const uint8_t *data, size_t size);
int fuzz_webctl_one(const uint8_t *data, size_t size);

/* The frame types fuzz_decoders knows, in the order data[0] % FUZZ_DECODER_TYPES
 * selects them (fuzz_replay writes decoder seeds with these selectors). */
#define FUZZ_DECODER_TYPES 21
#define FUZZ_DECODER_TYPE_LIST                                                    \
    {                                                                             \
        0xFA010101u /* data:crystal */, 0xFA010102u /* data:psa */,               \
            0xFA010105u /* data:tracked */, 0xFA001100u /* meta:eof */,           \
            0xCA010102u /* event:data:psa */, 0xFA0101F0u /* data:truth */,       \
            0xFA200101u /* data:id_spacepoints */, 0xFA200102u /* data:zvertex */, \
            0xFA2001F0u /* data:id_truth */, 0xFA210101u /* data:sts_digis */,      \
            0xFA210102u /* data:sts_clusters */, 0xFA210103u /* data:sts_hits */,  \
            0xFA2101F0u /* data:sts_truth */, 0xFA230101u /* data:tpc_clusters */, \
            0xFA230102u /* data:tpc_tracks */, 0xFA2301F0u /* data:tpc_truth */,   \
            0xFA220101u /* data:ut_raw */, 0xFA220102u /* data:velo_tracks */,     \
            0xFA220103u /* data:ut_tracks */, 0xFA220104u /* data:ut_hits */,      \
            0xFA2201F0u /* data:ut_truth */                                       \
    }

/* Inputs that are a selector byte, then text: data[0] (0 for no input)
 * into *sel, the rest as a NUL-terminated copy (to free; a NUL inside
 * ends the text there). */
static inline char *fuzz_selector_text(const uint8_t *data, size_t size, uint8_t *sel)
{
    *sel = size ? data[0] : 0;
    size_t n = size ? size - 1 : 0;
    char *text = (char *)malloc(n + 1);
    if (!text) {
        fprintf(stderr, "fuzz: out of memory\n");
        abort();
    }
    if (n)
        memcpy(text, data + 1, n);
    text[n] = '\0';
    return text;
}

/* Abort with a message when `cond` is false. */
#define FUZZ_CHECK(cond)                                                          \
    do {                                                                          \
        if (!(cond))                                                              \
            fuzz_fail(__FILE__, __LINE__, #cond);                                 \
    } while (0)

static inline _Noreturn void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n", file, line, what);
    fflush(stderr);
    abort();
}

#endif
