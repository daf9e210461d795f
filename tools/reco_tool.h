/* reco_tool.h - the sim, qa and plot commands of the reconstruction
 * systems' tools (tusk-zfinder, tusk-sts, tusk-ut, tusk-tpc), written once.
 *
 * Internal to the tools (tools/libreco_tool.la): it reads and writes ADF
 * files and drives the physics libraries' quality analyses, which the
 * command-line scaffolding of base/cli.h, below the format layer, cannot.
 * A tool says what is its own - its simulation's options and steps
 * (reco_sim_t), its quality analysis (reco_qa_t, adapted from the
 * library's X_qa_* functions by RECO_QA_ADAPT) - and these do the rest:
 * the options (base/cli.h tables, --set KEY=VALUE into parameters), the
 * parameter keys, [LABEL=]FILE arguments, files read and written frame by
 * frame, the messages and the exit statuses (base/exit.h):
 *
 *   PROG sim [OPTIONS] [--seed S] [--set KEY=VALUE]... -o OUT.adf [-q]
 *   PROG qa [--set KEY=VALUE]... [OPTIONS] [--out DIR] [LABEL=]FILE...
 *   PROG plot FILE [--set KEY=VALUE]... [OPTIONS] [--out DIR] [--format png|svg]
 *
 * qa prints the quality table of each file (one analysis a file, labelled
 * LABEL or the file's name) and with --out writes DIR/LABEL/'s CSV files;
 * plot writes the picture of one file into --out (.). Exit statuses: 0
 * fine, 1 a file, the data or gnuplot failed, 2 bad usage or settings. */
#ifndef TUSK_TOOLS_RECO_TOOL_H
#define TUSK_TOOLS_RECO_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adf/adf_frames.h"
#include "base/cli.h"
#include "tusk/adf.h"
#include "tusk/params.h"

/* A simulation: what `PROG sim` writes. ctx is the tool's own. */
typedef struct reco_sim {
    /* The simulation's options (TUSK_CLI_PARAM entries, ended by a NULL
     * name); --seed S (parameter seed), --set, -o/--output and -q/--quiet
     * follow them. */
    const tusk_cli_option_t *options;
    const char *const *(*keys)(void); /* the parameter keys it takes */
    const char *items;                /* what it makes, named as its parameter: "rois", "events" */
    /* The settings from params: the number of items to make. */
    int (*configure)(void *ctx, const tusk_params_t *params, uint64_t *items, tusk_error_t *err);
    int (*start)(void *ctx, tusk_error_t *err); /* make the simulation */
    /* Item i: made, counted; written as *parts buffers of frames. */
    int (*make)(void *ctx, uint64_t i, size_t *parts, tusk_error_t *err);
    size_t (*bytes)(void *ctx, size_t part); /* a part's bytes */
    int (*encode)(void *ctx, size_t part, adf_writer_t *w, tusk_error_t *err);
    void (*summary)(void *ctx, const char *prog); /* its line on stderr, after the file (not with -q) */
    bool zf_names; /* tusk-zfinder's message form for keys: "PROG: sim: ..." */
} reco_sim_t;

/* `PROG sim`: argv[0] "PROG sim" (base/cli.h); returns the exit status. */
int reco_sim(const tusk_cli_t *cli, int argc, char **argv, const reco_sim_t *sim, void *ctx);

/* A quality analysis: the library's X_qa_* through void pointers (made by
 * RECO_QA_ADAPT), and how the tool shows it. */
