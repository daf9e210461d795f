/* reco_tool.c - the reconstruction tools' sim, qa and plot commands (see
 * reco_tool.h). */
#include "tools/reco_tool.h"

#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "base/grow.h"
#include "tusk/adf.h"

int reco_each_frame(const char *prog, const char *path, adf_frames_read_fn fn, void *ctx)
{
    adf_error_t aerr;
    adf_file_reader_t *r = adf_file_reader_open(path, NULL, &aerr);
    if (!r) {
        fprintf(stderr, "%s: %s\n", prog, aerr.message);
        return TUSK_EXIT_FAIL;
    }
    adf_frame_t f;
    int rc;
    tusk_error_t err;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK)
        if (fn(ctx, &f, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
            adf_file_reader_destroy(&r);
            return TUSK_EXIT_FAIL;
        }
    if (rc != ADF_END) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, adf_file_reader_error(r)->message);
        adf_file_reader_destroy(&r);
        return TUSK_EXIT_FAIL;
    }
    adf_file_reader_destroy(&r);
    return TUSK_EXIT_OK;
}

/* The prefix of a parameter key's complaint: "PROG CMD", or tusk-zfinder's
 * "PROG: CMD". */
static const char *keys_prog(const tusk_cli_t *cli, const char *argv0, bool zf_names, char *buf, size_t cap)
{
    if (!zf_names)
        return argv0;
    snprintf(buf, cap, "%s: %s", cli->prog, argv0 + strlen(cli->prog) + (argv0[strlen(cli->prog)] == ' '));
    return buf;
}

/* ---- sim ------------------------------------------------------------------------------ */

/* The items, made and written into out. */
static int simulate(const char *prog, const reco_sim_t *s, void *ctx, uint64_t items, const char *out)
{
    tusk_error_t err;
    adf_error_t aerr;
    adf_writer_t *w = NULL;
    adf_file_writer_t *fw = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = TUSK_EXIT_FAIL;
    if (s->start(ctx, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return TUSK_EXIT_FAIL;
    }
    if (!(w = adf_writer_new())) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return TUSK_EXIT_FAIL;
    }
    if (!(fw = adf_file_writer_open(out, &aerr))) {
        fprintf(stderr, "%s: %s\n", prog, aerr.message);
        goto done;
    }
    for (uint64_t i = 0; i < items; i++) {
        size_t parts;
        if (s->make(ctx, i, &parts, &err) != TUSK_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            goto done;
        }
        for (size_t k = 0; k < parts; k++) {
            if (tusk_grow(&buf, &cap, s->bytes(ctx, k), 1) != 0) {
                fprintf(stderr, "%s: out of memory\n", prog);
                goto done;
            }
            adf_writer_reset(w, buf, cap);
            if (s->encode(ctx, k, w, &err) != TUSK_OK) {
                fprintf(stderr, "%s: %s\n", prog, err.message);
                goto done;
            }
            if (adf_file_writer_write(fw, buf, adf_writer_used(w), &aerr) != ADF_OK) {
                fprintf(stderr, "%s: %s\n", prog, aerr.message);
                goto done;
            }
        }
    }
    if (adf_file_writer_close(&fw, &aerr) != ADF_OK) {
        fprintf(stderr, "%s: %s\n", prog, aerr.message);
        goto done;
    }
    rc = TUSK_EXIT_OK;
done:
    if (fw)
        adf_file_writer_close(&fw, &aerr);
    free(buf);
    adf_writer_destroy(&w);
    return rc;
}

