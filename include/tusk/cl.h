/* cl.h - libtusk-cl, the OpenCL device layer shared by every actor that
 * runs a kernel (PSA, tracking).
 *
 * It does once, and right, what each such actor needs:
 *   - choose a device from a setting (topology parameter `device`, or the
 *     environment's TUSK_CL_DEVICE): gpu, cpu, any, an index, a name;
 *   - build programs from sources embedded in the library, with build
 *     options and -D constants, reporting the device and the build log;
 *     create their kernels by name, each sized to what it can run;
 *   - cache program binaries per device, driver, source and options;
 *   - create buffers checked against device limits, pinned host buffers;
 *   - time kernels with profiling events.
 *
 * Functions return TUSK_OK or a negative tusk status (error.h) and fill a
 * tusk_error_t whose message names the OpenCL call, its error code by name
 * (CL_INVALID_VALUE), the device and the object concerned.
 *
 * Targets the OpenCL 1.2 API and OpenCL C 1.2, which both PoCL (the CI
 * device) and NVIDIA's driver accept; an extension is used only after
 * checking for it at run time. */
#ifndef TUSK_CL_H
#define TUSK_CL_H

#include <tusk/export.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes ------------------------------------------------------ */

/* "CL_INVALID_VALUE" for -30; "CL_UNKNOWN_ERROR" for a code not in the
 * OpenCL 1.2-3.0 and common extension tables. */
TUSK_API const char *tusk_cl_strerror(cl_int code);

/* If rc is not CL_SUCCESS: fill err with TUSK_ECL and "WHAT: CL_NAME (rc)"
 * (WHAT formatted from fmt) and return TUSK_ECL; else return TUSK_OK. */
TUSK_API int tusk_cl_check(cl_int rc, tusk_error_t *err, const char *fmt, ...) TUSK_PRINTF(3, 4);

/* ---- devices ------------------------------------------------------------ */

#define TUSK_CL_TEXT_MAX 256

/* What tusk knows of one device (tusk-cl list prints it). */
typedef struct tusk_cl_device_info {
    size_t index;                 /* position in the host's device list */
    unsigned platform_index;      /* clGetPlatformIDs order */
    unsigned device_index;        /* clGetDeviceIDs order within the platform */
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;          /* CL_DEVICE_TYPE_GPU/CPU/ACCELERATOR/... */
    char platform_name[TUSK_CL_TEXT_MAX];
    char platform_version[TUSK_CL_TEXT_MAX];
    char name[TUSK_CL_TEXT_MAX];
    char vendor[TUSK_CL_TEXT_MAX];
    char driver_version[TUSK_CL_TEXT_MAX];
    char version[TUSK_CL_TEXT_MAX];   /* CL_DEVICE_VERSION ("OpenCL 3.0 CUDA") */
    char c_version[TUSK_CL_TEXT_MAX]; /* CL_DEVICE_OPENCL_C_VERSION */
    cl_uint compute_units;
    cl_uint max_clock_mhz;
    cl_ulong global_mem;          /* bytes */
    cl_ulong local_mem;           /* bytes */
    cl_ulong max_alloc;           /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    cl_ulong max_constant;        /* CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE */
    size_t max_work_group_size;
    cl_uint address_bits;
    size_t timer_resolution_ns;   /* CL_DEVICE_PROFILING_TIMER_RESOLUTION */
    bool available;
    bool compiler_available;
    bool unified_memory;          /* CL_DEVICE_HOST_UNIFIED_MEMORY */
    bool fp64;                    /* cl_khr_fp64 */
    bool int64_atomics;           /* cl_khr_int64_base_atomics */
    const char *extensions;       /* space-separated; owned by the list */
} tusk_cl_device_info_t;

/* "GPU", "CPU", "accelerator", "custom", "default" or "other". */
TUSK_API const char *tusk_cl_device_type_name(cl_device_type type);

/* True if the space-separated extension list names `ext` exactly. */
TUSK_API bool tusk_cl_has_extension(const tusk_cl_device_info_t *info, const char *ext);

typedef struct tusk_cl_devices tusk_cl_devices_t;

