/* check_cl_device.c - libtusk-cl on a real OpenCL device: PoCL's CPU
 * device in CI (TUSK_CL_TEST_DEVICE selects another, e.g. gpu). Device
 * listing and selection, programs with -D constants, build failures with
 * the log, the binary cache (used on the second build, refused after a
 * source, option or driver change or damage), device limits, pinned
 * buffers, timed launches, kernel sets (built, fitted, launched, the
 * bandwidth probe) and growing buffers, and the self-test against the CPU
 * on fresh random input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl_private.h"
#include "testutil.h"

static const char *test_device(void)
{
    const char *d = getenv("TUSK_CL_TEST_DEVICE");
    return d && *d ? d : "cpu";
}

/* A context on the test device; cache in `cache_dir` (NULL: off). */
static tusk_cl_t *open_cl(const char *cache_dir, const char *options)
{
    tusk_cl_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.device = test_device();
    cfg.build_options = options;
    cfg.cache_dir = cache_dir;
    cfg.no_cache = cache_dir == NULL;
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    int rc = tusk_cl_new(&cl, &cfg, &err);
    ck_assert_msg(rc == TUSK_OK,
                  "no OpenCL device for the tests (%s); CI uses PoCL: apt-get install pocl-opencl-icd", err.message);
    return cl;
}

static const char value_src[] = "__kernel void put(__global int *out) { out[get_global_id(0)] = VALUE + "
                                "(int)get_global_id(0); }\n";

/* Build value_src with `options`, run it on 4 items, return out[0]. */
static int run_value(tusk_cl_t *cl, const char *src, const char *options)
{
    tusk_error_t err;
    cl_program prog;
    int rc = tusk_cl_program_build(cl, "value", src, strlen(src), options, &prog, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    cl_kernel k;
    ck_assert_int_eq(tusk_cl_kernel_new(cl, prog, "put", &k, &err), TUSK_OK);
    cl_mem out;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "out", CL_MEM_WRITE_ONLY, 4 * sizeof(cl_int), NULL, &out, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_check(clSetKernelArg(k, 0, sizeof out, &out), &err, "clSetKernelArg"), TUSK_OK);
    size_t global = 4;
    tusk_cl_timing_t t;
    tusk_cl_timing_reset(&t);
    ck_assert_int_eq(tusk_cl_run(cl, k, 1, &global, NULL, &t, &err), TUSK_OK);
    ck_assert_uint_eq(t.count, 1);
    ck_assert_uint_le(t.min_ns, t.max_ns);
    cl_int host[4];
    ck_assert_int_eq(tusk_cl_check(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, sizeof host, host, 0,
                                                       NULL, NULL),
                                   &err, "clEnqueueReadBuffer"),
                     TUSK_OK);
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq(host[i], host[0] + i);
    tusk_cl_buffer_release(cl, &out);
    ck_assert_ptr_null(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    return host[0];
}

START_TEST(devices_listed)
{
    tusk_cl_devices_t *devs = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_devices_new(&devs, &err), TUSK_OK);
    ck_assert_msg(tusk_cl_devices_count(devs) > 0, "no OpenCL device (CI: apt-get install pocl-opencl-icd)");
    for (size_t i = 0; i < tusk_cl_devices_count(devs); i++) {
        const tusk_cl_device_info_t *d = tusk_cl_devices_get(devs, i);
        ck_assert_uint_eq(d->index, i);
        ck_assert_str_ne(d->name, "");
        ck_assert_str_ne(d->platform_name, "");
        ck_assert_uint_gt(d->compute_units, 0);
        ck_assert_uint_gt(d->max_alloc, 0);
        ck_assert_uint_ge(d->global_mem, d->max_alloc);
        ck_assert_uint_gt(d->max_work_group_size, 0);
        ck_assert_ptr_nonnull(d->extensions);
        ck_assert_int_eq(d->int64_atomics, tusk_cl_has_extension(d, "cl_khr_int64_base_atomics"));
        ck_assert_msg(strncmp(d->c_version, "OpenCL C ", 9) == 0, "%s", d->c_version);
    }
    tusk_cl_devices_destroy(&devs);
}
END_TEST

