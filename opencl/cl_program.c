/* cl_program.c - building programs: options and -D constants, the binary
 * cache, and build failures reported with the device and the log. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_private.h"

int tusk_cl_define(char *buf, size_t cap, const char *name, const char *value, tusk_error_t *err)
{
    if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return tusk_error_set(err, TUSK_EINVAL, "-D name '%s' is not a C identifier", name ? name : "(null)");
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return tusk_error_set(err, TUSK_EINVAL, "-D name '%s' is not a C identifier", name);
    if (value) {
        if (!*value)
            return tusk_error_set(err, TUSK_EINVAL, "-D%s: empty value", name);
        /* Options are split on spaces by the compiler and quoting is not
         * portable across platforms: a value is one plain word. */
        for (const char *p = value; *p; p++)
            if (!isgraph((unsigned char)*p) || *p == '"' || *p == '\'' || *p == '\\')
                return tusk_error_set(err, TUSK_EINVAL,
                                      "-D%s=%s: a value may not contain spaces, quotes or backslashes", name, value);
    }
    size_t used = strlen(buf);
    size_t need = 3 + strlen(name) + (value ? 1 + strlen(value) : 0);
    if (used + need + 1 > cap)
        return tusk_error_set(err, TUSK_ELIMIT, "-D%s: build options longer than %zu characters", name, cap - 1);
    snprintf(buf + used, cap - used, "%s-D%s%s%s", used ? " " : "", name, value ? "=" : "", value ? value : "");
    return TUSK_OK;
}

int tusk_cl_refuse_inexact(const char *options, const char *who, const char *oracle, tusk_error_t *err)
{
    static const char *const inexact[] = {"-cl-fast-relaxed-math", "-cl-mad-enable", "-cl-unsafe-math-optimizations",
                                          "-cl-finite-math-only", "-cl-denorms-are-zero"};
    for (size_t i = 0; options && i < sizeof inexact / sizeof inexact[0]; i++)
        if (strstr(options, inexact[i]))
            return tusk_error_set(err, TUSK_EINVAL,
                                  "%s: build option %s would let the kernels round differently from %s; leave it out",
                                  who, inexact[i], oracle);
    return TUSK_OK;
}

int tusk_cl_division_option(cl_device_fp_config fp, bool fp64, const char *device, const char *who,
                            const char *oracle, const char *via_double, char *buf, size_t cap, bool *via_double_used,
                            tusk_error_t *err)
{
    *via_double_used = false;
    if (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) {
        size_t used = strlen(buf);
        const char *opt = "-cl-fp32-correctly-rounded-divide-sqrt";
        if (used + 1 + strlen(opt) + 1 > cap)
            return tusk_error_set(err, TUSK_ELIMIT, "%s: build options longer than %zu characters", opt, cap - 1);
        snprintf(buf + used, cap - used, "%s%s", used ? " " : "", opt);
        return TUSK_OK;
    }
    if (!fp64)
        return tusk_error_set(err, TUSK_ENODEV,
                              "%s on %s: the device divides floats and takes square roots without correct rounding "
                              "and has no fp64, so its results could differ from %s",
                              who, device, oracle);
    *via_double_used = true;
    return tusk_cl_define(buf, cap, via_double, "1", err);
}

int tusk_cl_exact_division(tusk_cl_t *cl, const char *who, const char *oracle, const char *via_double, char *buf,
                           size_t cap, bool *via_double_used, tusk_error_t *err)
{
    cl_device_fp_config fp = 0;
    int st = tusk_cl_check(clGetDeviceInfo(cl->info.device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL), err,
                           "clGetDeviceInfo(CL_DEVICE_SINGLE_FP_CONFIG) on %s", cl->describe);
    if (st != TUSK_OK)
        return st;
    return tusk_cl_division_option(fp, cl->info.fp64, cl->describe, who, oracle, via_double, buf, cap,
                                   via_double_used, err);
}

static char *join_options(const char *a, const char *b)
{
    size_t n = strlen(a) + (b ? strlen(b) : 0) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", a, *a && b && *b ? " " : "", b ? b : "");
    return s;
}

