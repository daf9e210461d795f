/* check_cl.c - the parts of libtusk-cl that need no device: error names,
 * selection strings (good and bad), device choice over made-up device
 * lists (several GPUs, instances), -D options, the options of bit-for-bit
 * families, work-group fitting and kernel sets over made-up kernels, the
 * binary-cache file format and folders, options from actor parameters.
 * check_cl_device.c runs the rest on a real device (PoCL in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl_private.h"
#include "testutil.h"

/* ---- error codes ---------------------------------------------------------- */

START_TEST(error_names)
{
    ck_assert_str_eq(tusk_cl_strerror(CL_SUCCESS), "CL_SUCCESS");
    ck_assert_str_eq(tusk_cl_strerror(CL_INVALID_VALUE), "CL_INVALID_VALUE");
    ck_assert_str_eq(tusk_cl_strerror(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
    ck_assert_str_eq(tusk_cl_strerror(CL_MEM_OBJECT_ALLOCATION_FAILURE), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
    ck_assert_str_eq(tusk_cl_strerror(CL_INVALID_GLOBAL_WORK_SIZE), "CL_INVALID_GLOBAL_WORK_SIZE");
    ck_assert_str_eq(tusk_cl_strerror(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    ck_assert_str_eq(tusk_cl_strerror(12345), "CL_UNKNOWN_ERROR");
    ck_assert_str_eq(tusk_cl_strerror(-29), "CL_UNKNOWN_ERROR");
    /* Every code of the 1.2 core range has its own name. */
    for (cl_int c = -19; c <= 0; c++)
        ck_assert_str_ne(tusk_cl_strerror(c), "CL_UNKNOWN_ERROR");
    for (cl_int c = -68; c <= -30; c++)
        ck_assert_str_ne(tusk_cl_strerror(c), "CL_UNKNOWN_ERROR");
}
END_TEST

START_TEST(check_reports)
{
    tusk_error_t err;
    tusk_error_clear(&err);
    ck_assert_int_eq(tusk_cl_check(CL_SUCCESS, &err, "clFinish"), TUSK_OK);
    ck_assert_str_eq(err.message, "");
    ck_assert_int_eq(tusk_cl_check(CL_OUT_OF_RESOURCES, &err, "clFoo('%s', %d)", "k", 3), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clFoo('k', 3): CL_OUT_OF_RESOURCES (-5)");
    ck_assert_int_eq(tusk_cl_check(CL_INVALID_VALUE, NULL, "x"), TUSK_ECL);
    ck_assert_str_eq(tusk_strerror(TUSK_ENODEV), "no matching OpenCL device");
}
END_TEST

/* ---- selection strings --------------------------------------------------- */

static tusk_cl_spec_t parse_ok(const char *text)
{
    tusk_cl_spec_t spec;
    tusk_error_t err;
    int rc = tusk_cl_spec_parse(text, &spec, &err);
    ck_assert_msg(rc == TUSK_OK, "'%s': %s", text, err.message);
    return spec;
}

static void parse_bad(const char *text, const char *needle)
{
    tusk_cl_spec_t spec;
    tusk_error_t err;
    tusk_error_clear(&err);
    ck_assert_msg(tusk_cl_spec_parse(text, &spec, &err) == TUSK_EINVAL, "'%s' was accepted", text ? text : "NULL");
    tu_assert_error(&err, TUSK_EINVAL, needle);
}

START_TEST(spec_good)
{
    tusk_cl_spec_t s = parse_ok("any");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_ANY);
    ck_assert_int_eq(s.nth, 0);
    s = parse_ok("gpu");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_GPU);
    s = parse_ok("GPU:1");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_GPU);
    ck_assert_int_eq(s.nth, 1);
    s = parse_ok("cpu:instance");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_CPU);
    ck_assert_int_eq(s.nth, TUSK_CL_NTH_INSTANCE);
    s = parse_ok("accelerator");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_ACCELERATOR);
    s = parse_ok("3");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_INDEX);
    ck_assert_uint_eq(s.index, 3);
    s = parse_ok("1.0");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_PLATFORM_DEVICE);
    ck_assert_uint_eq(s.platform, 1);
    ck_assert_uint_eq(s.device, 0);
    s = parse_ok("H100");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_NAME);
    ck_assert_str_eq(s.name, "H100");
    ck_assert_int_eq(s.nth, 0);
    s = parse_ok("pthread:2");
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_NAME);
    ck_assert_str_eq(s.name, "pthread");
    ck_assert_int_eq(s.nth, 2);
    s = parse_ok("NVIDIA CUDA:instance");
    ck_assert_str_eq(s.name, "NVIDIA CUDA");
    ck_assert_int_eq(s.nth, TUSK_CL_NTH_INSTANCE);
    s = parse_ok("gpux"); /* not the word gpu: a name */
    ck_assert_int_eq(s.match, TUSK_CL_MATCH_NAME);
}
END_TEST