START_TEST(selection_on_this_host)
{
    tusk_cl_devices_t *devs = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_devices_new(&devs, &err), TUSK_OK);
    tusk_cl_t *cl = open_cl(NULL, NULL);
    const tusk_cl_device_info_t *d = tusk_cl_device(cl);
    ck_assert_ptr_nonnull(strstr(tusk_cl_describe(cl), d->name));
    ck_assert_ptr_nonnull(tusk_cl_context(cl));
    ck_assert_ptr_nonnull(tusk_cl_queue(cl));

    /* The same device by index, by P.D and by a piece of its name. */
    char text[TUSK_CL_TEXT_MAX];
    const char *forms[3];
    char idx[32], pd[32];
    snprintf(idx, sizeof idx, "%zu", d->index);
    snprintf(pd, sizeof pd, "%u.%u", d->platform_index, d->device_index);
    snprintf(text, sizeof text, "%.6s", d->name);
    forms[0] = idx;
    forms[1] = pd;
    forms[2] = text;
    for (int i = 0; i < 3; i++) {
        tusk_cl_spec_t spec;
        size_t chosen = 999;
        ck_assert_int_eq(tusk_cl_spec_parse(forms[i], &spec, &err), TUSK_OK);
        ck_assert_int_eq(tusk_cl_select(devs, &spec, 0, &chosen, &err), TUSK_OK);
        if (spec.match != TUSK_CL_MATCH_NAME) /* a name piece may match an earlier device */
            ck_assert_uint_eq(chosen, d->index);
    }

    /* Nothing matches: the message lists what there is. */
    tusk_cl_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.device = "no-such-device-anywhere";
    cfg.no_cache = true;
    tusk_cl_t *none = (tusk_cl_t *)1;
    ck_assert_int_eq(tusk_cl_new(&none, &cfg, &err), TUSK_ENODEV);
    ck_assert_ptr_null(none);
    tu_assert_error(&err, TUSK_ENODEV, "no OpenCL device matches 'no-such-device-anywhere'; available: [0]");
    tu_assert_error(&err, TUSK_ENODEV, tusk_cl_devices_get(devs, 0)->name);

    /* On a host without a GPU (CI), asking for one says so. */
    bool have_gpu = false;
    for (size_t i = 0; i < tusk_cl_devices_count(devs); i++)
        have_gpu |= (tusk_cl_devices_get(devs, i)->type & CL_DEVICE_TYPE_GPU) != 0;
    cfg.device = "gpu";
    int rc = tusk_cl_new(&none, &cfg, &err);
    if (have_gpu) {
        ck_assert_int_eq(rc, TUSK_OK);
        tusk_cl_destroy(&none);
    } else {
        ck_assert_int_eq(rc, TUSK_ENODEV);
        tu_assert_error(&err, TUSK_ENODEV, "no OpenCL device matches 'gpu'");
    }
    /* The environment is the fallback; the explicit setting wins. */
    setenv("TUSK_CL_DEVICE", "no-such-device-anywhere", 1);
    cfg.device = NULL;
    ck_assert_int_eq(tusk_cl_new(&none, &cfg, &err), TUSK_ENODEV);
    cfg.device = test_device();
    ck_assert_int_eq(tusk_cl_new(&none, &cfg, &err), TUSK_OK);
    tusk_cl_destroy(&none);
    unsetenv("TUSK_CL_DEVICE");

    tusk_cl_destroy(&cl);
    ck_assert_ptr_null(cl);
    tusk_cl_devices_destroy(&devs);
}
END_TEST