int reco_sim(const tusk_cli_t *cli, int argc, char **argv, const reco_sim_t *s, void *ctx)
{
    tusk_params_t *p = tusk_params_new();
    const char *out = NULL;
    bool quiet = false;
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", cli->prog);
        return TUSK_EXIT_FAIL;
    }
    tusk_cli_option_t opts[2 * TUSK_CLI_MAX_OPTIONS + 8]; /* more than tusk_cli_options takes: it refuses */
    size_t n = 0;
    for (const tusk_cli_option_t *o = s->options; o && o->name && n < 2 * TUSK_CLI_MAX_OPTIONS; o++)
        opts[n++] = *o;
    opts[n++] = (tusk_cli_option_t){.name = "seed", .kind = TUSK_CLI_PARAM, .key = "seed", .max = UINT64_MAX};
    opts[n++] = (tusk_cli_option_t){.name = "set", .kind = TUSK_CLI_SET};
    opts[n++] = (tusk_cli_option_t){.name = "output", .letter = 'o', .kind = TUSK_CLI_TEXT, .to = &out};
    opts[n++] = (tusk_cli_option_t){.name = "quiet", .letter = 'q', .kind = TUSK_CLI_TRUE, .to = &quiet};
    opts[n] = (tusk_cli_option_t){.name = NULL};
    int rc = tusk_cli_options(cli, argc, argv, opts, p, NULL);
    char kp[160];
    uint64_t items = 0;
    tusk_error_t err;
    if (rc != TUSK_CLI_RUN)
        goto done;
    rc = TUSK_EXIT_USAGE;
    if (!out || optind != argc) {
        fprintf(stderr, "%s: %s\n", argv[0], !out ? "-o OUT.adf is required" : "unexpected arguments");
        goto done;
    }
    if (!tusk_cli_keys(keys_prog(cli, argv[0], s->zf_names, kp, sizeof kp), p, s->keys()))
        goto done;
    if (s->configure(ctx, p, &items, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        goto done;
    }
    if (items == 0) {
        fprintf(stderr, "%s: %s must be at least 1\n", argv[0], s->items);
        goto done;
    }
    rc = simulate(argv[0], s, ctx, items, out);
    if (rc == TUSK_EXIT_OK && !quiet)
        s->summary(ctx, argv[0]);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- qa and plot ---------------------------------------------------------------------- */

typedef struct command {
    const tusk_cli_t *cli;
    const char *cmd;   /* argv[0], "PROG CMD" */
    const char *fprog; /* before a file's complaints */
    const reco_qa_t *qa;
    void *cfg;
    char *label;
    size_t cap;
    tusk_params_t *params;
    const char *out;
    int format; /* plot: 0 png, 1 svg */
} command_t;

/* The options (--set, the tool's, --out and for plot --format), the
 * parameter keys and the configuration: TUSK_CLI_RUN or the exit status. */
static int begin(command_t *c, int argc, char **argv, const tusk_cli_option_t *options, bool plot)
{
    tusk_cli_option_t opts[2 * TUSK_CLI_MAX_OPTIONS + 8]; /* more than tusk_cli_options takes: it refuses */
    size_t n = 0;
    opts[n++] = (tusk_cli_option_t){.name = "set", .kind = TUSK_CLI_SET};
    for (const tusk_cli_option_t *o = options; o && o->name && n < 2 * TUSK_CLI_MAX_OPTIONS; o++)
        opts[n++] = *o;
    opts[n++] = (tusk_cli_option_t){.name = "out", .kind = TUSK_CLI_TEXT, .to = &c->out};
    if (plot)
        opts[n++] = (tusk_cli_option_t){.name = "format", .kind = TUSK_CLI_CHOICE, .to = &c->format, .key = "png|svg"};
    opts[n] = (tusk_cli_option_t){.name = NULL};
    c->cmd = argv[0];
    c->fprog = c->qa->zf_names ? argv[0] : c->cli->prog;
    int rc = tusk_cli_options(c->cli, argc, argv, opts, c->params, NULL);
    if (rc != TUSK_CLI_RUN)
        return rc;
    if (plot ? optind + 1 != argc : optind == argc) {
        fprintf(stderr, "%s: %s\n", argv[0], plot ? "one FILE expected" : "no file");
        return TUSK_EXIT_USAGE;
    }
    char kp[160];
    tusk_error_t err;
    if (!tusk_cli_keys(keys_prog(c->cli, argv[0], c->qa->zf_names, kp, sizeof kp), c->params, c->qa->keys()))
        return TUSK_EXIT_USAGE;
    if (c->qa->read(c->cfg, c->params, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], err.message);
        return TUSK_EXIT_USAGE;
    }
    return TUSK_CLI_RUN;
}

typedef struct feeding {
    const reco_qa_t *ops;
    void *qa;
} feeding_t;

/* A frame's bytes as a buffer of its own (the key lies just before the
 * payload) into the analysis. */
static int feed(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    const feeding_t *to = ctx;
    return to->ops->feed(to->qa, f->payload - ADF_KEY_SIZE, f->key.length, f->offset, err);
}