START_TEST(spec_bad)
{
    parse_bad(NULL, "no device selection");
    parse_bad("", "empty device selection");
    parse_bad("gpu:", "after ':' expected a number or 'instance'");
    parse_bad("gpu:x", "got 'x'");
    parse_bad("gpu:-1", "got '-1'");
    parse_bad(":1", "nothing before ':'");
    parse_bad("3:1", "a device index takes no ':' suffix");
    parse_bad(" gpu", "leading or trailing space");
    parse_bad("H100 ", "leading or trailing space");
    parse_bad("gpu\t", "control character");
    parse_bad("gpu:12345678901", "after ':'");
    char longname[400];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    parse_bad(longname, "longer than");
}
END_TEST

START_TEST(spec_random_text_never_crashes)
{
    for (int i = 0; i < 20000; i++) {
        char text[24];
        size_t n = tu_below(sizeof text);
        static const char alphabet[] = "gpucany:.0123456789 instance\txH";
        for (size_t k = 0; k < n; k++)
            text[k] = alphabet[tu_below(sizeof alphabet - 1)];
        text[n] = '\0';
        tusk_cl_spec_t spec;
        tusk_error_t err;
        int rc = tusk_cl_spec_parse(text, &spec, &err);
        tu_check(rc == TUSK_OK || (rc == TUSK_EINVAL && err.message[0]));
        tu_check(rc != TUSK_OK || spec.match != TUSK_CL_MATCH_NAME || strlen(spec.name) > 0);
    }
}
END_TEST

START_TEST(setting_precedence)
{
    ck_assert_int_eq(unsetenv("TUSK_CL_DEVICE"), 0);
    ck_assert_str_eq(tusk_cl_device_setting(NULL), "any");
    ck_assert_str_eq(tusk_cl_device_setting(""), "any");
    ck_assert_int_eq(setenv("TUSK_CL_DEVICE", "gpu:1", 1), 0);
    ck_assert_str_eq(tusk_cl_device_setting(NULL), "gpu:1");
    ck_assert_str_eq(tusk_cl_device_setting("cpu"), "cpu"); /* the topology wins */
    ck_assert_int_eq(setenv("TUSK_CL_DEVICE", "", 1), 0);
    ck_assert_str_eq(tusk_cl_device_setting(NULL), "any");
    unsetenv("TUSK_CL_DEVICE");
}
END_TEST

/* ---- selection over made-up device lists --------------------------------- */

static void add_fake(tusk_cl_devices_t *devs, unsigned p, unsigned d, cl_device_type type, const char *name,
                     const char *platform)
{
    tusk_cl_device_info_t info;
    memset(&info, 0, sizeof info);
    info.platform_index = p;
    info.device_index = d;
    info.type = type;
    snprintf(info.name, sizeof info.name, "%s", name);
    snprintf(info.platform_name, sizeof info.platform_name, "%s", platform);
    snprintf(info.vendor, sizeof info.vendor, "%s", "Vendor Inc");
    info.extensions = "cl_khr_fp64 cl_khr_int64_base_atomics";
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_devices_add(devs, &info, &err), TUSK_OK);
}