START_TEST(defines_reach_the_kernel)
{
    tusk_cl_t *cl = open_cl(NULL, "-DVALUE=5");
    ck_assert_int_eq(run_value(cl, value_src, NULL), 5);
    /* Per-program options are added to cl's own. */
    const char *src2 = "__kernel void put(__global int *out) { out[get_global_id(0)] = VALUE * SCALE + "
                       "(int)get_global_id(0); }\n";
    char opts[128] = "";
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_define(opts, sizeof opts, "SCALE", "7", &err), TUSK_OK);
    ck_assert_int_eq(run_value(cl, src2, opts), 35);
    tusk_cl_destroy(&cl);

    /* From an actor's parameters: device, cl.define.*, cl.options. */
    tusk_params_t *p = tusk_params_new();
    ck_assert_int_eq(tusk_params_set(p, "device", test_device(), &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "cl.define.VALUE", "11", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "cl.options", "-cl-mad-enable", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "cl.cache", "off", &err), TUSK_OK);
    ck_assert_int_eq(tusk_params_set(p, "instance", "3", &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_new_from_params(&cl, p, &err), TUSK_OK);
    ck_assert_ptr_null(tusk_cl_cache_dir(cl));
    ck_assert_int_eq(run_value(cl, value_src, NULL), 11);
    tusk_cl_destroy(&cl);
    tusk_params_destroy(&p);
}
END_TEST