/* A new analysis of the file of argument arg (its label set): *qa, or the
 * exit status. */
static int analyse(const command_t *c, const char *arg, void **qa)
{
    const char *path;
    tusk_error_t err;
    *qa = NULL;
    if (!tusk_cli_label(c->fprog, arg, c->label, c->cap, &path))
        return TUSK_EXIT_USAGE;
    if (c->qa->make(qa, c->cfg, &err) != TUSK_OK) {
        fprintf(stderr, "%s: %s\n", c->cmd, err.message);
        return TUSK_EXIT_FAIL;
    }
    feeding_t to = {c->qa, *qa};
    if (reco_each_frame(c->cli->prog, path, feed, &to) != TUSK_EXIT_OK)
        return TUSK_EXIT_FAIL;
    const char *why = NULL;
    if (c->qa->finish(*qa, &err) != TUSK_OK)
        why = err.message;
    else if (c->qa->nothing)
        why = c->qa->nothing(*qa);
    if (why) {
        fprintf(stderr, "%s: %s: %s\n", c->fprog, path, why);
        return TUSK_EXIT_FAIL;
    }
    return TUSK_EXIT_OK;
}

/* The table, whole or (later files with header_once) without its first line. */
static void print_table(const command_t *c, const void *qa, bool first)
{
    if (first || !c->qa->header_once) {
        c->qa->print(qa, stdout);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        c->qa->print(qa, mem);
        fclose(mem);
        const char *nl = strchr(text, '\n');
        fputs(nl ? nl + 1 : text, stdout);
        free(text);
    }
}

/* The analysis's files (a picture with plot) into dir: the exit status. */
static int write_files(const command_t *c, const void *qa, const char *dir, bool plot, const char *format)
{
    tusk_error_t err;
    if (c->qa->write(qa, dir, plot, format, &err) == TUSK_OK)
        return TUSK_EXIT_OK;
    fprintf(stderr, "%s: %s\n", c->cmd, err.message);
    return TUSK_EXIT_FAIL;
}

int reco_qa(const tusk_cli_t *cli, int argc, char **argv, const reco_qa_t *qa, void *cfg, char *label, size_t cap,
            const tusk_cli_option_t *options)
{
    command_t c = {cli, NULL, NULL, qa, cfg, label, cap, tusk_params_new(), NULL, 0};
    if (!c.params) {
        fprintf(stderr, "%s: out of memory\n", cli->prog);
        return TUSK_EXIT_FAIL;
    }
    int rc = begin(&c, argc, argv, options, false);
    if (rc == TUSK_CLI_RUN) {
        rc = TUSK_EXIT_OK;
        for (int i = optind; i < argc && rc == TUSK_EXIT_OK; i++) {
            void *q;
            rc = analyse(&c, argv[i], &q);
            if (rc == TUSK_EXIT_OK)
                print_table(&c, q, i == optind);
            if (rc == TUSK_EXIT_OK && c.out) {
                char dir[1200];
                snprintf(dir, sizeof dir, "%s/%s", c.out, label);
                rc = write_files(&c, q, dir, false, "png");
            }
            if (q)
                qa->destroy(&q);
        }
    }
    tusk_params_destroy(&c.params);
    return rc;
}

int reco_plot(const tusk_cli_t *cli, int argc, char **argv, const reco_qa_t *qa, void *cfg, char *label,
              size_t cap, const tusk_cli_option_t *options)
{
    command_t c = {cli, NULL, NULL, qa, cfg, label, cap, tusk_params_new(), ".", 0};
    if (!c.params) {
        fprintf(stderr, "%s: out of memory\n", cli->prog);
        return TUSK_EXIT_FAIL;
    }
    int rc = begin(&c, argc, argv, options, true);
    if (rc == TUSK_CLI_RUN) {
        const char *format = c.format ? "svg" : "png";
        void *q;
        rc = analyse(&c, argv[optind], &q);
        if (rc == TUSK_EXIT_OK)
            rc = write_files(&c, q, c.out, true, format);
        if (rc == TUSK_EXIT_OK)
            printf("%s/%s.%s\n", c.out, qa->picture, format);
        if (q)
            qa->destroy(&q);
    }
    tusk_params_destroy(&c.params);
    return rc;
}