/* PoCL's CPU first, then two H100s of the NVIDIA platform, an FPGA. */
static tusk_cl_devices_t *fake_host(void)
{
    tusk_cl_devices_t *devs = tusk_cl_devices_new_empty();
    ck_assert_ptr_nonnull(devs);
    add_fake(devs, 0, 0, CL_DEVICE_TYPE_CPU, "pthread-skylake-avx512", "Portable Computing Language");
    add_fake(devs, 1, 0, CL_DEVICE_TYPE_GPU, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA");
    add_fake(devs, 1, 1, CL_DEVICE_TYPE_GPU, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA");
    add_fake(devs, 2, 0, CL_DEVICE_TYPE_ACCELERATOR, "fpga-emu", "Intel(R) FPGA Emulation Platform");
    return devs;
}

static size_t select_ok(const tusk_cl_devices_t *devs, const char *text, unsigned instance)
{
    tusk_cl_spec_t spec = parse_ok(text);
    tusk_error_t err;
    size_t chosen = 99;
    int rc = tusk_cl_select(devs, &spec, instance, &chosen, &err);
    ck_assert_msg(rc == TUSK_OK, "'%s': %s", text, err.message);
    return chosen;
}

static void select_fails(const tusk_cl_devices_t *devs, const char *text, const char *needle)
{
    tusk_cl_spec_t spec = parse_ok(text);
    tusk_error_t err;
    size_t chosen = 99;
    ck_assert_int_eq(tusk_cl_select(devs, &spec, 0, &chosen, &err), TUSK_ENODEV);
    tu_assert_error(&err, TUSK_ENODEV, needle);
    ck_assert_uint_eq(chosen, 99);
}

START_TEST(select_on_fake_host)
{
    tusk_cl_devices_t *devs = fake_host();
    ck_assert_uint_eq(tusk_cl_devices_count(devs), 4);
    ck_assert_uint_eq(tusk_cl_devices_get(devs, 2)->index, 2);
    ck_assert_ptr_null(tusk_cl_devices_get(devs, 4));
    ck_assert_uint_eq(select_ok(devs, "any", 0), 1); /* a GPU before the CPU listed first */
    ck_assert_uint_eq(select_ok(devs, "any:2", 0), 0); /* GPUs, then the rest in list order */
    ck_assert_uint_eq(select_ok(devs, "any:3", 0), 3);
    ck_assert_uint_eq(select_ok(devs, "gpu", 0), 1);
    ck_assert_uint_eq(select_ok(devs, "gpu:1", 0), 2);
    ck_assert_uint_eq(select_ok(devs, "cpu", 0), 0);
    ck_assert_uint_eq(select_ok(devs, "accelerator", 0), 3);
    ck_assert_uint_eq(select_ok(devs, "pthread", 0), 0);
    ck_assert_uint_eq(select_ok(devs, "h100:1", 0), 2); /* names ignore case */
    ck_assert_uint_eq(select_ok(devs, "cuda", 0), 1);   /* platform names match too */
    ck_assert_uint_eq(select_ok(devs, "vendor inc:3", 0), 3);
    ck_assert_uint_eq(select_ok(devs, "0", 0), 0);
    ck_assert_uint_eq(select_ok(devs, "3", 0), 3);
    ck_assert_uint_eq(select_ok(devs, "1.1", 0), 2);
    ck_assert_uint_eq(select_ok(devs, "2.0", 0), 3);
    /* Load-shared instances spread over the matching devices. */
    for (unsigned i = 0; i < 6; i++) {
        ck_assert_uint_eq(select_ok(devs, "gpu:instance", i), 1 + i % 2);
        ck_assert_uint_eq(select_ok(devs, "cpu:instance", i), 0);
        ck_assert_uint_eq(select_ok(devs, "H100:instance", i), 1 + i % 2);
    }
    select_fails(devs, "gpu:2", "'gpu:2' asks for match 2 but only 2 devices match");
    select_fails(devs, "gpu:2", "[2] 1.1 GPU 'NVIDIA H100 80GB HBM3' (NVIDIA CUDA)");
    select_fails(devs, "A100", "no OpenCL device matches 'A100'; available: [0] 0.0 CPU 'pthread-skylake-avx512'");
    select_fails(devs, "4", "no OpenCL device matches '4'");
    select_fails(devs, "0.1", "no OpenCL device matches '0.1'");
    select_fails(devs, "cpu:1", "only 1 device matches");
    tusk_cl_devices_destroy(&devs);
    ck_assert_ptr_null(devs);
}
END_TEST

START_TEST(select_without_gpu_or_devices)
{
    tusk_cl_devices_t *devs = tusk_cl_devices_new_empty();
    select_fails(devs, "any", "no OpenCL device at all");
    add_fake(devs, 0, 0, CL_DEVICE_TYPE_CPU, "cpu-a", "P");
    add_fake(devs, 0, 1, CL_DEVICE_TYPE_CPU, "cpu-b", "P");
    ck_assert_uint_eq(select_ok(devs, "any", 0), 0);
    ck_assert_uint_eq(select_ok(devs, "any:1", 0), 1);
    ck_assert_uint_eq(select_ok(devs, "any:instance", 3), 1);
    select_fails(devs, "gpu", "no OpenCL device matches 'gpu'; available: [0] 0.0 CPU 'cpu-a' (P); [1] 0.1 CPU");
    tusk_cl_devices_destroy(&devs);
}
END_TEST

/* Property: on random lists, "TYPE:K" is the K-th device of that type in
 * list order, and "any:K" walks all GPUs before the others. */
START_TEST(select_random_lists)
{
    static const cl_device_type types[] = {CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR};
    static const char *const words[] = {"cpu", "gpu", "accelerator"};
    for (int round = 0; round < 200; round++) {
        tusk_cl_devices_t *devs = tusk_cl_devices_new_empty();
        size_t n = 1 + tu_below(8);
        cl_device_type kinds[8];
        for (size_t i = 0; i < n; i++) {
            kinds[i] = types[tu_below(3)];
            add_fake(devs, 0, (unsigned)i, kinds[i], "dev", "plat");
        }
        size_t order[8], m = 0; /* the "any" order */
        for (size_t i = 0; i < n; i++)
            if (kinds[i] == CL_DEVICE_TYPE_GPU)
                order[m++] = i;
        for (size_t i = 0; i < n; i++)
            if (kinds[i] != CL_DEVICE_TYPE_GPU)
                order[m++] = i;
        for (size_t k = 0; k < n; k++) {
            char text[32];
            snprintf(text, sizeof text, "any:%zu", k);
            tu_check(select_ok(devs, text, 0) == order[k]);
        }
        for (int t = 0; t < 3; t++) {
            size_t seen = 0;
            for (size_t i = 0; i < n; i++) {
                if (kinds[i] != types[t])
                    continue;
                char text[32];
                snprintf(text, sizeof text, "%s:%zu", words[t], seen++);
                tu_check(select_ok(devs, text, 0) == i);
            }
            char text[32];
            snprintf(text, sizeof text, "%s:%zu", words[t], seen);
            select_fails(devs, text, seen ? "asks for match" : "no OpenCL device matches");
        }
        tusk_cl_devices_destroy(&devs);
    }
}
END_TEST

START_TEST(extension_tokens)
{
    tusk_cl_device_info_t info;
    memset(&info, 0, sizeof info);
    info.extensions = "cl_khr_fp64x cl_khr_int64_base_atomics cl_khr_fp64";
    ck_assert(tusk_cl_has_extension(&info, "cl_khr_fp64"));
    ck_assert(tusk_cl_has_extension(&info, "cl_khr_int64_base_atomics"));
    ck_assert(!tusk_cl_has_extension(&info, "cl_khr_int64"));
    ck_assert(!tusk_cl_has_extension(&info, "khr_fp64"));
    ck_assert(!tusk_cl_has_extension(&info, ""));
    info.extensions = "cl_khr_fp64x";
    ck_assert(!tusk_cl_has_extension(&info, "cl_khr_fp64"));
    info.extensions = NULL;
    ck_assert(!tusk_cl_has_extension(&info, "cl_khr_fp64"));
    ck_assert_str_eq(tusk_cl_device_type_name(CL_DEVICE_TYPE_GPU), "GPU");
    ck_assert_str_eq(tusk_cl_device_type_name(CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT), "CPU");
}
END_TEST

/* ---- build options --------------------------------------------------------- */

START_TEST(define_options)
{
    char buf[64] = "";
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "NSEG", "36", &err), TUSK_OK);
    ck_assert_str_eq(buf, "-DNSEG=36");
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "_FAST", NULL, &err), TUSK_OK);
    ck_assert_str_eq(buf, "-DNSEG=36 -D_FAST");
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "STEP", "2.0f", &err), TUSK_OK);
    ck_assert_str_eq(buf, "-DNSEG=36 -D_FAST -DSTEP=2.0f");
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "1X", "1", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "'1X' is not a C identifier");
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "A-B", "1", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "", "1", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "A", "1 -cl-fast", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "spaces, quotes or backslashes");
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "A", "\"s\"", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "A", "", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_define(buf, sizeof buf, "A_LONG_NAME", "123456789012345678901234567890", &err),
                     TUSK_ELIMIT);
    ck_assert_str_eq(buf, "-DNSEG=36 -D_FAST -DSTEP=2.0f"); /* unchanged */
}
END_TEST