START_TEST(build_failure_carries_log)
{
    tusk_cl_t *cl = open_cl(NULL, NULL);
    const char *bad = "__kernel void k(__global int *o) {\n  o[0] = tusk_no_such_identifier;\n}\n";
    cl_program prog = (cl_program)1;
    tusk_error_t err;
    ck_assert_int_eq(tusk_cl_program_build(cl, "broken.cl", bad, strlen(bad), "-DX=1", &prog, &err), TUSK_EBUILD);
    ck_assert_ptr_null(prog);
    tu_assert_error(&err, TUSK_EBUILD, "program 'broken.cl' did not build for ");
    tu_assert_error(&err, TUSK_EBUILD, tusk_cl_device(cl)->name);
    tu_assert_error(&err, TUSK_EBUILD, "with options '-DX=1'");
    tu_assert_error(&err, TUSK_EBUILD, "build log:\n");
    tu_assert_error(&err, TUSK_EBUILD, "tusk_no_such_identifier"); /* the compiler's own words */
    ck_assert_ptr_nonnull(strstr(tusk_cl_build_log(cl), "tusk_no_such_identifier"));

    /* A log longer than a message: the message ends with a pointer to the
     * whole log, which tusk_cl_build_log keeps. */
    /* 15 errors (compilers stop after 20) with long names: ~2 KiB of log. */
    char *many = malloc(16 * 120 + 64);
    size_t n = (size_t)sprintf(many, "__kernel void k(__global int *o) {\n");
    for (int i = 0; i < 15; i++)
        n += (size_t)sprintf(many + n, "  o[%d] = an_undefined_name_long_enough_to_fill_the_log_quickly_%02d;\n", i, i);
    sprintf(many + n, "}\n");
    ck_assert_int_eq(tusk_cl_program_build(cl, "long.cl", many, strlen(many), NULL, &prog, &err), TUSK_EBUILD);
    tu_assert_error(&err, TUSK_EBUILD, "log truncated");
    ck_assert_ptr_nonnull(strstr(tusk_cl_build_log(cl), "an_undefined_name_long_enough_to_fill_the_log_quickly_14"));
    free(many);

    /* Empty source and unknown kernel names are refused clearly too. */
    ck_assert_int_eq(tusk_cl_program_build(cl, "empty.cl", "", 0, NULL, &prog, &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_program_build(cl, "value", value_src, strlen(value_src), "-DVALUE=1", &prog, &err),
                     TUSK_OK);
    cl_kernel k = (cl_kernel)1;
    ck_assert_int_eq(tusk_cl_kernel_new(cl, prog, "nope", &k, &err), TUSK_ECL);
    ck_assert_ptr_null(k);
    tu_assert_error(&err, TUSK_ECL, "clCreateKernel('nope')");
    tu_assert_error(&err, TUSK_ECL, "CL_INVALID_KERNEL_NAME");
    clReleaseProgram(prog);
    tusk_cl_destroy(&cl);
}
END_TEST

static size_t count_cache_files(const char *dir)
{
    size_t n = 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^cl-.*\\.bin$'", dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(fscanf(p, "%zu", &n), 1);
    pclose(p);
    return n;
}

START_TEST(binary_cache)
{
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    tusk_cl_cache_stats_t st;

    /* First build: from source, stored. */
    tusk_cl_t *cl = open_cl(dir, NULL);
    ck_assert_str_eq(tusk_cl_cache_dir(cl), dir);
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=3"), 3);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.hits, 0);
    ck_assert_uint_eq(st.misses, 1);
    ck_assert_msg(st.stores == 1, "the device gave no program binary to cache (%s)", tusk_cl_describe(cl));
    ck_assert_uint_eq(count_cache_files(dir), 1);
    tusk_cl_destroy(&cl);

    /* Second build in a fresh context: from the cache, same result. */
    cl = open_cl(dir, NULL);
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=3"), 3);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 0);

    /* Changed source, changed options: rebuilt, never the old binary. */
    const char *changed = "__kernel void put(__global int *out) { out[get_global_id(0)] = 2 * VALUE + "
                          "(int)get_global_id(0); }\n";
    ck_assert_int_eq(run_value(cl, changed, "-DVALUE=3"), 6);
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=4"), 4);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 2);
    ck_assert_uint_eq(count_cache_files(dir), 3);

    /* Another driver version (as after an upgrade): rebuilt. */
    snprintf(cl->info.driver_version, sizeof cl->info.driver_version, "tusk-test-upgraded");
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=3"), 3);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 3);
    tusk_cl_destroy(&cl);

    /* A damaged cache file is refused and replaced. */
    cl = open_cl(dir, NULL);
    char *key = tusk_cl_cache_key(tusk_cl_device(cl), "-DVALUE=3");
    char *path = tusk_cl_cache_path(dir, key, value_src, strlen(value_src));
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, sb.st_size / 2, SEEK_SET), 0);
    fputc('#', f);
    fputc('#', f);
    fclose(f);
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=3"), 3);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.rejected, 1);
    ck_assert_uint_eq(st.misses, 1);
    ck_assert_uint_eq(st.stores, 1);
    ck_assert_int_eq(run_value(cl, value_src, "-DVALUE=3"), 3);
    tusk_cl_cache_stats(cl, &st);
    ck_assert_uint_eq(st.hits, 1);
    tusk_cl_destroy(&cl);
    free(key);
    free(path);

    /* TUSK_CL_CACHE=off turns it off. */
    setenv("TUSK_CL_CACHE", "off", 1);
    cl = open_cl(dir, NULL);
    ck_assert_ptr_null(tusk_cl_cache_dir(cl));
    tusk_cl_destroy(&cl);
    unsetenv("TUSK_CL_CACHE");
    tu_remove_dir(dir);
}
END_TEST

