/* cl_private.h - what the files of libtusk-cl share and tests may reach. */
#ifndef TUSK_CL_PRIVATE_H
#define TUSK_CL_PRIVATE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/cl.h"

struct tusk_cl_devices {
    tusk_cl_device_info_t *items;
    char **extensions; /* owned copies, one per item */
    size_t n, cap;
};

struct tusk_cl {
    tusk_cl_device_info_t info; /* extensions points into ext_copy */
    char *ext_copy;
    cl_context context;
    cl_command_queue queue;
    char *options;              /* the build options of every program */
    char *cache_dir;            /* NULL: cache off */
    char *build_log;            /* the last build's complete log */
    char describe[3 * TUSK_CL_TEXT_MAX + 32];
    size_t allocated;
    tusk_cl_cache_stats_t cache;
};

/* A program and its kernels (cl_kernels.c); here for the tests, which
 * make one up. */
struct tusk_cl_kernels {
    tusk_cl_t *cl;
    cl_program program;
    const char *program_name;   /* the source's, for messages */
    const char *const *names;   /* the caller's */
    size_t n;
    cl_kernel *kernel;          /* n */
    size_t *limit;              /* n: CL_KERNEL_WORK_GROUP_SIZE */
};

/* The group size to build for: `group` when every kernel of `sized` (bit
 * i: limits[i]) can run it, else the largest power of two they all can
 * (0 when one of them cannot run any). */
TUSK_INTERNAL size_t tusk_cl_group_fit(const size_t *limits, size_t n, uint64_t sized, size_t group);

/* tusk_cl_exact_division for a device of single-precision capabilities
 * `fp` and fp64 or not, described as `device`. */
TUSK_INTERNAL int tusk_cl_division_option(cl_device_fp_config fp, bool fp64, const char *device, const char *who,
                                          const char *oracle, const char *via_double, char *buf, size_t cap,
                                          bool *via_double_used, tusk_error_t *err);

/* An empty device list to fill with tusk_cl_devices_add (tests: device
 * selection over made-up devices). */
TUSK_INTERNAL tusk_cl_devices_t *tusk_cl_devices_new_empty(void);
/* Append a copy of `info` (its index is set to the list position). */
TUSK_INTERNAL int tusk_cl_devices_add(tusk_cl_devices_t *devs, const tusk_cl_device_info_t *info, tusk_error_t *err);

/* Query one device's properties into info (platform/device indexes and
 * handles must already be set); *extensions receives a malloc'd copy. */
int tusk_cl_query_device(tusk_cl_device_info_t *info, char **extensions, tusk_error_t *err);

/* cl_cache.c. The key text names everything a binary depends on: the
 * device, its platform and driver versions, the options; the source
 * itself is stored and compared in full, so a stale binary is never used. */
TUSK_INTERNAL char *tusk_cl_cache_key(const tusk_cl_device_info_t *info, const char *options);
/* The cache file for (key, source): DIR/HEX.bin (malloc'd). */
TUSK_INTERNAL char *tusk_cl_cache_path(const char *dir, const char *key, const char *source, size_t size);
/* Load a binary stored for exactly (key, source): 1 and *binary and *binary_size
 * (malloc'd) when found, 0 when absent, -1 when the file is there but is
 * for another key/source or corrupt. */
TUSK_INTERNAL int tusk_cl_cache_load(const char *path, const char *key, const char *source, size_t size,
                                     unsigned char **binary, size_t *binary_size);
/* Check a cache file's bytes against (key, source): 1 and the binary
 * (pointing into data) when they match, -1 otherwise. Fuzzed. */
TUSK_INTERNAL int tusk_cl_cache_parse(const unsigned char *data, size_t n, const char *key, const char *source,
                                      size_t size, const unsigned char **binary, size_t *binary_size);
/* The bytes of a cache file (malloc'd), NULL when too large or no memory. */
TUSK_INTERNAL unsigned char *tusk_cl_cache_encode(const char *key, const char *source, size_t size,
                                                  const unsigned char *binary, size_t binary_size, size_t *total_size);
/* Store atomically (temporary file + rename); failures are not errors
 * (the cache is an optimisation), the result says whether it was written. */
TUSK_INTERNAL bool tusk_cl_cache_store(const char *dir, const char *path, const char *key, const char *source,
                                       size_t size, const unsigned char *binary, size_t binary_size);
/* The folder from config / environment, created if missing; NULL if none
 * can be used. */
TUSK_INTERNAL char *tusk_cl_cache_resolve_dir(const char *configured);


/* The kernels' source, compiled into the library (Makefile.am's SELFTEST_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_cl_selftest_source[];
TUSK_INTERNAL extern const unsigned long tusk_cl_selftest_source_size;

#endif
