/* tusk-cl - the OpenCL devices tusk sees, and whether they compute right.
 *
 *   tusk-cl list                    every device of every platform, and the
 *                                   one the default selection picks
 *   tusk-cl which SELECTION         the device a selection string picks
 *   tusk-cl selftest [options]      run the self-test kernels on a device and
 *                                   compare with the CPU
 *
 * Exit statuses: 0 fine, 1 no device, an OpenCL error or a failed
 * self-test, 2 usage.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/cl.h"

#define PROG "tusk-cl"

#define DEFAULT_SIGNALS 100000

#define NO_DEVICE_HINT "no OpenCL platform/device found (is an ICD installed? Debian: apt-get install pocl-opencl-icd)"

static void help(FILE *out)
{
    fprintf(out,
            "  list                       with each device's limits and extensions, and\n"
            "                             the device the default selection picks; exit 1\n"
            "                             when there is none\n"
            "  which [--instance K] SELECTION\n"
            "                             K stands in for :instance (default 0); exit 1\n"
            "                             when none matches\n"
            "  selftest [--device SEL] [--signals N] [--seed S] [--repeat R] [--no-cache]\n"
            "                             run a grid search (chi-square against basis\n"
            "                             signals in local memory, histogram with atomics)\n"
            "                             and a 64-bit checksum on the device and on the\n"
            "                             CPU, R times (default 1) on N random signals\n"
            "                             (default %d) from seed S (default: from the\n"
            "                             clock, printed; run i uses S+i); exit 1 when a\n"
            "                             run fails; --no-cache skips the binary cache\n"
            "\n"
            "a selection string is one of\n"
            "  any          the first GPU, else the first device of any type (default)\n"
            "  gpu  cpu  accelerator\n"
            "               the first device of that type\n"
            "  N            device N of the host's list (the index " PROG " list shows)\n"
            "  P.D          device D of platform P\n"
            "  TEXT         the first device whose name, vendor or platform name\n"
            "               contains TEXT, ignoring case (\"H100\", \"pthread\", \"nvidia\")\n"
            "and any form but N and P.D takes a suffix\n"
            "  :K           the K-th (0-based) matching device instead of the first\n"
            "               (\"gpu:1\", the second GPU of the host)\n"
            "  :instance    the (instance mod count)-th matching device, so that the\n"
            "               instances of a load-shared actor spread over the GPUs\n"
            "\n"
            "environment:\n"
            "  TUSK_CL_DEVICE      the selection when none is given (default any)\n"
            "  TUSK_CL_CACHE_DIR   the program-binary cache folder (default\n"
            "                      $XDG_CACHE_HOME/tusk, else $HOME/.cache/tusk)\n"
            "  TUSK_CL_CACHE=off   no program-binary cache\n"
            "\n"
            "Exit status: 0 fine, 1 no device, an OpenCL error or a failed self-test,\n"
            "2 bad usage.\n",
            DEFAULT_SIGNALS);
}

/* "1.5 GiB", "64 KiB", "512 bytes". */
static const char *human_bytes(cl_ulong bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    /* Whole numbers (the usual limits) without a decimal. */
    if (v == (double)(unsigned long long)v)
        snprintf(buf, cap, "%.0f %s", v, units[u]);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

/* Space-separated words after a label, wrapped under the value column. */
#define LABEL_WIDTH 24
#define LINE_WIDTH 79

static void print_words(const char *label, const char *text)
{
    printf("  %-*s", LABEL_WIDTH - 2, label);
    int col = LABEL_WIDTH, words = 0;
    const char *p = text ? text : "";
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        int len = (int)strcspn(p, " ");
        if (words > 0 && col + 1 + len > LINE_WIDTH) {
            printf("\n%*s", LABEL_WIDTH, "");
            col = LABEL_WIDTH;
        } else if (words > 0) {
            putchar(' ');
            col++;
        }
        printf("%.*s", len, p);
        col += len;
        words++;
        p += len;
    }
    printf("%s\n", words ? "" : "(none)");
}

/* "2 (1.0) GPU NVIDIA H100 (NVIDIA CUDA, driver 550.54)": one line naming
 * a device by both of its indices. */
static void print_device_line(const tusk_cl_device_info_t *d)
{
    printf("%zu (%u.%u) %s %s (%s, driver %s)\n", d->index, d->platform_index, d->device_index,
           tusk_cl_device_type_name(d->type), d->name, d->platform_name, d->driver_version);
}