START_TEST(limits_and_buffers)
{
    tusk_cl_t *cl = open_cl(NULL, NULL);
    const tusk_cl_device_info_t *d = tusk_cl_device(cl);
    tusk_error_t err;
    cl_mem m = (cl_mem)1;
    /* Beyond the largest allocation: refused before the driver sees it. */
    if (d->max_alloc < SIZE_MAX) {
        ck_assert_int_eq(tusk_cl_buffer_new(cl, "huge", CL_MEM_READ_WRITE, (size_t)d->max_alloc + 1, NULL, &m, &err),
                         TUSK_ELIMIT);
        ck_assert_ptr_null(m);
        tu_assert_error(&err, TUSK_ELIMIT, "buffer 'huge' of ");
        tu_assert_error(&err, TUSK_ELIMIT, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    }
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "none", CL_MEM_READ_WRITE, 0, NULL, &m, &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "host", CL_MEM_USE_HOST_PTR, 64, NULL, &m, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clCreateBuffer('host'");
    tu_assert_error(&err, TUSK_ECL, "CL_INVALID_HOST_PTR");

    /* Global memory is counted across buffers: pretend the device has
     * 3 MiB, then 2 + 2 MiB does not fit but 2 + 1 does. */
    cl->info.global_mem = 3u << 20;
    cl_mem a, b;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "a", CL_MEM_READ_WRITE, 2u << 20, NULL, &a, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 2u << 20);
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "b", CL_MEM_READ_WRITE, 2u << 20, NULL, &b, &err), TUSK_ELIMIT);
    tu_assert_error(&err, TUSK_ELIMIT, "buffer 'b' of 2.00 MiB does not fit: 2.00 MiB already allocated of the "
                                       "3.00 MiB global memory");
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "b", CL_MEM_READ_WRITE, 1u << 20, NULL, &b, &err), TUSK_OK);
    tusk_cl_buffer_release(cl, &a);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 1u << 20);
    tusk_cl_buffer_release(cl, &b);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 0);
    tusk_cl_buffer_release(cl, &b); /* NULL: nothing */

    /* Pinned memory round trip through a device buffer. */
    cl->info.global_mem = d->max_alloc * 4;
    size_t size = 1u << 20;
    tusk_cl_pinned_t *pin = NULL, *back = NULL;
    ck_assert_int_eq(tusk_cl_pinned_new(cl, "staging", size, &pin, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_pinned_new(cl, "readback", size, &back, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_cl_pinned_size(pin), size);
    tu_fill(tusk_cl_pinned_ptr(pin), size);
    cl_mem dev;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "dev", CL_MEM_READ_WRITE, size, NULL, &dev, &err), TUSK_OK);
    cl_command_queue q = tusk_cl_queue(cl);
    ck_assert_int_eq(
        tusk_cl_check(clEnqueueWriteBuffer(q, dev, CL_FALSE, 0, size, tusk_cl_pinned_ptr(pin), 0, NULL, NULL), &err,
                      "write"),
        TUSK_OK);
    ck_assert_int_eq(
        tusk_cl_check(clEnqueueReadBuffer(q, dev, CL_TRUE, 0, size, tusk_cl_pinned_ptr(back), 0, NULL, NULL), &err,
                      "read"),
        TUSK_OK);
    ck_assert_mem_eq(tusk_cl_pinned_ptr(back), tusk_cl_pinned_ptr(pin), size);
    ck_assert_ptr_nonnull(tusk_cl_pinned_mem(pin));
    ck_assert_uint_eq(tusk_cl_allocated(cl), 3 * size);
    tusk_cl_buffer_release(cl, &dev);
    tusk_cl_pinned_destroy(&pin);
    tusk_cl_pinned_destroy(&back);
    ck_assert_ptr_null(pin);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 0);
    tusk_cl_destroy(&cl);
}
END_TEST