START_TEST(inexact_options_refused)
{
    /* The options that change the arithmetic are refused, naming the
     * family, the option and what the kernels must agree with; others pass. */
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_refuse_inexact(NULL, "X", "the reference", &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_refuse_inexact("-DN=3 -cl-std=CL1.2", "X", "the reference", &err), TUSK_OK);
    const char *bad[] = {"-cl-fast-relaxed-math", "-cl-mad-enable", "-cl-unsafe-math-optimizations",
                         "-cl-finite-math-only", "-cl-denorms-are-zero"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char opt[96];
        snprintf(opt, sizeof opt, "-DN=3 %s", bad[i]);
        ck_assert_int_eq(tusk_cl_refuse_inexact(opt, "STS", "the fast backend", &err), TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, bad[i]);
        tu_assert_error(&err, TUSK_EINVAL, "STS: build option");
        tu_assert_error(&err, TUSK_EINVAL, "round differently from the fast backend");
        /* A family's device is refused with them before any device is touched. */
        tusk_cl_t *cl = (tusk_cl_t *)1;
        ck_assert_int_eq(tusk_cl_new_exact(&cl, "gpu", 0, opt, false, "UT", "the CPU backends", &err), TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, "UT: build option");
        ck_assert_ptr_null(cl);
    }
    /* Exact options go on to the selection, which reads the setting. */
    tusk_cl_t *cl = (tusk_cl_t *)1;
    ck_assert_int_eq(tusk_cl_new_exact(&cl, "gpu:first", 0, "-DN=3", true, "UT", "the CPU backends", &err),
                     TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "device selection 'gpu:first'");
    ck_assert_ptr_null(cl);
}
END_TEST