static void print_device(const tusk_cl_device_info_t *d)
{
    char b[64];
    printf("device %zu (%u.%u): %s %s\n", d->index, d->platform_index, d->device_index,
           tusk_cl_device_type_name(d->type), d->name);
    printf("  %-*s%s, %s\n", LABEL_WIDTH - 2, "platform", d->platform_name, d->platform_version);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "vendor", d->vendor);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "driver version", d->driver_version);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "device version", d->version);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "OpenCL C version", d->c_version);
    printf("  %-*s%s, compiler %s\n", LABEL_WIDTH - 2, "available", yes_no(d->available),
           yes_no(d->compiler_available));
    printf("  %-*s%u\n", LABEL_WIDTH - 2, "compute units", (unsigned)d->compute_units);
    printf("  %-*s%u MHz\n", LABEL_WIDTH - 2, "max clock", (unsigned)d->max_clock_mhz);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "global memory", human_bytes(d->global_mem, b, sizeof b));
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "local memory", human_bytes(d->local_mem, b, sizeof b));
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "max allocation", human_bytes(d->max_alloc, b, sizeof b));
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "max constant buffer", human_bytes(d->max_constant, b, sizeof b));
    printf("  %-*s%zu\n", LABEL_WIDTH - 2, "max work-group size", d->max_work_group_size);
    printf("  %-*s%u\n", LABEL_WIDTH - 2, "address bits", (unsigned)d->address_bits);
    printf("  %-*s%zu ns\n", LABEL_WIDTH - 2, "timer resolution", d->timer_resolution_ns);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "unified memory", yes_no(d->unified_memory));
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "fp64", yes_no(d->fp64));
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "int64 atomics", yes_no(d->int64_atomics));
    print_words("extensions", d->extensions);
}

/* Resolve `text` against `devs`: TUSK_EINVAL for malformed text,
 * TUSK_ENODEV when nothing matches (err lists the devices). */
static int resolve(const tusk_cl_devices_t *devs, const char *text, unsigned instance, size_t *chosen,
                   tusk_error_t *err)
{
    tusk_cl_spec_t spec;
    int rc = tusk_cl_spec_parse(text, &spec, err);
    if (rc != TUSK_OK)
        return rc;
    return tusk_cl_select(devs, &spec, instance, chosen, err);
}

