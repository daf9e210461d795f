/* cl_device.c - the host's OpenCL devices and the selection string that
 * picks one of them (the grammar is in tusk/cl.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cl_private.h"

const char *tusk_cl_device_type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (type & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
#ifdef CL_DEVICE_TYPE_CUSTOM
    if (type & CL_DEVICE_TYPE_CUSTOM)
        return "custom";
#endif
    if (type & CL_DEVICE_TYPE_DEFAULT)
        return "default";
    return "other";
}

bool tusk_cl_has_extension(const tusk_cl_device_info_t *info, const char *ext)
{
    size_t n = strlen(ext);
    const char *p = info->extensions;
    if (!p || n == 0)
        return false;
    while ((p = strstr(p, ext)) != NULL) {
        bool start = p == info->extensions || p[-1] == ' ';
        bool end = p[n] == '\0' || p[n] == ' ';
        if (start && end)
            return true;
        p += n;
    }
    return false;
}

/* ---- querying ---------------------------------------------------------- */

static int text_info(cl_device_id d, cl_device_info what, const char *name, char *buf, size_t cap,
                     tusk_error_t *err)
{
    size_t n = 0;
    cl_int rc = clGetDeviceInfo(d, what, cap, buf, &n);
    if (rc == CL_INVALID_VALUE && n > cap) {
        /* Longer than we keep: fetch it whole, keep the start. */
        char *tmp = malloc(n);
        if (!tmp)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        rc = clGetDeviceInfo(d, what, n, tmp, NULL);
        if (rc == CL_SUCCESS)
            snprintf(buf, cap, "%s", tmp);
        free(tmp);
    }
    if (rc != CL_SUCCESS)
        return tusk_cl_check(rc, err, "clGetDeviceInfo(%s)", name);
    buf[cap - 1] = '\0';
    return TUSK_OK;
}