START_TEST(bad_launch_names_kernel)
{
    tusk_cl_t *cl = open_cl(NULL, NULL);
    tusk_error_t err;
    cl_program prog;
    ck_assert_int_eq(tusk_cl_program_build(cl, "value", value_src, strlen(value_src), "-DVALUE=1", &prog, &err),
                     TUSK_OK);
    cl_kernel k;
    ck_assert_int_eq(tusk_cl_kernel_new(cl, prog, "put", &k, &err), TUSK_OK);
    /* No argument set. */
    size_t global = 4;
    ck_assert_int_eq(tusk_cl_run(cl, k, 1, &global, NULL, NULL, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clEnqueueNDRangeKernel('put', global 4");
    tu_assert_error(&err, TUSK_ECL, "CL_INVALID_KERNEL_ARGS");
    clReleaseKernel(k);
    clReleaseProgram(prog);
    tusk_cl_destroy(&cl);
}
END_TEST

/* Two kernels for the kernel-set tests: `fill` writes its group size as
 * built (-DWG) and its index; `copy` is the bandwidth probe's copy. */
static const char set_src[] =
    "__kernel void fill(__global int *out, int add)\n"
    "{ out[get_global_id(0)] = WG * 1000 + add + (int)get_global_id(0); }\n"
    "__kernel void copy(__global const uint4 *a, __global uint4 *b, uint n)\n"
    "{ for (uint i = get_global_id(0); i < n; i += get_global_size(0)) b[i] = a[i]; }\n";
static const char *const set_names[] = {"fill", "copy"};

typedef struct fit_log {
    unsigned asked[8];
    int n;
} fit_log_t;

static int fit_options(void *ctx, unsigned group, char *buf, size_t cap, tusk_error_t *err)
{
    fit_log_t *log = ctx;
    char v[16];
    if (log->n < 8)
        log->asked[log->n] = group;
    log->n++;
    snprintf(v, sizeof v, "%u", group);
    return tusk_cl_define(buf, cap, "WG", v, err);
}

START_TEST(kernel_sets)
{
    tusk_cl_t *cl = open_cl(NULL, NULL);
    tusk_error_t err;
    tusk_cl_source_t src = {"set.cl", set_src, strlen(set_src), set_names, 2};
    tusk_cl_kernels_t *ks = NULL;
    ck_assert_msg(tusk_cl_kernels_new(cl, &src, "-DWG=8", &ks, &err) == TUSK_OK, "%s", err.message);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_ptr_nonnull(tusk_cl_kernels_get(ks, i));
        ck_assert_str_eq(tusk_cl_kernels_name(ks, i), set_names[i]);
        size_t limit = 0;
        clGetKernelWorkGroupInfo(tusk_cl_kernels_get(ks, i), tusk_cl_device(cl)->device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof limit, &limit, NULL);
        ck_assert_uint_ge(limit, 1);
        ck_assert_uint_eq(tusk_cl_kernels_limit(ks, i), limit);
    }
    /* arguments by index, a launch of 3 groups of 4, its time */
    tusk_cl_room_t room = {NULL, 0};
    ck_assert_int_eq(tusk_cl_buffer_room(cl, "out", CL_MEM_WRITE_ONLY, 12 * sizeof(cl_int), &room, &err), TUSK_OK);
    ck_assert_uint_eq(room.cap, 12 * sizeof(cl_int) + 12 * sizeof(cl_int) / 4 + 4096);
    ck_assert_uint_eq(tusk_cl_allocated(cl), room.cap);
    cl_mem out = room.mem;
    ck_assert_int_eq(tusk_cl_buffer_room(cl, "out", CL_MEM_WRITE_ONLY, room.cap, &room, &err), TUSK_OK);
    ck_assert_ptr_eq(room.mem, out); /* room enough: the same buffer */
    cl_int add = 5;
    const tusk_cl_arg_t args[] = {TUSK_CL_ARG(out), TUSK_CL_ARG(add)};
    cl_event ev[2] = {NULL, NULL};
    ck_assert_int_eq(tusk_cl_kernels_args(ks, 0, args, 2, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_kernels_launch(ks, 0, NULL, 3, 4, &ev[0], &err), TUSK_OK);
    cl_int host[12];
    ck_assert_int_eq(tusk_cl_check(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, sizeof host, host, 1, ev,
                                                       &ev[1]),
                                   &err, "clEnqueueReadBuffer"),
                     TUSK_OK);
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq(host[i], 8000 + 5 + i);
    ck_assert(tusk_cl_events_ms(ev, 2) >= tusk_cl_event_ms(ev[0]));
    tusk_cl_events_release(ev, 2);
    ck_assert_ptr_null(ev[0]);
    /* a wrong argument names the kernel and its index */
    ck_assert_int_eq(tusk_cl_kernels_arg(ks, 1, 7, sizeof out, &out, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clSetKernelArg(copy, 7) on ");
    tu_assert_error(&err, TUSK_ECL, "CL_INVALID_ARG_INDEX");
    /* the bandwidth probe copies for real */
    double gb = 0;
    ck_assert_msg(tusk_cl_kernels_bandwidth(ks, 1, tusk_cl_kernels_group(ks, 1, 64), 1 << 20, 2, "test", &gb, &err) ==
                      TUSK_OK,
                  "%s", err.message);
    ck_assert(gb > 0);
    tusk_cl_release_all(cl, &room, 1, NULL, 0);
    ck_assert_ptr_null(room.mem);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 0);
    tusk_cl_kernels_destroy(&ks);
    ck_assert_ptr_null(ks);
    tusk_cl_kernels_destroy(&ks); /* NULL: nothing */

    /* A kernel the source lacks, a source that does not compile. */
    static const char *const missing[] = {"fill", "nope"};
    tusk_cl_source_t bad = {"set.cl", set_src, strlen(set_src), missing, 2};
    ck_assert_int_eq(tusk_cl_kernels_new(cl, &bad, "-DWG=8", &ks, &err), TUSK_ECL);
    tu_assert_error(&err, TUSK_ECL, "clCreateKernel('nope') on ");
    ck_assert_ptr_null(ks);
    ck_assert_int_eq(tusk_cl_kernels_new(cl, &src, NULL, &ks, &err), TUSK_EBUILD); /* WG undefined */
    tu_assert_error(&err, TUSK_EBUILD, "program 'set.cl' did not build");
    tu_assert_error(&err, TUSK_EBUILD, "WG");
    ck_assert_ptr_null(ks);

    /* Fitting: a group the kernels can run is built once; a larger one is
     * built again for the largest power of two they all can, and that is
     * what the kernels are compiled for. */
    fit_log_t log = {{0}, 0};
    unsigned group = 4;
    ck_assert_int_eq(tusk_cl_kernels_fit(cl, &src, TUSK_CL_ALL_KERNELS, fit_options, &log, &group, &ks, &err), TUSK_OK);
    ck_assert_int_eq(log.n, 1);
    ck_assert_uint_eq(group, 4);
    size_t least = tusk_cl_kernels_limit(ks, 0) < tusk_cl_kernels_limit(ks, 1) ? tusk_cl_kernels_limit(ks, 0)
                                                                                : tusk_cl_kernels_limit(ks, 1);
    tusk_cl_kernels_destroy(&ks);
    log.n = 0;
    group = (unsigned)tusk_cl_floor_pow2(least) * 4;
    ck_assert_int_eq(tusk_cl_kernels_fit(cl, &src, TUSK_CL_ALL_KERNELS, fit_options, &log, &group, &ks, &err), TUSK_OK);
    ck_assert_int_ge(log.n, 2);
    ck_assert_uint_eq(log.asked[0], (unsigned)tusk_cl_floor_pow2(least) * 4);
    ck_assert_uint_eq(group, log.asked[log.n - 1]);
    ck_assert_uint_le(group, tusk_cl_kernels_limit(ks, 0));
    ck_assert_uint_le(group, tusk_cl_kernels_limit(ks, 1));
    ck_assert_int_eq(group & (group - 1), 0);
    ck_assert_int_eq(tusk_cl_buffer_room(cl, "out", CL_MEM_WRITE_ONLY, sizeof(cl_int), &room, &err), TUSK_OK);
    out = room.mem;
    ck_assert_int_eq(tusk_cl_kernels_args(ks, 0, args, 2, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_kernels_launch(ks, 0, NULL, 1, 1, NULL, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cl_check(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, sizeof(cl_int), host, 0,
                                                       NULL, NULL),
                                   &err, "clEnqueueReadBuffer"),
                     TUSK_OK);
    ck_assert_int_eq(host[0], (int)group * 1000 + 5);
    tusk_cl_kernels_destroy(&ks);
    /* only the sized kernels count: none, built once as asked */
    log.n = 0;
    group = (unsigned)tusk_cl_floor_pow2(least) * 4;
    ck_assert_int_eq(tusk_cl_kernels_fit(cl, &src, 0, fit_options, &log, &group, &ks, &err), TUSK_OK);
    ck_assert_int_eq(log.n, 1);
    ck_assert_uint_eq(group, (unsigned)tusk_cl_floor_pow2(least) * 4);
    tusk_cl_kernels_destroy(&ks);
    tusk_cl_release_all(cl, &room, 1, NULL, 0);

    /* Pinned rooms: kept while large enough, replaced when not. */
    tusk_cl_pinned_t *pin = NULL;
    ck_assert_int_eq(tusk_cl_pinned_room(cl, "staging", 100, &pin, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_cl_pinned_size(pin), 100 + 25 + 4096);
    tusk_cl_pinned_t *was = pin;
    ck_assert_int_eq(tusk_cl_pinned_room(cl, "staging", 4000, &pin, &err), TUSK_OK);
    ck_assert_ptr_eq(pin, was);
    ck_assert_int_eq(tusk_cl_pinned_room(cl, "staging", 8000, &pin, &err), TUSK_OK);
    ck_assert_uint_eq(tusk_cl_pinned_size(pin), 8000 + 2000 + 4096);
    tusk_cl_release_all(cl, NULL, 0, &pin, 1);
    ck_assert_ptr_null(pin);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 0);

    /* The division option for this device. */
    char opt[96] = "";
    bool via = false;
    int rc = tusk_cl_exact_division(cl, "test", "the CPU", "T_DIV", opt, sizeof opt, &via, &err);
    ck_assert_msg(rc == TUSK_OK || rc == TUSK_ENODEV, "%s", err.message);
    if (rc == TUSK_OK)
        ck_assert_str_eq(opt, via ? "-DT_DIV=1" : "-cl-fp32-correctly-rounded-divide-sqrt");
    tusk_cl_destroy(&cl);
}
END_TEST

START_TEST(selftest_matches_cpu)
{
    tusk_cl_t *cl = open_cl(NULL, NULL);
    tusk_error_t err;
    tusk_cl_selftest_result_t r;
    /* Fresh random input each run (the seed is printed by tu_seed), and a
     * count that is rarely a multiple of the work-group size. */
    size_t signals = 1000 + tu_below(3000);
    uint64_t seed = tu_rand();
    int rc = tusk_cl_selftest(cl, signals, seed, &r, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(r.signals, signals);
    ck_assert_uint_eq(r.seed, seed);
    ck_assert_msg(r.passed, "self-test failed on %s: max rel error %g, argmin mismatches %zu, histogram %zu, checksum %d",
                  tusk_cl_describe(cl), r.max_rel_error, r.argmin_mismatches, r.histogram_mismatches, r.checksum_ok);
    ck_assert(r.checksum_ok);
    ck_assert_uint_eq(r.argmin_mismatches, 0);
    ck_assert_int_eq(r.int64_atomics_used, tusk_cl_device(cl)->int64_atomics);

    /* The fallback for devices without 64-bit atomics (per-group sums
     * added on the host) gives the same answers. */
    cl->info.int64_atomics = false;
    rc = tusk_cl_selftest(cl, signals, seed + 1, &r, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    ck_assert(!r.int64_atomics_used);
    ck_assert_msg(r.passed, "self-test without int64 atomics failed: checksum %d, max rel error %g", r.checksum_ok,
                  r.max_rel_error);
    ck_assert_int_eq(tusk_cl_selftest(cl, 0, seed, &r, &err), TUSK_EINVAL);
    ck_assert_uint_eq(tusk_cl_allocated(cl), 0); /* every buffer released */
    tusk_cl_destroy(&cl);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cl_device");
    TCase *tc = tcase_create("device");
    /* PoCL compiles each program with LLVM: slower than the default 4 s. */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, devices_listed);
    tcase_add_test(tc, selection_on_this_host);
    tcase_add_test(tc, defines_reach_the_kernel);
    tcase_add_test(tc, build_failure_carries_log);
    tcase_add_test(tc, binary_cache);
    tcase_add_test(tc, limits_and_buffers);
    tcase_add_test(tc, bad_launch_names_kernel);
    tcase_add_test(tc, kernel_sets);
    tcase_add_test(tc, selftest_matches_cpu);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
