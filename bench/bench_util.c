/* bench_util.c - what the reconstruction benchmarks share (see
 * bench_util.h). */
#include "bench_util.h"

#include <string.h>
#include <unistd.h>

#include "base/exit.h"
#include "base/parse.h"

bool bench_sizes(void *sizes, const char *prog, const char *text)
{
    bench_sizes_t *s = sizes;
    char buf[512];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "%s: %s: the list is too long\n", prog, s->option);
        return false;
    }
    strcpy(buf, text);
    s->n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned v;
        if (s->n == BENCH_MAX_SIZES || !tusk_cli_unsigned(prog, s->option, tok, s->min, s->max, &v))
            return false;
        s->v[s->n++] = v;
    }
    return s->n > 0;
}

int bench_options(const tusk_cli_t *cli, int argc, char **argv, const tusk_cli_option_t *options,
                  const tusk_cli_option_t *group, bench_opts_t *o, void (*help)(FILE *out))
{
    tusk_cli_option_t opts[2 * TUSK_CLI_MAX_OPTIONS + 8]; /* more than tusk_cli_options takes: it refuses */
    size_t n = 0;
    for (; options[n].name && n < 2 * TUSK_CLI_MAX_OPTIONS; n++)
        opts[n] = options[n];
    if (o) {
        opts[n++] = (tusk_cli_option_t){.name = "device", .kind = TUSK_CLI_LIST, .to = o->device,
                                        .max = BENCH_MAX_DEVICES, .n = &o->devices};
        opts[n++] = (tusk_cli_option_t){.name = "runs", .kind = TUSK_CLI_U64, .to = &o->runs, .min = 1, .max = 100000};
        opts[n++] = (tusk_cli_option_t){.name = "ref-runs", .kind = TUSK_CLI_U64, .to = &o->ref_runs, .max = 100000};
        opts[n++] = (tusk_cli_option_t){.name = "threads", .kind = TUSK_CLI_U64, .to = &o->threads, .max = 1024};
        opts[n++] = (tusk_cli_option_t){.name = "seed", .kind = TUSK_CLI_U64, .to = &o->seed, .max = UINT64_MAX};
        opts[n++] = *group;
        opts[n++] = (tusk_cli_option_t){.name = "bandwidth-mb", .kind = TUSK_CLI_U64, .to = &o->bw_mb, .min = 1,
                                        .max = 65536};
    }
    opts[n] = (tusk_cli_option_t){.name = NULL};
    int rc = tusk_cli_options(cli, argc, argv, opts, NULL, help);
    if (rc == TUSK_CLI_RUN && optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        rc = TUSK_EXIT_USAGE;
    }
    return rc;
}

void bench_header(const char *prog, const bench_opts_t *o, const char *note)
{
    printf("%s: %ld CPUs online, %llu runs a row (%llu of the reference), %sseed %llu\n", prog,
           sysconf(_SC_NPROCESSORS_ONLN), (unsigned long long)o->runs, (unsigned long long)o->ref_runs, note,
           (unsigned long long)o->seed);
}

int bench_bandwidths(const char *prog, const bench_opts_t *o, bench_probe_fn probe, double *bandwidth)
{
    for (unsigned d = 0; d < o->devices; d++) {
        char describe[512];
        tusk_error_t err;
        bandwidth[d] = 0;
        if (probe(o->device[d], (unsigned)o->group, (size_t)o->bw_mb << 20, &bandwidth[d], describe, sizeof describe,
                  &err) != TUSK_OK) {
            fprintf(stderr, "%s: --device %s: %s\n", prog, o->device[d], err.message);
            return TUSK_EXIT_FAIL;
        }
        printf("device %s: memory bandwidth %.0f GB/s (a copy kernel, %llu MB read and written, best of 10)\n",
               describe, bandwidth[d], (unsigned long long)o->bw_mb);
    }
    return TUSK_EXIT_OK;
}

const char *bench_ratio(const tusk_moments_t *ref, double ms, int w, int d, char *buf, size_t cap)
{
    if (ref->n > 0 && ms > 0)
        snprintf(buf, cap, "%*.*fx (a)", w, d, tusk_moments_mean(ref) / ms);
    else
        buf[0] = '\0';
    return buf;
}

void bench_share(double gbs, double bandwidth)
{
    if (bandwidth > 0)
        printf(" = %.1f %% of the %.0f GB/s measured\n", 100.0 * gbs / bandwidth, bandwidth);
    else
        printf("\n");
}