/* Every device of every platform the ICD loader knows. A host with no
 * platform at all gives an empty list (not an error). */
TUSK_API int tusk_cl_devices_new(tusk_cl_devices_t **out, tusk_error_t *err);
TUSK_API void tusk_cl_devices_destroy(tusk_cl_devices_t **devs);
TUSK_API size_t tusk_cl_devices_count(const tusk_cl_devices_t *devs);
TUSK_API const tusk_cl_device_info_t *tusk_cl_devices_get(const tusk_cl_devices_t *devs, size_t i);

/* ---- device selection ---------------------------------------------------
 *
 * A selection string is one of
 *   any          the first GPU, else the first device of any type (default)
 *   gpu  cpu  accelerator
 *                the first device of that type
 *   N            device N of the host's list (the index tusk-cl list shows)
 *   P.D          device D of platform P
 *   TEXT         the first device whose name, vendor or platform name
 *                contains TEXT, ignoring case ("H100", "pthread", "nvidia")
 * and any form but N and P.D takes a suffix
 *   :K           the K-th (0-based) matching device instead of the first
 *                ("gpu:1", the second GPU of the host)
 *   :instance    the (instance mod count)-th matching device, so that the
 *                instances of a load-shared actor spread over the GPUs
 */

enum tusk_cl_match {
    TUSK_CL_MATCH_ANY,
    TUSK_CL_MATCH_GPU,
    TUSK_CL_MATCH_CPU,
    TUSK_CL_MATCH_ACCELERATOR,
    TUSK_CL_MATCH_INDEX,           /* `index` */
    TUSK_CL_MATCH_PLATFORM_DEVICE, /* `platform`, `device` */
    TUSK_CL_MATCH_NAME             /* `name` */
};

#define TUSK_CL_NTH_INSTANCE (-1)

typedef struct tusk_cl_spec {
    enum tusk_cl_match match;
    int nth;                  /* which match, 0-based, or TUSK_CL_NTH_INSTANCE */
    size_t index;
    unsigned platform, device;
    char name[TUSK_CL_TEXT_MAX];
} tusk_cl_spec_t;

/* Parse a selection string (TUSK_EINVAL with the reason on bad text). */
TUSK_API int tusk_cl_spec_parse(const char *text, tusk_cl_spec_t *spec, tusk_error_t *err);

/* The selection in effect: `setting` when given and not empty, else
 * $TUSK_CL_DEVICE when set and not empty, else "any". */
TUSK_API const char *tusk_cl_device_setting(const char *setting);

/* Choose a device of `devs` for `spec`; `instance` stands in for
 * ":instance". TUSK_ENODEV when nothing matches, with a message that
 * lists the devices there are. */
TUSK_API int tusk_cl_select(const tusk_cl_devices_t *devs, const tusk_cl_spec_t *spec, unsigned instance,
                            size_t *chosen, tusk_error_t *err);

/* ---- a device in use: context and queue --------------------------------- */

typedef struct tusk_cl_config {
    const char *device;        /* selection string; NULL: tusk_cl_device_setting(NULL) */
    unsigned instance;         /* for ":instance" */
    const char *build_options; /* added to every program's options (may be NULL) */
    const char *cache_dir;     /* NULL: $TUSK_CL_CACHE_DIR, else $XDG_CACHE_HOME/tusk,
                                  else $HOME/.cache/tusk */
    bool no_cache;             /* no binary cache (also TUSK_CL_CACHE=off) */
} tusk_cl_config_t;

typedef struct tusk_cl tusk_cl_t;

/* Select a device, create its context and one in-order queue with
 * profiling enabled. */
TUSK_API int tusk_cl_new(tusk_cl_t **out, const tusk_cl_config_t *config, tusk_error_t *err);

/* The same from an actor's parameters (add TUSK_CL_PARAM_KEYS to the
 * actor's tusk_params_expect list):
 *   device        selection string (default: $TUSK_CL_DEVICE, else any)
 *   cl.options    build options for every program
 *   cl.cache      on/off, the program-binary cache (default on)
 *   cl.define.X   adds -DX=VALUE to every program's options
 * and the host's `instance` for ":instance". */
