/* cllayout.c - see cllayout.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "cllayout.h"
#include "testutil.h"

const char *tu_cl_test_device(void)
{
    const char *d = getenv("TUSK_CL_TEST_DEVICE");
    return d && *d ? d : "any";
}

void tu_cl_options(tusk_cl_t *cl, const char *via_double, const char *extra, char *opt, size_t cap)
{
    tusk_error_t err;
    bool used;
    opt[0] = '\0';
    ck_assert_msg(tusk_cl_exact_division(cl, "test", "the reference", via_double, opt, cap, &used, &err) == TUSK_OK,
                  "%s", err.message);
    size_t n = strlen(opt);
    snprintf(opt + n, cap - n, " %s", extra);
}

void tu_cl_build_with(tusk_cl_t *cl, const char *source, size_t size, const char *tests, const char *what,
                      const char *options, const char *name, cl_program *prog, cl_kernel *k)
{
    const size_t m = strlen(tests);
    char *src = malloc(size + m + 1);
    ck_assert_ptr_nonnull(src);
    memcpy(src, source, size);
    memcpy(src + size, tests, m + 1);
    tusk_error_t err;
    ck_assert_msg(tusk_cl_program_build(cl, what, src, size + m, options, prog, &err) == TUSK_OK, "%s", err.message);
    free(src);
    ck_assert_msg(tusk_cl_kernel_new(cl, *prog, name, k, &err) == TUSK_OK, "%s", err.message);
}

void tu_cl_layout_check(tusk_cl_t *cl, const char *source, size_t size, const char *layout, const char *name,
                        const char *options, const uint32_t *host, size_t n, const char *what)
{
    ck_assert_uint_le(n, TU_LAYOUT_MAX);
    tusk_error_t err;
    cl_program prog;
    cl_kernel k;
    tu_cl_build_with(cl, source, size, layout, what, options, name, &prog, &k);
    uint32_t dev[TU_LAYOUT_MAX];
    cl_mem out;
    ck_assert_int_eq(tusk_cl_buffer_new(cl, "layout words", CL_MEM_WRITE_ONLY, sizeof dev, NULL, &out, &err), TUSK_OK);
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof out, &out), CL_SUCCESS);
    size_t one = 1;
    ck_assert_msg(tusk_cl_run(cl, k, 1, &one, &one, NULL, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(clEnqueueReadBuffer(tusk_cl_queue(cl), out, CL_TRUE, 0, n * sizeof *dev, dev, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(host[i] == dev[i], "%s: shared item %zu: host %#x, kernel %#x", what, i, (unsigned)host[i],
                      (unsigned)dev[i]);
    tusk_cl_buffer_release(cl, &out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

int tu_cl_device_or_skip(const char *test)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 99;
    }
    if (pid == 0) {
        tusk_cl_devices_t *devs = NULL;
        tusk_error_t err;
        if (tusk_cl_devices_new(&devs, &err) != TUSK_OK) {
            fprintf(stderr, "%s: listing OpenCL devices: %s\n", test, err.message);
            _exit(2);
        }
        size_t n = tusk_cl_devices_count(devs);
        tusk_cl_devices_destroy(&devs);
        _exit(n > 0 ? 0 : 3);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3)) {
        fprintf(stderr, "%s: listing the OpenCL devices failed\n", test);
        return 99;
    }
    if (WEXITSTATUS(status) == 3) {
        printf("%s: SKIPPED - no OpenCL device on this host (CI has PoCL: apt-get install pocl-opencl-icd)\n", test);
        return 77;
    }
    return 0;
}

int tu_cl_main(const char *test, const char *suite, const TTest *const *tests, size_t n)
{
    int skip = tu_cl_device_or_skip(test);
    if (skip)
        return skip;
    setenv("TUSK_CL_CACHE", "off", 1); /* no program binaries in the user's cache */
    Suite *s = suite_create(suite);
    TCase *tc = tcase_create("opencl");
    tcase_set_timeout(tc, 600);
    for (size_t i = 0; i < n; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