/* Keep the build log of `program` in cl->build_log. */
static void keep_log(tusk_cl_t *cl, cl_program program)
{
    size_t n = 0;
    char *log = NULL;
    if (clGetProgramBuildInfo(program, cl->info.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
        (log = calloc(1, n + 1)) != NULL &&
        clGetProgramBuildInfo(program, cl->info.device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS)
        log[0] = '\0';
    if (!log)
        return; /* the previous log stays; the error message says the build failed */
    /* Drivers pad logs with blank lines and NULs. */
    size_t len = strlen(log);
    while (len && (log[len - 1] == '\n' || log[len - 1] == ' ' || log[len - 1] == '\r'))
        log[--len] = '\0';
    free(cl->build_log);
    cl->build_log = log;
}

static int build_failed(tusk_cl_t *cl, const char *name, const char *options, cl_int rc, tusk_error_t *err)
{
    if (!err)
        return TUSK_EBUILD;
    const char *log = cl->build_log;
    int head = snprintf(err->message, sizeof err->message,
                        "program '%s' did not build for %s with options '%s': %s (%d); build log:\n", name,
                        cl->describe, options, tusk_cl_strerror(rc), (int)rc);
    err->code = TUSK_EBUILD;
    if (head < 0 || (size_t)head >= sizeof err->message)
        return TUSK_EBUILD;
    size_t room = sizeof err->message - (size_t)head;
    size_t len = strlen(log);
    if (len == 0)
        snprintf(err->message + head, room, "(the driver gave no log)");
    else if (len < room)
        memcpy(err->message + head, log, len + 1);
    else {
        static const char more[] = "\n[... log truncated; tusk_cl_build_log() has it whole]";
        size_t keep = room - sizeof more;
        memcpy(err->message + head, log, keep);
        memcpy(err->message + head + keep, more, sizeof more);
    }
    return TUSK_EBUILD;
}

/* Try the cached binary; true when *out is a built program. */
static bool build_from_cache(tusk_cl_t *cl, const char *path, const char *key, const char *source, size_t size,
                             const char *options, cl_program *out)
{
    unsigned char *bin = NULL;
    size_t bin_size = 0;
    int found = tusk_cl_cache_load(path, key, source, size, &bin, &bin_size);
    if (found <= 0) {
        cl->cache.rejected += found < 0;
        return false;
    }
    cl_int rc, status = CL_SUCCESS;
    const unsigned char *bins[1] = {bin};
    cl_program p = clCreateProgramWithBinary(cl->context, 1, &cl->info.device, &bin_size, bins, &status, &rc);
    free(bin);
    if (rc == CL_SUCCESS && status == CL_SUCCESS)
        rc = clBuildProgram(p, 1, &cl->info.device, options, NULL, NULL);
    else if (rc == CL_SUCCESS)
        rc = status;
    if (rc != CL_SUCCESS) {
        /* A binary the driver refuses (e.g. built by a driver reporting the
         * same version string): rebuild from source, overwrite it. */
        if (p)
            clReleaseProgram(p);
        cl->cache.rejected++;
        return false;
    }
    keep_log(cl, p);
    cl->cache.hits++;
    *out = p;
    return true;
}

static void store_binary(tusk_cl_t *cl, cl_program p, const char *path, const char *key, const char *source,
                         size_t size)
{
    size_t bin_size = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL) != CL_SUCCESS ||
        bin_size == 0)
        return; /* the platform gives no binaries: nothing to cache */
    unsigned char *bin = malloc(bin_size);
    unsigned char *bins[1] = {bin};
    if (bin && clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS &&
        tusk_cl_cache_store(cl->cache_dir, path, key, source, size, bin, bin_size))
        cl->cache.stores++;
    free(bin);
}

int tusk_cl_program_build(tusk_cl_t *cl, const char *name, const char *source, size_t size, const char *options,
                          cl_program *out, tusk_error_t *err)
{
    *out = NULL;
    if (!source || size == 0)
        return tusk_error_set(err, TUSK_EINVAL, "program '%s': empty source", name);
    char *opts = join_options(cl->options, options);
    char *key = opts && cl->cache_dir ? tusk_cl_cache_key(&cl->info, opts) : NULL;
    char *path = key ? tusk_cl_cache_path(cl->cache_dir, key, source, size) : NULL;
    if (!opts || (cl->cache_dir && !path)) {
        free(opts);
        free(key);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    int st = TUSK_OK;
    if (!(path && build_from_cache(cl, path, key, source, size, opts, out))) {
        cl_int rc;
        cl_program p = clCreateProgramWithSource(cl->context, 1, &source, &size, &rc);
        st = tusk_cl_check(rc, err, "clCreateProgramWithSource('%s') on %s", name, cl->describe);
        if (!st) {
            rc = clBuildProgram(p, 1, &cl->info.device, opts, NULL, NULL);
            keep_log(cl, p);
            if (rc == CL_BUILD_PROGRAM_FAILURE || rc == CL_INVALID_BUILD_OPTIONS || rc == CL_COMPILER_NOT_AVAILABLE)
                st = build_failed(cl, name, opts, rc, err);
            else
                st = tusk_cl_check(rc, err, "clBuildProgram('%s') on %s", name, cl->describe);
        }
        if (st) {
            if (p)
                clReleaseProgram(p);
        } else {
            cl->cache.misses++;
            if (path)
                store_binary(cl, p, path, key, source, size);
            *out = p;
        }
    }
    free(opts);
    free(key);
    free(path);
    return st;
}

const char *tusk_cl_build_log(const tusk_cl_t *cl)
{
    return cl->build_log ? cl->build_log : "";
}

int tusk_cl_kernel_new(tusk_cl_t *cl, cl_program program, const char *kernel_name, cl_kernel *out,
                       tusk_error_t *err)
{
    cl_int rc;
    *out = clCreateKernel(program, kernel_name, &rc);
    if (rc != CL_SUCCESS) {
        *out = NULL;
        return tusk_cl_check(rc, err, "clCreateKernel('%s') on %s", kernel_name, cl->describe);
    }
    return TUSK_OK;
}