#define TUSK_CL_PARAM_KEYS "device", "cl.options", "cl.cache", "cl.define.*"
TUSK_API int tusk_cl_new_from_params(tusk_cl_t **out, const tusk_params_t *params, tusk_error_t *err);

/* tusk_cl_new for a kernel family whose results are compared bit for bit
 * with a CPU: `options` refused first when inexact (tusk_cl_refuse_inexact,
 * naming `who` and `oracle`; no device is touched then), else the device
 * of `setting` (`instance` for ":instance") with those build options, and
 * the binary cache unless no_cache. */
TUSK_API int tusk_cl_new_exact(tusk_cl_t **out, const char *setting, unsigned instance, const char *options,
                               bool no_cache, const char *who, const char *oracle, tusk_error_t *err);

TUSK_API void tusk_cl_destroy(tusk_cl_t **cl);

TUSK_API const tusk_cl_device_info_t *tusk_cl_device(const tusk_cl_t *cl);
TUSK_API cl_context tusk_cl_context(const tusk_cl_t *cl);
TUSK_API cl_command_queue tusk_cl_queue(const tusk_cl_t *cl);
/* "NAME (PLATFORM, driver VERSION)" for logs. */
TUSK_API const char *tusk_cl_describe(const tusk_cl_t *cl);

/* ---- programs ------------------------------------------------------------ */

/* Append " -DNAME=VALUE" (or " -DNAME" when value is NULL) to the
 * NUL-terminated options in buf. NAME must be a C identifier and VALUE a
 * non-empty word without spaces, quotes or backslashes (TUSK_EINVAL);
 * TUSK_ELIMIT when buf is too small (buf is then unchanged). */
TUSK_API int tusk_cl_define(char *buf, size_t cap, const char *name, const char *value, tusk_error_t *err);

/* TUSK_EINVAL, naming `who`, the option and `oracle` (what the kernels
 * must agree with bit for bit), when `options` (may be NULL) holds a build
 * option that lets the compiler change the arithmetic: fast-relaxed,
 * mad-enable, unsafe-math, finite-math-only or denorms-are-zero. For
 * kernel families whose results are compared exactly with a CPU backend. */
TUSK_API int tusk_cl_refuse_inexact(const char *options, const char *who, const char *oracle, tusk_error_t *err);

/* Build `source` (`size` bytes; `name` names it in messages) for cl's
 * device with cl's options followed by `options` (may be NULL). A cached
 * binary for the same device, driver, source and options is used when
 * there is one; a successful source build is added to the cache.
 * TUSK_EBUILD on a compile error: the message names the program and the
 * device and carries the build log (as much as fits; the whole log is
 * kept, see tusk_cl_build_log). */
TUSK_API int tusk_cl_program_build(tusk_cl_t *cl, const char *name, const char *source, size_t size,
                                   const char *options, cl_program *out, tusk_error_t *err);

/* The complete log of the last build on cl ("" when none). */
TUSK_API const char *tusk_cl_build_log(const tusk_cl_t *cl);

/* clCreateKernel with an error that names the kernel and the program. */
TUSK_API int tusk_cl_kernel_new(tusk_cl_t *cl, cl_program program, const char *kernel_name, cl_kernel *out,
                                tusk_error_t *err);

/* The largest power of two not above n (1 for n < 2). */
TUSK_API size_t tusk_cl_floor_pow2(size_t n);

/* Options for kernels whose results must equal a CPU's bit for bit: float
 * division and square root rounded as on the CPU. Appends to the options
 * in buf (cap bytes) -cl-fp32-correctly-rounded-divide-sqrt where the
 * device has it (CL_DEVICE_SINGLE_FP_CONFIG), else -D`via_double`=1 where
 * it has fp64 (the kernels then divide in double; *via_double_used true);
 * TUSK_ENODEV naming `who`, the device and `oracle` where it has neither. */
TUSK_API int tusk_cl_exact_division(tusk_cl_t *cl, const char *who, const char *oracle, const char *via_double,
                                    char *buf, size_t cap, bool *via_double_used, tusk_error_t *err);