START_TEST(exact_division_options)
{
    /* A device that divides as the CPU does gets the rounding option,
     * after what the options hold; one with fp64 but no correctly rounded
     * division divides in double (-DX=1); one with neither is refused,
     * naming the family, the device and what the kernels must agree with. */
    tusk_error_t err;
    char buf[96] = "-DN=3";
    bool via = true;
    const cl_device_fp_config exact = CL_FP_ROUND_TO_NEAREST | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
    ck_assert_int_eq(tusk_cl_division_option(exact, false, "dev", "STS", "the fast backend's", "STS_DIV", buf,
                                             sizeof buf, &via, &err),
                     TUSK_OK);
    ck_assert_str_eq(buf, "-DN=3 -cl-fp32-correctly-rounded-divide-sqrt");
    ck_assert(!via);
    buf[0] = '\0';
    ck_assert_int_eq(tusk_cl_division_option(CL_FP_ROUND_TO_NEAREST, true, "dev", "STS", "the fast backend's",
                                             "STS_DIV", buf, sizeof buf, &via, &err),
                     TUSK_OK);
    ck_assert_str_eq(buf, "-DSTS_DIV=1");
    ck_assert(via);
    ck_assert_int_eq(tusk_cl_division_option(CL_FP_ROUND_TO_NEAREST, false, "Some GPU", "TPC", "the CPU backends'",
                                             "TPC_DIV", buf, sizeof buf, &via, &err),
                     TUSK_ENODEV);
    tu_assert_error(&err, TUSK_ENODEV, "TPC on Some GPU: the device divides floats");
    tu_assert_error(&err, TUSK_ENODEV, "no fp64, so its results could differ from the CPU backends'");
    ck_assert(!via);
    /* Options that would not fit are refused, buf unchanged. */
    char small[24] = "-DN=3";
    ck_assert_int_eq(tusk_cl_division_option(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, true, "dev", "X", "y", "X_DIV", small,
                                             sizeof small, &via, &err),
                     TUSK_ELIMIT);
    ck_assert_str_eq(small, "-DN=3");

    /* The query itself: a failing clGetDeviceInfo is named with its status. */
    tusk_cl_t fake;
    memset(&fake, 0, sizeof fake);
    snprintf(fake.describe, sizeof fake.describe, "a made-up device");
    buf[0] = '\0';
    ck_assert_int_eq(tusk_cl_exact_division(&fake, "UT", "the CPU backends'", "UT_DIV", buf, sizeof buf, &via, &err),
                     TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL,
                    "clGetDeviceInfo(CL_DEVICE_SINGLE_FP_CONFIG) on a made-up device: CL_INVALID_DEVICE (-33)");
}
END_TEST

