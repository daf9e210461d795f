/* cllayout.h - the test of a kernel family's shared header (opencl/README.md,
 * "One source for host and kernel"): a small kernel, appended to the
 * family's embedded source, writes as words what the device sees - the
 * size and field offsets of every shared record, the shared constants,
 * formulas where they are exact - and the host compares them with its own.
 *
 * The words are listed once, with X-macros: a test defines RECORDS(X),
 * FIELDS(X) and CONSTANTS(X) and expands them with the TU_DEV_* macros
 * into the kernel's text and with the TU_HOST_* macros into the host's
 * words (in a function with `uint32_t *out` and `size_t k`). */
#ifndef TUSK_TEST_CLLAYOUT_H
#define TUSK_TEST_CLLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "tusk/cl.h"

#define TU_LAYOUT_MAX 256 /* words a layout kernel writes, at most */

/* Lines of the layout kernel's body (it has `__global uint *out` and `uint k = 0`). */
#define TU_DEV_SIZE(T) "    out[k++] = (uint)sizeof(" #T ");\n"
#define TU_DEV_FIELD(T, f) "    { " #T " v; out[k++] = (uint)((__private char *)&v." #f " - (__private char *)&v); }\n"
#define TU_DEV_CONST(c) "    out[k++] = (uint)(" #c ");\n"
/* The same words on the host. */
#define TU_HOST_SIZE(T) out[k++] = (uint32_t)sizeof(T);
#define TU_HOST_FIELD(T, f) out[k++] = (uint32_t)offsetof(T, f);
#define TU_HOST_CONST(c) out[k++] = (uint32_t)(c);

/* Build source[0..size) (a family's embedded source) followed by the text
 * `layout`, which defines the kernel `name(__global uint *out)`, with
 * `options` on cl; run it on one work-item and compare the n words it
 * writes with host[0..n) (n <= TU_LAYOUT_MAX). A Check failure names the
 * first word that differs and `what`. */
void tu_cl_layout_check(tusk_cl_t *cl, const char *source, size_t size, const char *layout, const char *name,
                        const char *options, const uint32_t *host, size_t n, const char *what);

/* The device the OpenCL tests run on: $TUSK_CL_TEST_DEVICE, else "any". */
const char *tu_cl_test_device(void);

/* The build options a family's library uses on cl's device: its exact
 * division (tusk_cl_exact_division: -cl-fp32-correctly-rounded-divide-sqrt,
 * or -D<via_double>=1 on a device that must divide through double), then
 * `extra` (the family's -D options), into opt (cap bytes). */
void tu_cl_options(tusk_cl_t *cl, const char *via_double, const char *extra, char *opt, size_t cap);

/* Build source[0..size) (a family's embedded source) followed by the text
 * `tests` with `options` on cl, the program named `what`, and make its
 * kernel `name`; the caller releases both. */
void tu_cl_build_with(tusk_cl_t *cl, const char *source, size_t size, const char *tests, const char *what,
                      const char *options, const char *name, cl_program *prog, cl_kernel *k);

/* Whether the OpenCL tests can run here, asked in a child process so that
 * no OpenCL runtime starts (with threads) in the process Check forks:
 * 0 a device is there, go on; 77 none (a SKIPPED line is printed, naming
 * `test`); 99 listing the devices failed (the error is printed). main()
 * returns a non-zero answer as its exit status. */
int tu_cl_device_or_skip(const char *test);

/* The main() of an OpenCL test: tu_cl_device_or_skip(test), no program
 * binaries in the user's cache (TUSK_CL_CACHE=off), then the n tests in
 * one case "opencl" of suite `suite`, 600 s each, run by tu_run. */
int tu_cl_main(const char *test, const char *suite, const TTest *const *tests, size_t n);

#endif