/* ---- a program and its kernels ------------------------------------------
 *
 * A kernel family's program, built from its embedded source, with the
 * kernels it names and each one's work-group limit on the device
 * (CL_KERNEL_WORK_GROUP_SIZE, which on a GPU falls with the registers the
 * kernel needs). Kernels are addressed by their index in `kernels`; one
 * call releases everything. Errors name the cl* call, its status, the
 * kernel or program and the device; a failed build carries its log. */

typedef struct tusk_cl_source {
    const char *name;            /* "sts.cl", in messages */
    const char *text;            /* the source (tools/embed-text.sh's array) */
    size_t size;
    const char *const *kernels;  /* the kernels' names; must outlive the program */
    size_t n_kernels;
} tusk_cl_source_t;

typedef struct tusk_cl_kernels tusk_cl_kernels_t;

/* Build src with `options` (tusk_cl_program_build) and create its kernels.
 * TUSK_ELIMIT when a kernel cannot run even one work-item. */
TUSK_API int tusk_cl_kernels_new(tusk_cl_t *cl, const tusk_cl_source_t *src, const char *options,
                                 tusk_cl_kernels_t **out, tusk_error_t *err);

/* The options of a build whose kernels are compiled for work-groups of
 * `group` work-items, written into buf (cap bytes, empty on entry). */
typedef int (*tusk_cl_options_fn)(void *ctx, unsigned group, char *buf, size_t cap, tusk_error_t *err);

#define TUSK_CL_ALL_KERNELS UINT64_MAX

/* Build src for work-groups of *group work-items (options(ctx, *group)):
 * while a kernel of `sized` (bit i: kernel i; TUSK_CL_ALL_KERNELS) cannot
 * run that many, *group becomes the largest power of two they all can
 * and the program is built again. */
TUSK_API int tusk_cl_kernels_fit(tusk_cl_t *cl, const tusk_cl_source_t *src, uint64_t sized, tusk_cl_options_fn options,
                                 void *ctx, unsigned *group, tusk_cl_kernels_t **out, tusk_error_t *err);

/* Release the kernels and the program; *ks becomes NULL. */
TUSK_API void tusk_cl_kernels_destroy(tusk_cl_kernels_t **ks);

TUSK_API cl_kernel tusk_cl_kernels_get(const tusk_cl_kernels_t *ks, size_t i);
TUSK_API const char *tusk_cl_kernels_name(const tusk_cl_kernels_t *ks, size_t i);
/* Kernel i's CL_KERNEL_WORK_GROUP_SIZE (at least 1). */
TUSK_API size_t tusk_cl_kernels_limit(const tusk_cl_kernels_t *ks, size_t i);
/* `want` work-items when kernel i can run them, else the largest power
 * of two it can. */
TUSK_API size_t tusk_cl_kernels_group(const tusk_cl_kernels_t *ks, size_t i, size_t want);

/* A kernel argument: its size and where its value is. */
typedef struct tusk_cl_arg {
    size_t size;
    const void *value;
} tusk_cl_arg_t;
#define TUSK_CL_ARG(x) {sizeof(x), &(x)}

/* clSetKernelArg of kernel i: argument `index`; arguments 0 .. n-1 from
 * args; arguments 0 .. n-1 the buffers mems. */
TUSK_API int tusk_cl_kernels_arg(tusk_cl_kernels_t *ks, size_t i, cl_uint index, size_t size, const void *value,
                                 tusk_error_t *err);
TUSK_API int tusk_cl_kernels_args(tusk_cl_kernels_t *ks, size_t i, const tusk_cl_arg_t *args, size_t n,
                                  tusk_error_t *err);
TUSK_API int tusk_cl_kernels_buffers(tusk_cl_kernels_t *ks, size_t i, const cl_mem *mems, size_t n,
                                     tusk_error_t *err);

/* Enqueue kernel i over `groups` work-groups of `local` work-items (one
 * dimension) on queue q (NULL: cl's queue); *ev, when ev is not NULL,
 * receives the kernel's event. */
TUSK_API int tusk_cl_kernels_launch(tusk_cl_kernels_t *ks, size_t i, cl_command_queue q, size_t groups, size_t local,
                                    cl_event *ev, tusk_error_t *err);