START_TEST(work_group_fitting)
{
    ck_assert_uint_eq(tusk_cl_floor_pow2(0), 1);
    ck_assert_uint_eq(tusk_cl_floor_pow2(1), 1);
    ck_assert_uint_eq(tusk_cl_floor_pow2(3), 2);
    ck_assert_uint_eq(tusk_cl_floor_pow2(96), 64);
    ck_assert_uint_eq(tusk_cl_floor_pow2(1024), 1024);
    ck_assert_uint_eq(tusk_cl_floor_pow2(SIZE_MAX), (size_t)1 << (sizeof(size_t) * 8 - 1));

    /* The size a program is built for: kept when every sized kernel can
     * run it, else the largest power of two they all can. */
    const size_t limits[] = {256, 96, 1024};
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, TUSK_CL_ALL_KERNELS, 64), 64);
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, TUSK_CL_ALL_KERNELS, 96), 96);
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, TUSK_CL_ALL_KERNELS, 128), 64);
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, 1u << 0 | 1u << 2, 512), 256);
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, 1u << 2, 512), 512);
    ck_assert_uint_eq(tusk_cl_group_fit(limits, 3, 0, 4096), 4096);
    const size_t none[] = {64, 0};
    ck_assert_uint_eq(tusk_cl_group_fit(none, 2, TUSK_CL_ALL_KERNELS, 64), 0);
    for (int round = 0; round < 2000; round++) {
        size_t lim[8], n = 1 + tu_below(8), group = 1 + tu_below(4096), least = SIZE_MAX;
        uint64_t sized = tu_rand();
        for (size_t i = 0; i < n; i++) {
            lim[i] = 1 + tu_below(2048);
            if (((sized >> i) & 1u) && lim[i] < least)
                least = lim[i];
        }
        size_t fit = tusk_cl_group_fit(lim, n, sized, group);
        if (least >= group)
            ck_assert_uint_eq(fit, group);
        else
            ck_assert_msg(fit <= least && 2 * fit > least && (fit & (fit - 1)) == 0,
                          "limit %zu, group %zu: %zu is not the largest power of two within", least, group, fit);
    }

    /* A kernel's group: what is asked when it can run it, else the
     * largest power of two it can (made-up kernels, no device). */
    tusk_cl_t fake;
    memset(&fake, 0, sizeof fake);
    snprintf(fake.describe, sizeof fake.describe, "a made-up device");
    static const char *const names[] = {"narrow", "wide"};
    cl_kernel kernel[2] = {NULL, NULL};
    size_t limit[2] = {96, 1024};
    tusk_cl_kernels_t ks = {&fake, NULL, "made-up.cl", names, 2, kernel, limit};
    ck_assert_uint_eq(tusk_cl_kernels_group(&ks, 0, 64), 64);
    ck_assert_uint_eq(tusk_cl_kernels_group(&ks, 0, 128), 64);
    ck_assert_uint_eq(tusk_cl_kernels_group(&ks, 1, 1000), 1000);
    ck_assert_uint_eq(tusk_cl_kernels_group(&ks, 1, 2000), 1024);
    ck_assert_uint_eq(tusk_cl_kernels_limit(&ks, 0), 96);
    ck_assert_str_eq(tusk_cl_kernels_name(&ks, 1), "wide");
    ck_assert_ptr_null(tusk_cl_kernels_get(&ks, 1));

    /* Failures name the call, the kernel, the argument or the sizes, the
     * device and the status. */
    tusk_error_t err;
    cl_uint u = 7;
    ck_assert_int_eq(tusk_cl_kernels_arg(&ks, 1, 2, sizeof u, &u, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clSetKernelArg(wide, 2) on a made-up device: CL_INVALID_KERNEL (-48)");
    const tusk_cl_arg_t args[] = {TUSK_CL_ARG(u), TUSK_CL_ARG(u)};
    ck_assert_int_eq(tusk_cl_kernels_args(&ks, 0, args, 2, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clSetKernelArg(narrow, 0) on a made-up device");
    cl_mem mems[1] = {NULL};
    ck_assert_int_eq(tusk_cl_kernels_buffers(&ks, 1, mems, 1, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clSetKernelArg(wide, 0)");
    cl_event ev = NULL;
    ck_assert_int_eq(tusk_cl_kernels_launch(&ks, 0, NULL, 3, 64, &ev, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clEnqueueNDRangeKernel(narrow, 3 groups of 64) on a made-up device: CL_INVALID");
    ck_assert_ptr_null(ev);
    double gb = -1;
    ck_assert_int_eq(tusk_cl_kernels_bandwidth(&ks, 1, 64, 15, 3, "X", &gb, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "X bandwidth probe: 0 bytes, 3 runs");
    ck_assert(gb == -1);
}
END_TEST

START_TEST(rooms_and_events)
{
    /* A buffer with room enough is kept as it is; one too large for the
     * device is refused before the driver sees it, naming it. */
    tusk_cl_t fake;
    memset(&fake, 0, sizeof fake);
    snprintf(fake.describe, sizeof fake.describe, "a made-up device");
    snprintf(fake.info.name, sizeof fake.info.name, "Made-up");
    fake.info.max_alloc = 1 << 20;
    fake.info.global_mem = 1 << 22;
    int dummy;
    tusk_cl_room_t room = {(cl_mem)(void *)&dummy, 8192};
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_buffer_room(&fake, "hits", CL_MEM_READ_WRITE, 8192, &room, &err), TUSK_OK);
    ck_assert_ptr_eq(room.mem, (cl_mem)(void *)&dummy);
    ck_assert_uint_eq(room.cap, 8192);
    room.mem = NULL;
    ck_assert_int_eq(tusk_cl_buffer_room(&fake, "hits", CL_MEM_READ_WRITE, 1 << 20, &room, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "buffer 'hits' of 1.25 MiB exceeds the largest allocation of Made-up");
    ck_assert_ptr_null(room.mem);
    ck_assert_uint_eq(room.cap, 0);
    tusk_cl_room_t none[2] = {{NULL, 0}, {NULL, 0}};
    tusk_cl_pinned_t *no_pins[1] = {NULL};
    tusk_cl_release_all(&fake, none, 2, no_pins, 1); /* nothing held: nothing done */
    tusk_cl_release_all(NULL, none, 2, no_pins, 1);   /* no device (a failed _new): nothing */

    /* Events: no event, no time; NULLs are passed over. */
    cl_event ev[3] = {NULL, NULL, NULL};
    ck_assert(tusk_cl_event_ms(NULL) == 0.0);
    ck_assert(tusk_cl_events_ms(ev, 3) == 0.0);
    tusk_cl_events_release(ev, 3);
    ck_assert_ptr_null(ev[2]);
    ck_assert_int_eq(tusk_cl_run_end(NULL, TUSK_ECL, ev, 3), TUSK_ECL);
    ck_assert_int_eq(tusk_cl_run_end(NULL, TUSK_OK, ev, 3), TUSK_OK);
}
END_TEST

START_TEST(params_checked_before_device)
{
    /* Errors in the OpenCL parameters are reported before any device is
     * touched, naming the parameter. */
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    tusk_cl_t *cl = (tusk_cl_t *)1;
    ck_assert_int_eq(tusk_params_set(p, "cl.define.1BAD", "3", &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_new_from_params(&cl, p, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "parameter 'cl.define.1BAD'");
    ck_assert_ptr_null(cl);
    tusk_params_destroy(&p);

    p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "cl.cache", "maybe", &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_new_from_params(&cl, p, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "cl.cache");
    tusk_params_destroy(&p);

    p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "device", "gpu:first", &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_new_from_params(&cl, p, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "device selection 'gpu:first'");
    tusk_params_destroy(&p);

    /* The OpenCL keys pass an actor's unknown-parameter check. */
    static const char *const known[] = {"file", TUSK_CL_PARAM_KEYS, NULL};
    p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "cl.define.NSEG", "36", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "device", "gpu", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "cl.defines.X", "1", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_expect(p, known, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "unknown parameter 'cl.defines.X'");
    tusk_params_destroy(&p);
}
END_TEST

/* ---- the binary cache's files ------------------------------------------------ */

static tusk_cl_device_info_t fake_info(const char *driver)
{
    tusk_cl_device_info_t info;
    memset(&info, 0, sizeof info);
    snprintf(info.platform_name, sizeof info.platform_name, "NVIDIA CUDA");
    snprintf(info.name, sizeof info.name, "NVIDIA H100");
    snprintf(info.driver_version, sizeof info.driver_version, "%s", driver);
    info.address_bits = 64;
    return info;
}

START_TEST(cache_key_names_everything)
{
    tusk_cl_device_info_t a = fake_info("550.54"), b = fake_info("550.90");
    char *ka = tusk_cl_cache_key(&a, "-DX=1"), *kb = tusk_cl_cache_key(&b, "-DX=1"), *kc = tusk_cl_cache_key(&a, "-DX=2");
    ck_assert_ptr_nonnull(ka);
    ck_assert_str_ne(ka, kb);
    ck_assert_str_ne(ka, kc);
    ck_assert_ptr_nonnull(strstr(ka, "driver=550.54\n"));
    ck_assert_ptr_nonnull(strstr(ka, "device=NVIDIA H100\n"));
    ck_assert_ptr_nonnull(strstr(kc, "options=-DX=2\n"));
    char *pa = tusk_cl_cache_path("/c", ka, "src", 3), *pb = tusk_cl_cache_path("/c", kb, "src", 3),
         *ps = tusk_cl_cache_path("/c", ka, "src2", 4);
    ck_assert_str_ne(pa, pb);
    ck_assert_str_ne(pa, ps);
    ck_assert_int_eq(strncmp(pa, "/c/cl-", 6), 0);
    free(ka);
    free(kb);
    free(kc);
    free(pa);
    free(pb);
    free(ps);
}
END_TEST

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    ck_assert_int_gt(len, 0);
    rewind(f);
    unsigned char *d = malloc((size_t)len);
    ck_assert_uint_eq(fread(d, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return d;
}

START_TEST(cache_file_round_trip_and_damage)
{
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    const char *key = "tusk-cl-cache 1\ndevice=X\n", *src = "kernel void k(){}";
    size_t sn = strlen(src);
    unsigned char bin[300];
    tu_fill(bin, sizeof bin);
    char *path = tusk_cl_cache_path(dir, key, src, sn);
    unsigned char *got = NULL;
    size_t got_n = 0;
    ck_assert_int_eq(tusk_cl_cache_load(path, key, src, sn, &got, &got_n), 0); /* absent */
    ck_assert(tusk_cl_cache_store(dir, path, key, src, sn, bin, sizeof bin));
    ck_assert_int_eq(tusk_cl_cache_load(path, key, src, sn, &got, &got_n), 1);
    ck_assert_uint_eq(got_n, sizeof bin);
    ck_assert_mem_eq(got, bin, sizeof bin);
    free(got);
    /* Another key or source at the same path (a hash collision, a
     * renamed file) is refused, never used. */
    ck_assert_int_eq(tusk_cl_cache_load(path, "tusk-cl-cache 1\ndevice=Y\n", src, sn, &got, &got_n), -1);
    ck_assert_int_eq(tusk_cl_cache_load(path, key, "kernel void k(){ }", sn + 1, &got, &got_n), -1);
    ck_assert_int_eq(tusk_cl_cache_load(path, key, src, sn - 1, &got, &got_n), -1);
    ck_assert_ptr_null(got);

    /* Every truncation and every flipped byte is caught. */
    size_t n;
    unsigned char *file = slurp(path, &n);
    const unsigned char *b;
    size_t bn;
    ck_assert_int_eq(tusk_cl_cache_parse(file, n, key, src, sn, &b, &bn), 1);
    for (size_t cut = 0; cut < n; cut++)
        tu_check(tusk_cl_cache_parse(file, cut, key, src, sn, &b, &bn) == -1);
    for (size_t i = 0; i < n; i++) {
        unsigned char keep = file[i];
        file[i] ^= (unsigned char)(1u << tu_below(8));
        tu_check(tusk_cl_cache_parse(file, n, key, src, sn, &b, &bn) == -1);
        file[i] = keep;
    }
    /* A damaged file on disk reads as -1, not as a binary. */
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, (long)(n - 20), SEEK_SET), 0);
    ck_assert_int_eq(fputc(file[n - 20] ^ 0xff, f), file[n - 20] ^ 0xff);
    fclose(f);
    ck_assert_int_eq(tusk_cl_cache_load(path, key, src, sn, &got, &got_n), -1);
    free(file);
    free(path);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(cache_random_bytes_never_crash)
{
    const char *key = "k", *src = "s";
    for (int i = 0; i < 20000; i++) {
        unsigned char data[96];
        size_t n = tu_below(sizeof data);
        tu_fill(data, n);
        if (n >= 8 && tu_below(2))
            memcpy(data, "TUSKCLB1", 8);
        const unsigned char *b;
        size_t bn;
        tu_check(tusk_cl_cache_parse(data, n, key, src, 1, &b, &bn) == -1);
    }
}
END_TEST

START_TEST(cache_folder_resolution)
{
    char dir[256], want[512];
    tu_make_dir(dir, sizeof dir);
    unsetenv("TUSK_CL_CACHE_DIR");
    /* Configured wins and is created. */
    snprintf(want, sizeof want, "%s/configured", dir);
    char *got = tusk_cl_cache_resolve_dir(want);
    ck_assert_str_eq(got, want);
    free(got);
    /* Then TUSK_CL_CACHE_DIR. */
    snprintf(want, sizeof want, "%s/env", dir);
    setenv("TUSK_CL_CACHE_DIR", want, 1);
    got = tusk_cl_cache_resolve_dir(NULL);
    ck_assert_str_eq(got, want);
    free(got);
    unsetenv("TUSK_CL_CACHE_DIR");
    /* Then $XDG_CACHE_HOME/tusk. */
    setenv("XDG_CACHE_HOME", dir, 1);
    snprintf(want, sizeof want, "%s/tusk", dir);
    got = tusk_cl_cache_resolve_dir(NULL);
    ck_assert_str_eq(got, want);
    free(got);
    /* A relative XDG_CACHE_HOME is ignored (XDG spec): $HOME/.cache/tusk. */
    setenv("XDG_CACHE_HOME", "relative", 1);
    setenv("HOME", dir, 1);
    snprintf(want, sizeof want, "%s/.cache/tusk", dir);
    got = tusk_cl_cache_resolve_dir(NULL);
    ck_assert_str_eq(got, want);
    free(got);
    /* A folder that cannot be made: no cache (not an error). */
    snprintf(want, sizeof want, "%s/file", dir);
    FILE *f = fopen(want, "w");
    fclose(f);
    snprintf(want, sizeof want, "%s/file/sub", dir);
    ck_assert_ptr_null(tusk_cl_cache_resolve_dir(want));
    /* Clean up: the made folders, then the file and the top. */
    char sub[600];
    static const char *const made[] = {"configured", "env", "tusk", ".cache/tusk", ".cache"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        snprintf(sub, sizeof sub, "%s/%s", dir, made[i]);
        ck_assert_int_eq(rmdir(sub), 0);
    }
    tu_remove_dir(dir);
}
END_TEST

START_TEST(timing_format)
{
    tusk_cl_timing_t t;
    char buf[128];
    tusk_cl_timing_reset(&t);
    tusk_cl_timing_format(&t, buf, sizeof buf);
    ck_assert_str_eq(buf, "0 runs");
    t.count = 2;
    t.total_ns = 3000000;
    t.min_ns = 1000000;
    t.max_ns = 2000000;
    tusk_cl_timing_format(&t, buf, sizeof buf);
    ck_assert_str_eq(buf, "2 runs, mean 1.500 ms, min 1.000 ms, max 2.000 ms, total 3.000 ms");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cl");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, error_names);
    tcase_add_test(tc, check_reports);
    suite_add_tcase(s, tc);
    tc = tcase_create("selection");
    tcase_add_test(tc, spec_good);
    tcase_add_test(tc, spec_bad);
    tcase_add_test(tc, spec_random_text_never_crashes);
    tcase_add_test(tc, setting_precedence);
    tcase_add_test(tc, select_on_fake_host);
    tcase_add_test(tc, select_without_gpu_or_devices);
    tcase_add_test(tc, select_random_lists);
    tcase_add_test(tc, extension_tokens);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, define_options);
    tcase_add_test(tc, inexact_options_refused);
    tcase_add_test(tc, exact_division_options);
    tcase_add_test(tc, work_group_fitting);
    tcase_add_test(tc, rooms_and_events);
    tcase_add_test(tc, params_checked_before_device);
    tcase_add_test(tc, timing_format);
    suite_add_tcase(s, tc);
    tc = tcase_create("cache");
    tcase_add_test(tc, cache_key_names_everything);
    tcase_add_test(tc, cache_file_round_trip_and_damage);
    tcase_add_test(tc, cache_random_bytes_never_crash);
    tcase_add_test(tc, cache_folder_resolution);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