typedef struct reco_qa {
    int (*make)(void **qa, const void *cfg, tusk_error_t *err);
    int (*feed)(void *qa, const void *buf, size_t size, uint64_t base, tusk_error_t *err);
    int (*finish)(void *qa, tusk_error_t *err);
    void (*print)(const void *qa, FILE *out);
    int (*write)(const void *qa, const char *dir, bool plot, const char *format, tusk_error_t *err);
    void (*destroy)(void **qa);
    const char *const *(*keys)(void);                                      /* the algorithm's keys */
    int (*read)(void *cfg, const tusk_params_t *params, tusk_error_t *err); /* them into the config */
    /* Why a finished analysis has nothing to show ("no module with ..."),
     * or NULL; may be NULL. */
    const char *(*nothing)(const void *qa);
    const char *picture; /* plot's picture, OUT/PICTURE.FORMAT */
    bool header_once;    /* qa: the table's first line for the first file only */
    /* tusk-zfinder's message forms: "PROG: CMD: " before a key's
     * complaint, "PROG CMD: " before a file's (the others: "PROG CMD: "
     * and "PROG: "). */
    bool zf_names;
} reco_qa_t;

/* `PROG qa` and `PROG plot`: cfg is the analysis's configuration (the
 * library's defaults; OPTIONS may change it), label its label (cap
 * bytes); options the tool's own OPTIONS (ended by a NULL name, may be
 * NULL). Return the exit status. */
int reco_qa(const tusk_cli_t *cli, int argc, char **argv, const reco_qa_t *qa, void *cfg, char *label, size_t cap,
            const tusk_cli_option_t *options);
int reco_plot(const tusk_cli_t *cli, int argc, char **argv, const reco_qa_t *qa, void *cfg, char *label,
              size_t cap, const tusk_cli_option_t *options);

/* Each frame of the ADF file at path to fn, in order; the exit status,
 * after "PROG: message" on stderr when the file cannot be read or fn
 * fails ("PROG: PATH: message"). */
int reco_each_frame(const char *prog, const char *path, adf_frames_read_fn fn, void *ctx);

/* The reco_qa_t functions of library X (X_qa_t, X_qa_config_t with its
 * `alg`, X_config_read, X_config_keys): static functions reco_X_*; then
 * RECO_QA_OPS(X) for a reco_qa_t's first members. */
#define RECO_QA_ADAPT(x)                                                                                               \
    static int reco_##x##_make(void **qa, const void *cfg, tusk_error_t *err)                                        \
    {                                                                                                                  \
        x##_qa_t *q = NULL;                                                                                            \
        int st = x##_qa_new(&q, cfg, err);                                                                             \
        *qa = q;                                                                                                       \
        return st;                                                                                                     \
    }                                                                                                                  \
    static int reco_##x##_feed(void *qa, const void *buf, size_t size, uint64_t base, tusk_error_t *err)           \
    {                                                                                                                  \
        return x##_qa_feed(qa, buf, size, base, err);                                                                  \
    }                                                                                                                  \
    static int reco_##x##_finish(void *qa, tusk_error_t *err)                                                        \
    {                                                                                                                  \
        return x##_qa_finish(qa, err);                                                                                 \
    }                                                                                                                  \
    static void reco_##x##_print(const void *qa, FILE *out)                                                          \
    {                                                                                                                  \
        x##_qa_print(qa, out);                                                                                         \
    }                                                                                                                  \
    static int reco_##x##_write(const void *qa, const char *dir, bool plot, const char *format, tusk_error_t *err)  \
    {                                                                                                                  \
        return x##_qa_write(qa, dir, plot, format, err);                                                               \
    }                                                                                                                  \
    static void reco_##x##_destroy(void **qa)                                                                        \
    {                                                                                                                  \
        x##_qa_t *q = *qa;                                                                                             \
        x##_qa_destroy(&q);                                                                                            \
        *qa = NULL;                                                                                                    \
    }                                                                                                                  \
    static int reco_##x##_read(void *cfg, const tusk_params_t *params, tusk_error_t *err)                           \
    {                                                                                                                  \
        return x##_config_read(&((x##_qa_config_t *)cfg)->alg, params, err);                                          \
    }
#define RECO_QA_OPS(x)                                                                                                 \
    .make = reco_##x##_make, .feed = reco_##x##_feed, .finish = reco_##x##_finish, .print = reco_##x##_print,         \
    .write = reco_##x##_write, .destroy = reco_##x##_destroy, .keys = x##_config_keys, .read = reco_##x##_read

#endif