/* The device memory's bandwidth in GB/s (bytes read and written), the
 * best of `repeat` runs after a warm-up, of kernel i: a copy of n 16-byte
 * words, (__global const uint4 *src, __global uint4 *dst, uint n), over
 * 16 work-groups a compute unit of `local` work-items. `bytes` is rounded
 * down to 16 and to the device's largest allocation; `who` names the
 * buffers in messages. */
TUSK_API int tusk_cl_kernels_bandwidth(tusk_cl_kernels_t *ks, size_t i, size_t local, size_t bytes, unsigned repeat,
                                       const char *who, double *gb_s, tusk_error_t *err);

typedef struct tusk_cl_cache_stats {
    unsigned long hits;       /* programs built from a cached binary */
    unsigned long misses;     /* programs built from source */
    unsigned long stores;     /* binaries written to the cache */
    unsigned long rejected;   /* cache files refused: other key, corrupt, or failing to build */
} tusk_cl_cache_stats_t;

TUSK_API void tusk_cl_cache_stats(const tusk_cl_t *cl, tusk_cl_cache_stats_t *stats);
/* The cache folder in use, or NULL when the cache is off. */
TUSK_API const char *tusk_cl_cache_dir(const tusk_cl_t *cl);

/* ---- memory ---------------------------------------------------------------- */

/* clCreateBuffer after checking `size` against the device's maximum
 * allocation and against its global memory less what this tusk_cl_t has
 * already allocated: TUSK_ELIMIT with a message naming `what`, the size and
 * the limit, instead of a driver failure later. */
TUSK_API int tusk_cl_buffer_new(tusk_cl_t *cl, const char *what, cl_mem_flags flags, size_t size, void *host_ptr,
                                cl_mem *out, tusk_error_t *err);
/* Release a buffer made by tusk_cl_buffer_new; *mem becomes NULL. */
TUSK_API void tusk_cl_buffer_release(tusk_cl_t *cl, cl_mem *mem);
/* A device buffer that grows with the batches it serves: {NULL, 0} at
 * first. */
typedef struct tusk_cl_room {
    cl_mem mem;
    size_t cap; /* bytes */
} tusk_cl_room_t;

/* Make room->mem hold at least `bytes` (contents not kept): when it is
 * smaller or none, it is released and one of bytes + a quarter + 4 KiB
 * made. */
TUSK_API int tusk_cl_buffer_room(tusk_cl_t *cl, const char *what, cl_mem_flags flags, size_t bytes,
                                 tusk_cl_room_t *room, tusk_error_t *err);
/* clEnqueueWriteBuffer, clEnqueueReadBuffer of `bytes` from the buffer's
 * start, and a fill of them with zeros, on queue q (NULL: cl's queue),
 * waiting for it when `blocking`; *ev its event (ev may be NULL). The
 * error names the call, `what`, the bytes and the device. */
TUSK_API int tusk_cl_write(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, cl_bool blocking, size_t bytes,
                           const void *src, cl_event *ev, const char *what, tusk_error_t *err);
TUSK_API int tusk_cl_read(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, cl_bool blocking, size_t bytes, void *dst,
                          cl_event *ev, const char *what, tusk_error_t *err);
TUSK_API int tusk_cl_zero(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, size_t bytes, const char *what,
                          tusk_error_t *err);

/* Bytes currently allocated through tusk_cl_buffer_new. */
TUSK_API size_t tusk_cl_allocated(const tusk_cl_t *cl);

/* Pinned host memory for streaming: a buffer allocated by the driver in
 * page-locked host memory (CL_MEM_ALLOC_HOST_PTR) and mapped once; copies
 * between it and device buffers go at DMA speed. */
typedef struct tusk_cl_pinned tusk_cl_pinned_t;
TUSK_API int tusk_cl_pinned_new(tusk_cl_t *cl, const char *what, size_t size, tusk_cl_pinned_t **out,
                                tusk_error_t *err);