#define SCALAR(d, what, var)                                                                       \
    do {                                                                                           \
        cl_int rc_ = clGetDeviceInfo((d), (what), sizeof(var), &(var), NULL);                     \
        if (rc_ != CL_SUCCESS)                                                                     \
            return tusk_cl_check(rc_, err, "clGetDeviceInfo(%s) on '%s'", #what, info->name);    \
    } while (0)

int tusk_cl_query_device(tusk_cl_device_info_t *info, char **extensions, tusk_error_t *err)
{
    cl_device_id d = info->device;
    cl_int rc;
    int st;
    *extensions = NULL;
    rc = clGetPlatformInfo(info->platform, CL_PLATFORM_NAME, sizeof info->platform_name, info->platform_name, NULL);
    if (rc == CL_SUCCESS)
        rc = clGetPlatformInfo(info->platform, CL_PLATFORM_VERSION, sizeof info->platform_version,
                               info->platform_version, NULL);
    if (rc != CL_SUCCESS)
        return tusk_cl_check(rc, err, "clGetPlatformInfo (platform %u)", info->platform_index);
    info->platform_name[sizeof info->platform_name - 1] = '\0';
    info->platform_version[sizeof info->platform_version - 1] = '\0';
    if ((st = text_info(d, CL_DEVICE_NAME, "CL_DEVICE_NAME", info->name, sizeof info->name, err)) ||
        (st = text_info(d, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR", info->vendor, sizeof info->vendor, err)) ||
        (st = text_info(d, CL_DRIVER_VERSION, "CL_DRIVER_VERSION", info->driver_version,
                        sizeof info->driver_version, err)) ||
        (st = text_info(d, CL_DEVICE_VERSION, "CL_DEVICE_VERSION", info->version, sizeof info->version, err)) ||
        (st = text_info(d, CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION", info->c_version,
                        sizeof info->c_version, err)))
        return st;
    cl_bool available, compiler, unified;
    SCALAR(d, CL_DEVICE_TYPE, info->type);
    SCALAR(d, CL_DEVICE_MAX_COMPUTE_UNITS, info->compute_units);
    SCALAR(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, info->max_clock_mhz);
    SCALAR(d, CL_DEVICE_GLOBAL_MEM_SIZE, info->global_mem);
    SCALAR(d, CL_DEVICE_LOCAL_MEM_SIZE, info->local_mem);
    SCALAR(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, info->max_alloc);
    SCALAR(d, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, info->max_constant);
    SCALAR(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, info->max_work_group_size);
    SCALAR(d, CL_DEVICE_ADDRESS_BITS, info->address_bits);
    SCALAR(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION, info->timer_resolution_ns);
    SCALAR(d, CL_DEVICE_AVAILABLE, available);
    SCALAR(d, CL_DEVICE_COMPILER_AVAILABLE, compiler);
    SCALAR(d, CL_DEVICE_HOST_UNIFIED_MEMORY, unified);
    info->available = available == CL_TRUE;
    info->compiler_available = compiler == CL_TRUE;
    info->unified_memory = unified == CL_TRUE;

    size_t n = 0;
    rc = clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n);
    if (rc != CL_SUCCESS)
        return tusk_cl_check(rc, err, "clGetDeviceInfo(CL_DEVICE_EXTENSIONS) on '%s'", info->name);
    char *ext = calloc(1, n + 1);
    if (!ext)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    rc = clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL);
    if (rc != CL_SUCCESS) {
        free(ext);
        return tusk_cl_check(rc, err, "clGetDeviceInfo(CL_DEVICE_EXTENSIONS) on '%s'", info->name);
    }
    info->extensions = ext;
    info->fp64 = tusk_cl_has_extension(info, "cl_khr_fp64");
    info->int64_atomics = tusk_cl_has_extension(info, "cl_khr_int64_base_atomics");
    *extensions = ext;
    return TUSK_OK;
}

/* ---- the device list ------------------------------------------------------ */

tusk_cl_devices_t *tusk_cl_devices_new_empty(void)
{
    return calloc(1, sizeof(tusk_cl_devices_t));
}

static int devices_push(tusk_cl_devices_t *devs, const tusk_cl_device_info_t *info, char *ext, tusk_error_t *err)
{
    if (devs->n == devs->cap) {
        size_t cap = devs->cap ? 2 * devs->cap : 4;
        tusk_cl_device_info_t *items = realloc(devs->items, cap * sizeof *items);
        if (items)
            devs->items = items;
        char **exts = items ? realloc(devs->extensions, cap * sizeof *exts) : NULL;
        if (!exts) {
            free(ext);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
        devs->extensions = exts;
        devs->cap = cap;
    }
    devs->items[devs->n] = *info;
    devs->items[devs->n].index = devs->n;
    devs->items[devs->n].extensions = ext ? ext : "";
    devs->extensions[devs->n] = ext;
    devs->n++;
    return TUSK_OK;
}

int tusk_cl_devices_add(tusk_cl_devices_t *devs, const tusk_cl_device_info_t *info, tusk_error_t *err)
{
    char *ext = NULL;
    if (info->extensions && !(ext = strdup(info->extensions)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    return devices_push(devs, info, ext, err);
}

int tusk_cl_devices_new(tusk_cl_devices_t **out, tusk_error_t *err)
{
    *out = NULL;
    tusk_cl_devices_t *devs = tusk_cl_devices_new_empty();
    if (!devs)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &np);
    /* The ICD loader says "no platform" with CL_PLATFORM_NOT_FOUND_KHR
     * (-1001, from cl_ext.h): an empty list. */
    if (rc == -1001 || (rc == CL_SUCCESS && np == 0)) {
        *out = devs;
        return TUSK_OK;
    }
    int st = tusk_cl_check(rc, err, "clGetPlatformIDs");
    cl_platform_id *plats = st ? NULL : calloc(np, sizeof *plats);
    if (!st && !plats)
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (!st)
        st = tusk_cl_check(clGetPlatformIDs(np, plats, NULL), err, "clGetPlatformIDs");
    for (cl_uint p = 0; !st && p < np; p++) {
        cl_uint nd = 0;
        rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (rc == CL_DEVICE_NOT_FOUND || nd == 0)
            continue; /* a platform without devices is not an error */
        if ((st = tusk_cl_check(rc, err, "clGetDeviceIDs (platform %u)", p)))
            break;
        cl_device_id *ids = calloc(nd, sizeof *ids);
        if (!ids) {
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            break;
        }
        st = tusk_cl_check(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL), err,
                           "clGetDeviceIDs (platform %u)", p);
        for (cl_uint d = 0; !st && d < nd; d++) {
            tusk_cl_device_info_t info;
            memset(&info, 0, sizeof info);
            info.platform_index = p;
            info.device_index = d;
            info.platform = plats[p];
            info.device = ids[d];
            char *ext = NULL;
            st = tusk_cl_query_device(&info, &ext, err);
            if (st)
                tusk_error_prefix(err, "platform %u device %u", p, d);
            else
                st = devices_push(devs, &info, ext, err);
        }
        free(ids);
    }
    free(plats);
    if (st) {
        tusk_cl_devices_destroy(&devs);
        return st;
    }
    *out = devs;
    return TUSK_OK;
}

void tusk_cl_devices_destroy(tusk_cl_devices_t **devs)
{
    if (!devs || !*devs)
        return;
    for (size_t i = 0; i < (*devs)->n; i++)
        free((*devs)->extensions[i]);
    free((*devs)->extensions);
    free((*devs)->items);
    free(*devs);
    *devs = NULL;
}

size_t tusk_cl_devices_count(const tusk_cl_devices_t *devs)
{
    return devs ? devs->n : 0;
}

const tusk_cl_device_info_t *tusk_cl_devices_get(const tusk_cl_devices_t *devs, size_t i)
{
    return devs && i < devs->n ? &devs->items[i] : NULL;
}

/* ---- selection strings ---------------------------------------------------- */

const char *tusk_cl_device_setting(const char *setting)
{
    if (setting && *setting)
        return setting;
    const char *env = getenv("TUSK_CL_DEVICE");
    return env && *env ? env : "any";
}

/* A decimal count without sign, spaces or overflow. */
static bool parse_index(const char *s, size_t len, unsigned long *v)
{
    if (len == 0 || len > 9)
        return false;
    unsigned long x = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        x = 10 * x + (unsigned long)(s[i] - '0');
    }
    *v = x;
    return true;
}

int tusk_cl_spec_parse(const char *text, tusk_cl_spec_t *spec, tusk_error_t *err)
{
    memset(spec, 0, sizeof *spec);
    if (!text)
        return tusk_error_set(err, TUSK_EINVAL, "no device selection given");
    size_t len = strlen(text);
    if (len == 0)
        return tusk_error_set(err, TUSK_EINVAL, "empty device selection (expected any, gpu, cpu, an index or a name)");
    if (len >= sizeof spec->name)
        return tusk_error_set(err, TUSK_EINVAL, "device selection '%.40s...' is longer than %zu characters", text,
                              sizeof spec->name - 1);
    for (size_t i = 0; i < len; i++)
        if (!isprint((unsigned char)text[i]))
            return tusk_error_set(err, TUSK_EINVAL, "device selection contains a control character at %zu", i);

    /* The whole text a number: a device index. P.D: platform and device. */
    unsigned long a, b;
    const char *dot = strchr(text, '.');
    if (parse_index(text, len, &a)) {
        spec->match = TUSK_CL_MATCH_INDEX;
        spec->index = a;
        return TUSK_OK;
    }
    if (dot && parse_index(text, (size_t)(dot - text), &a) && parse_index(dot + 1, strlen(dot + 1), &b)) {
        spec->match = TUSK_CL_MATCH_PLATFORM_DEVICE;
        spec->platform = (unsigned)a;
        spec->device = (unsigned)b;
        return TUSK_OK;
    }

    /* WHAT[:K | :instance] - the last colon separates the suffix. */
    const char *colon = strrchr(text, ':');
    size_t wlen = colon ? (size_t)(colon - text) : len;
    spec->nth = 0;
    if (colon) {
        const char *sfx = colon + 1;
        if (strcmp(sfx, "instance") == 0)
            spec->nth = TUSK_CL_NTH_INSTANCE;
        else if (parse_index(sfx, strlen(sfx), &a))
            spec->nth = (int)a;
        else
            return tusk_error_set(err, TUSK_EINVAL,
                                  "device selection '%s': after ':' expected a number or 'instance', got '%s'", text,
                                  sfx);
    }
    if (wlen == 0)
        return tusk_error_set(err, TUSK_EINVAL, "device selection '%s': nothing before ':'", text);
    static const struct {
        const char *word;
        enum tusk_cl_match match;
    } words[] = {{"any", TUSK_CL_MATCH_ANY},
                 {"gpu", TUSK_CL_MATCH_GPU},
                 {"cpu", TUSK_CL_MATCH_CPU},
                 {"accelerator", TUSK_CL_MATCH_ACCELERATOR}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strlen(words[i].word) == wlen && strncasecmp(text, words[i].word, wlen) == 0) {
            spec->match = words[i].match;
            return TUSK_OK;
        }
    }
    if (parse_index(text, wlen, &a))
        return tusk_error_set(err, TUSK_EINVAL,
                              "device selection '%s': a device index takes no ':' suffix (use N or P.D)", text);
    if (isspace((unsigned char)text[0]) || isspace((unsigned char)text[wlen - 1]))
        return tusk_error_set(err, TUSK_EINVAL, "device selection '%s': leading or trailing space", text);
    spec->match = TUSK_CL_MATCH_NAME;
    memcpy(spec->name, text, wlen);
    spec->name[wlen] = '\0';
    return TUSK_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

static bool matches(const tusk_cl_spec_t *spec, const tusk_cl_device_info_t *d)
{
    switch (spec->match) {
    case TUSK_CL_MATCH_ANY: return true;
    case TUSK_CL_MATCH_GPU: return (d->type & CL_DEVICE_TYPE_GPU) != 0;
    case TUSK_CL_MATCH_CPU: return (d->type & CL_DEVICE_TYPE_CPU) != 0;
    case TUSK_CL_MATCH_ACCELERATOR: return (d->type & CL_DEVICE_TYPE_ACCELERATOR) != 0;
    case TUSK_CL_MATCH_INDEX: return d->index == spec->index;
    case TUSK_CL_MATCH_PLATFORM_DEVICE: return d->platform_index == spec->platform && d->device_index == spec->device;
    case TUSK_CL_MATCH_NAME:
        return contains_nocase(d->name, spec->name) || contains_nocase(d->vendor, spec->name) ||
               contains_nocase(d->platform_name, spec->name);
    }
    return false;
}

static void list_devices(const tusk_cl_devices_t *devs, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    if (devs->n == 0) {
        snprintf(buf, cap, "no OpenCL device at all (is an ICD installed? Debian: pocl-opencl-icd)");
        return;
    }
    for (size_t i = 0; i < devs->n && used < cap; i++) {
        const tusk_cl_device_info_t *d = &devs->items[i];
        int w = snprintf(buf + used, cap - used, "%s[%zu] %u.%u %s '%s' (%s)", i ? "; " : "available: ", i,
                         d->platform_index, d->device_index, tusk_cl_device_type_name(d->type), d->name,
                         d->platform_name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static const char *spec_text(const tusk_cl_spec_t *spec, char *buf, size_t cap)
{
    static const char *const kinds[] = {"any", "gpu", "cpu", "accelerator"};
    const char *what = spec->match <= TUSK_CL_MATCH_ACCELERATOR ? kinds[spec->match] : spec->name;
    if (spec->match == TUSK_CL_MATCH_INDEX)
        snprintf(buf, cap, "%zu", spec->index);
    else if (spec->match == TUSK_CL_MATCH_PLATFORM_DEVICE)
        snprintf(buf, cap, "%u.%u", spec->platform, spec->device);
    else if (spec->nth == TUSK_CL_NTH_INSTANCE)
        snprintf(buf, cap, "%s:instance", what);
    else if (spec->nth > 0)
        snprintf(buf, cap, "%s:%d", what, spec->nth);
    else
        snprintf(buf, cap, "%s", what);
    return buf;
}

int tusk_cl_select(const tusk_cl_devices_t *devs, const tusk_cl_spec_t *spec, unsigned instance, size_t *chosen,
                   tusk_error_t *err)
{
    size_t count = 0;
    for (size_t i = 0; i < devs->n; i++)
        count += matches(spec, &devs->items[i]);

    /* "any" prefers GPUs: the first GPU, else the first device. */
    bool gpu_first = spec->match == TUSK_CL_MATCH_ANY;
    size_t ngpu = 0;
    if (gpu_first)
        for (size_t i = 0; i < devs->n; i++)
            ngpu += (devs->items[i].type & CL_DEVICE_TYPE_GPU) != 0;

    char sel[TUSK_CL_TEXT_MAX + 32], avail[TUSK_ERROR_MESSAGE_MAX - 200];
    if (count == 0) {
        list_devices(devs, avail, sizeof avail);
        return tusk_error_set(err, TUSK_ENODEV, "no OpenCL device matches '%s'; %s",
                              spec_text(spec, sel, sizeof sel), avail);
    }
    size_t want;
    if (spec->nth == TUSK_CL_NTH_INSTANCE)
        want = instance % count;
    else
        want = (size_t)spec->nth;
    if (want >= count) {
        list_devices(devs, avail, sizeof avail);
        return tusk_error_set(err, TUSK_ENODEV, "'%s' asks for match %zu but only %zu device%s match%s; %s",
                              spec_text(spec, sel, sizeof sel), want, count, count == 1 ? "" : "s",
                              count == 1 ? "es" : "", avail);
    }
    /* Walk GPUs first for "any", then the others, in list order. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < devs->n; i++) {
            const tusk_cl_device_info_t *d = &devs->items[i];
            bool gpu = (d->type & CL_DEVICE_TYPE_GPU) != 0;
            if (!matches(spec, d))
                continue;
            if (gpu_first && ngpu && (pass == 0) != gpu)
                continue;
            if (!gpu_first && pass == 1)
                break;
            if (want == 0) {
                *chosen = i;
                return TUSK_OK;
            }
            want--;
        }
    }
    return tusk_error_set(err, TUSK_ENODEV, "internal: device selection fell through");
}
