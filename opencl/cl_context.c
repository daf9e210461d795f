/* cl_context.c - a device in use: the selected device, its context and
 * the one in-order profiling queue an actor instance works with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cl_private.h"

static bool cache_off_by_env(void)
{
    const char *v = getenv("TUSK_CL_CACHE");
    return v && (strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0 ||
                 strcasecmp(v, "false") == 0);
}

int tusk_cl_new(tusk_cl_t **out, const tusk_cl_config_t *config, tusk_error_t *err)
{
    *out = NULL;
    tusk_cl_config_t none;
    memset(&none, 0, sizeof none);
    if (!config)
        config = &none;
    const char *setting = tusk_cl_device_setting(config->device);
    tusk_cl_spec_t spec;
    int st = tusk_cl_spec_parse(setting, &spec, err);
    if (st)
        return st;

    tusk_cl_devices_t *devs = NULL;
    if ((st = tusk_cl_devices_new(&devs, err)))
        return st;
    size_t chosen = 0;
    if ((st = tusk_cl_select(devs, &spec, config->instance, &chosen, err))) {
        tusk_cl_devices_destroy(&devs);
        return st;
    }
    tusk_cl_t *cl = calloc(1, sizeof *cl);
    if (!cl) {
        tusk_cl_devices_destroy(&devs);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    cl->info = *tusk_cl_devices_get(devs, chosen);
    cl->ext_copy = strdup(cl->info.extensions);
    cl->info.extensions = cl->ext_copy ? cl->ext_copy : "";
    cl->options = strdup(config->build_options ? config->build_options : "");
    cl->build_log = strdup("");
    tusk_cl_devices_destroy(&devs);
    if (!cl->ext_copy || !cl->options || !cl->build_log) {
        tusk_cl_destroy(&cl);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    snprintf(cl->describe, sizeof cl->describe, "%s (%s, driver %s)", cl->info.name, cl->info.platform_name,
             cl->info.driver_version);
    if (!cl->info.available) {
        st = tusk_error_set(err, TUSK_ENODEV, "OpenCL device [%zu] %s is not available", cl->info.index,
                            cl->describe);
        tusk_cl_destroy(&cl);
        return st;
    }

    cl_int rc;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)cl->info.platform, 0};
    cl->context = clCreateContext(props, 1, &cl->info.device, NULL, NULL, &rc);
    if (!(st = tusk_cl_check(rc, err, "clCreateContext on %s", cl->describe))) {
        /* In order: each actor's block is a chain of copies and kernels
         * that must run in sequence; profiling: for kernel timings. */
        cl->queue = clCreateCommandQueue(cl->context, cl->info.device, CL_QUEUE_PROFILING_ENABLE, &rc);
        st = tusk_cl_check(rc, err, "clCreateCommandQueue on %s", cl->describe);
    }
    if (!st && !config->no_cache && !cache_off_by_env())
        cl->cache_dir = tusk_cl_cache_resolve_dir(config->cache_dir); /* NULL: no usable folder, no cache */
    if (st) {
        tusk_cl_destroy(&cl);
        return st;
    }
    *out = cl;
    return TUSK_OK;
}

/* cl.define.NAME = VALUE parameters become -DNAME=VALUE options. */
static int options_from_params(const tusk_params_t *params, char *buf, size_t cap, tusk_error_t *err)
{
    static const char prefix[] = "cl.define.";
    const char *base = tusk_params_string(params, "cl.options", "");
    if (strlen(base) >= cap)
        return tusk_error_set(err, TUSK_ELIMIT, "parameter 'cl.options' is longer than %zu characters", cap - 1);
    snprintf(buf, cap, "%s", base);
    for (size_t i = 0; i < tusk_params_count(params); i++) {
        const char *key = tusk_params_key(params, i);
        if (strncmp(key, prefix, sizeof prefix - 1) != 0)
            continue;
        const char *value = tusk_params_value(params, i);
        int st = tusk_cl_define(buf, cap, key + sizeof prefix - 1, *value ? value : NULL, err);
        if (st) {
            tusk_error_prefix(err, "parameter '%s'", key);
            return st;
        }
    }
    return TUSK_OK;
}

int tusk_cl_new_from_params(tusk_cl_t **out, const tusk_params_t *params, tusk_error_t *err)
{
    *out = NULL;
    tusk_cl_config_t config;
    memset(&config, 0, sizeof config);
    uint64_t instance = 0;
    bool cache = true;
    char options[2048];
    int st;
    if ((st = tusk_params_u64(params, "instance", 0, &instance, err)) ||
        (st = tusk_params_bool(params, "cl.cache", true, &cache, err)) ||
        (st = options_from_params(params, options, sizeof options, err)))
        return st;
    config.device = tusk_params_get(params, "device");
    config.instance = (unsigned)instance;
    config.build_options = options;
    config.no_cache = !cache;
    return tusk_cl_new(out, &config, err);
}

int tusk_cl_new_exact(tusk_cl_t **out, const char *setting, unsigned instance, const char *options, bool no_cache,
                      const char *who, const char *oracle, tusk_error_t *err)
{
    *out = NULL;
    int st = tusk_cl_refuse_inexact(options, who, oracle, err);
    if (st != TUSK_OK)
        return st;
    tusk_cl_config_t config;
    memset(&config, 0, sizeof config);
    config.device = setting;
    config.instance = instance;
    config.build_options = options;
    config.no_cache = no_cache;
    return tusk_cl_new(out, &config, err);
}

void tusk_cl_destroy(tusk_cl_t **clp)
{
    if (!clp || !*clp)
        return;
    tusk_cl_t *cl = *clp;
    if (cl->queue) {
        clFinish(cl->queue);
        clReleaseCommandQueue(cl->queue);
    }
    if (cl->context)
        clReleaseContext(cl->context);
    free(cl->ext_copy);
    free(cl->options);
    free(cl->cache_dir);
    free(cl->build_log);
    free(cl);
    *clp = NULL;
}

const tusk_cl_device_info_t *tusk_cl_device(const tusk_cl_t *cl)
{
    return &cl->info;
}

cl_context tusk_cl_context(const tusk_cl_t *cl)
{
    return cl->context;
}

cl_command_queue tusk_cl_queue(const tusk_cl_t *cl)
{
    return cl->queue;
}

const char *tusk_cl_describe(const tusk_cl_t *cl)
{
    return cl->describe;
}

void tusk_cl_cache_stats(const tusk_cl_t *cl, tusk_cl_cache_stats_t *stats)
{
    *stats = cl->cache;
}

const char *tusk_cl_cache_dir(const tusk_cl_t *cl)
{
    return cl->cache_dir;
}