TUSK_API void tusk_cl_pinned_destroy(tusk_cl_pinned_t **pinned);
TUSK_API void *tusk_cl_pinned_ptr(const tusk_cl_pinned_t *pinned);
TUSK_API cl_mem tusk_cl_pinned_mem(const tusk_cl_pinned_t *pinned);
TUSK_API size_t tusk_cl_pinned_size(const tusk_cl_pinned_t *pinned);
/* The same for a pinned buffer (*pinned NULL or smaller than bytes). */
TUSK_API int tusk_cl_pinned_room(tusk_cl_t *cl, const char *what, size_t bytes, tusk_cl_pinned_t **pinned,
                                 tusk_error_t *err);
/* Wait for cl's queue, then release rooms[0 .. n_rooms) and pinned[0 ..
 * n_pinned); each becomes empty. Nothing when cl is NULL. */
TUSK_API void tusk_cl_release_all(tusk_cl_t *cl, tusk_cl_room_t *rooms, size_t n_rooms, tusk_cl_pinned_t **pinned,
                                  size_t n_pinned);

/* ---- kernels and timing ---------------------------------------------------- */

/* Kernel time statistics from profiling events (the queue of a tusk_cl_t
 * has CL_QUEUE_PROFILING_ENABLE); actors print them in their statistics. */
typedef struct tusk_cl_timing {
    uint64_t count;
    uint64_t total_ns;
    uint64_t min_ns;
    uint64_t max_ns;
} tusk_cl_timing_t;

TUSK_API void tusk_cl_timing_reset(tusk_cl_timing_t *timing);
/* Add the START..END time of a completed event (waits for it). */
TUSK_API int tusk_cl_timing_add(tusk_cl_timing_t *timing, cl_event event, tusk_error_t *err);
/* "N runs, mean X ms, min X ms, max X ms, total X ms" */
TUSK_API void tusk_cl_timing_format(const tusk_cl_timing_t *timing, char *buf, size_t cap);

/* Milliseconds from START to END of a finished event of a profiling
 * queue; 0 for NULL or when the driver gives no times. */
TUSK_API double tusk_cl_event_ms(cl_event event);
/* The sum of tusk_cl_event_ms over ev[0 .. n). */
TUSK_API double tusk_cl_events_ms(const cl_event *ev, size_t n);
/* Release the events of ev[0 .. n) that are not NULL; each becomes NULL. */
TUSK_API void tusk_cl_events_release(cl_event *ev, size_t n);
/* The end of a run of enqueued work: when `status` is a failure, wait for
 * queue q so that nothing enqueued still uses the buffers; then release
 * the events ev[0 .. n). Returns status. */
TUSK_API int tusk_cl_run_end(cl_command_queue q, int status, cl_event *ev, size_t n);

/* clEnqueueNDRangeKernel on cl's queue (local may be NULL); when timing is
 * not NULL, waits for the kernel and adds its time. The error names the
 * kernel and the sizes. */
TUSK_API int tusk_cl_run(tusk_cl_t *cl, cl_kernel kernel, cl_uint dims, const size_t *global, const size_t *local,
                         tusk_cl_timing_t *timing, tusk_error_t *err);

/* ---- self-test ------------------------------------------------------------- */

/* A grid-search kernel in miniature (PSA's shape: for each signal, the
 * chi-square against every basis signal in local memory, the best one, a
 * histogram with atomics, a 64-bit checksum with int64 atomics where the
 * device has them and a per-group fallback elsewhere), run on cl's device
 * and compared with the same computation on the CPU. */
typedef struct tusk_cl_selftest_result {
    size_t signals;
    uint64_t seed;
    double max_rel_error;     /* chi-square of the device vs the CPU */
    size_t argmin_mismatches; /* device's best basis not within tolerance of the CPU's best */
    size_t histogram_mismatches;
    bool checksum_ok;
    bool int64_atomics_used;
    double device_ms;         /* kernel time from profiling events */
    double cpu_ms;
    bool passed;
} tusk_cl_selftest_result_t;

/* Run the self-test on `signals` random signals from `seed`. Returns
 * TUSK_OK when it ran (result->passed says whether device and CPU
 * agreed), or the OpenCL error that stopped it. */
TUSK_API int tusk_cl_selftest(tusk_cl_t *cl, size_t signals, uint64_t seed, tusk_cl_selftest_result_t *result,
                              tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