static int cmd_list(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{NULL, 0, NULL, 0}};
    if (tusk_cli_getopt(cli, argc, argv, "", longopts, NULL) != -1)
        return TUSK_EXIT_USAGE;
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    tusk_error_t err;
    tusk_error_clear(&err);
    tusk_cl_devices_t *devs = NULL;
    if (tusk_cl_devices_new(&devs, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    size_t n = tusk_cl_devices_count(devs);
    if (n == 0) {
        fprintf(stderr, PROG ": " NO_DEVICE_HINT "\n");
        tusk_cl_devices_destroy(&devs);
        return TUSK_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            putchar('\n');
        print_device(tusk_cl_devices_get(devs, i));
    }

    /* Which device an actor without a `device` parameter would get. */
    const char *env = getenv("TUSK_CL_DEVICE");
    const char *setting = tusk_cl_device_setting(NULL);
    size_t chosen = 0;
    printf("\ndefault selection \"%s\" (%s): ", setting,
           env && *env ? "from TUSK_CL_DEVICE" : "TUSK_CL_DEVICE not set");
    if (resolve(devs, setting, 0, &chosen, &err) == TUSK_OK)
        print_device_line(tusk_cl_devices_get(devs, chosen));
    else
        printf("no device: %s\n", err.message);
    tusk_cl_devices_destroy(&devs);
    return 0;
}

static int cmd_which(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"instance", required_argument, NULL, 'i'}, {NULL, 0, NULL, 0}};
    uint64_t instance = 0;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "i:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (!tusk_cli_u64(argv[0], "--instance", optarg, 0, UINT32_MAX, &instance))
                return TUSK_EXIT_USAGE;
            break;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        if (optind == argc)
            fprintf(stderr, "%s: expected a SELECTION\n", argv[0]);
        else
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind + 1]);
        return TUSK_EXIT_USAGE;
    }
    const char *text = argv[optind];
    tusk_error_t err;
    tusk_error_clear(&err);
    tusk_cl_spec_t spec;
    if (tusk_cl_spec_parse(text, &spec, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_USAGE;
    }
    tusk_cl_devices_t *devs = NULL;
    if (tusk_cl_devices_new(&devs, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    int status = 0;
    size_t chosen = 0;
    if (tusk_cl_devices_count(devs) == 0) {
        fprintf(stderr, PROG ": " NO_DEVICE_HINT "\n");
        status = TUSK_EXIT_FAIL;
    } else if (tusk_cl_select(devs, &spec, (unsigned)instance, &chosen, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        status = TUSK_EXIT_FAIL;
    } else {
        print_device_line(tusk_cl_devices_get(devs, chosen));
    }
    tusk_cl_devices_destroy(&devs);
    return status;
}

/* "12.3 M" for 12.3e6. */
static const char *si(double v, char *buf, size_t cap)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T"};
    size_t p = 0;
    while (v >= 1000.0 && p + 1 < sizeof prefix / sizeof prefix[0]) {
        v /= 1000.0;
        p++;
    }
    snprintf(buf, cap, "%.3g %s", v, prefix[p]);
    return buf;
}

static void print_rate(const char *label, double ms, size_t signals)
{
    char b[32];
    printf("  %-*s%.3f ms", LABEL_WIDTH - 2, label, ms);
    if (ms > 0.0)
        printf(", %ssignals/s", si((double)signals / (ms * 1e-3), b, sizeof b));
    printf("\n");
}

static void print_result(uint64_t run, uint64_t runs, const tusk_cl_selftest_result_t *r)
{
    printf("run %" PRIu64 "/%" PRIu64 ": %zu signals, seed %" PRIu64 "\n", run, runs, r->signals, r->seed);
    printf("  %-*s%.3g\n", LABEL_WIDTH - 2, "max relative error", r->max_rel_error);
    printf("  %-*s%zu\n", LABEL_WIDTH - 2, "argmin mismatches", r->argmin_mismatches);
    printf("  %-*s%zu\n", LABEL_WIDTH - 2, "histogram mismatches", r->histogram_mismatches);
    printf("  %-*s%s (%s)\n", LABEL_WIDTH - 2, "checksum", r->checksum_ok ? "ok" : "WRONG",
           r->int64_atomics_used ? "int64 atomics" : "per-group partials, no int64 atomics");
    print_rate("device", r->device_ms, r->signals);
    print_rate("CPU", r->cpu_ms, r->signals);
    if (r->device_ms > 0.0 && r->cpu_ms > 0.0)
        printf("  %-*s%.2fx the CPU\n", LABEL_WIDTH - 2, "device speed", r->cpu_ms / r->device_ms);
    printf("  %-*s%s\n", LABEL_WIDTH - 2, "result", r->passed ? "PASS" : "FAIL");
}

/* A seed that differs between runs started close together. */
static uint64_t clock_seed(void)
{
    return tusk_clock_ns() ^ ((uint64_t)getpid() << 40);
}

static int cmd_selftest(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"device", required_argument, NULL, 'd'},
                                             {"signals", required_argument, NULL, 'n'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"repeat", required_argument, NULL, 'r'},
                                             {"no-cache", no_argument, NULL, 'C'},
                                             {NULL, 0, NULL, 0}};
    const char *device = NULL;
    uint64_t signals = DEFAULT_SIGNALS, seed = 0, repeat = 1;
    bool have_seed = false, no_cache = false;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "d:n:s:r:", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': device = optarg; break;
        case 'n':
            if (!tusk_cli_u64(argv[0], "--signals", optarg, 1, SIZE_MAX, &signals))
                return TUSK_EXIT_USAGE;
            break;
        case 's':
            if (!tusk_cli_u64(argv[0], "--seed", optarg, 0, UINT64_MAX, &seed))
                return TUSK_EXIT_USAGE;
            have_seed = true;
            break;
        case 'r':
            if (!tusk_cli_u64(argv[0], "--repeat", optarg, 1, UINT64_MAX, &repeat))
                return TUSK_EXIT_USAGE;
            break;
        case 'C': no_cache = true; break;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    if (!have_seed)
        seed = clock_seed();

    tusk_error_t err;
    tusk_error_clear(&err);
    tusk_cl_config_t config = {.device = device, .no_cache = no_cache};
    tusk_cl_t *cl = NULL;
    if (tusk_cl_new(&cl, &config, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    printf("device: %s (selection \"%s\")\n", tusk_cl_describe(cl), tusk_cl_device_setting(device));
    printf("seed: %" PRIu64 " (replay with --seed %" PRIu64 ")\n", seed, seed);

    int status = 0;
    uint64_t passed = 0, ran = 0;
    for (uint64_t i = 0; i < repeat; i++) {
        tusk_cl_selftest_result_t result;
        int rc = tusk_cl_selftest(cl, (size_t)signals, seed + i, &result, &err);
        if (rc != TUSK_OK) {
            fflush(stdout);
            fprintf(stderr, PROG ": %s\n", err.message);
            if (rc == TUSK_EBUILD)
                fprintf(stderr, PROG ": build log:\n%s\n", tusk_cl_build_log(cl));
            status = TUSK_EXIT_FAIL;
            break;
        }
        ran++;
        print_result(i + 1, repeat, &result);
        if (result.passed)
            passed++;
        else
            status = TUSK_EXIT_FAIL;
    }

    tusk_cl_cache_stats_t stats;
    tusk_cl_cache_stats(cl, &stats);
    const char *dir = tusk_cl_cache_dir(cl);
    printf("program cache: %s; %lu hits, %lu misses, %lu stores, %lu rejected\n", dir ? dir : "off", stats.hits,
           stats.misses, stats.stores, stats.rejected);
    printf("selftest: %" PRIu64 " of %" PRIu64 " runs passed%s\n", passed, repeat,
           ran < repeat ? " (stopped by an error)" : "");
    tusk_cl_destroy(&cl);
    return status;
}

static const tusk_cli_command_t commands[] = {
    {"list", cmd_list, "every OpenCL device of every platform"},
    {"which", cmd_which, "the device a selection string picks"},
    {"selftest", cmd_selftest, "run the self-test kernels on a device and compare with the CPU"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
