/* runctl.c - see runctl.h. */
#include <string.h>

#include "base/parse.h"
#include "runctl.h"

uint64_t tusk_queue_estimate(const tusk_count_sample_t *before, const tusk_count_sample_t *last,
                             const tusk_count_sample_t *received)
{
    if (!last || !last->valid || !received || !received->valid)
        return 0;
    double sent = (double)last->count;
    uint64_t t = received->at_ms;
    if (before && before->valid && before->at_ms < last->at_ms && before->count <= last->count) {
        if (t <= before->at_ms)
            sent = (double)before->count;
        else if (t < last->at_ms)
            sent = (double)before->count + (double)(last->count - before->count) *
                                               (double)(t - before->at_ms) / (double)(last->at_ms - before->at_ms);
    }
    double q = sent - (double)received->count;
    return q > 0 ? (uint64_t)(q + 0.5) : 0;
}

int tusk_set_arg_parse(const char *text, tusk_set_arg_t *out, tusk_error_t *err)
{
    memset(out, 0, sizeof *out);
    out->instance = -1;
    const char *eq = text ? strchr(text, '=') : NULL;
    if (!eq)
        return tusk_error_set(err, TUSK_EINVAL, "set '%s': give ACTOR.PARAM=VALUE or ACTOR[K].PARAM=VALUE",
                              text ? text : "");
    size_t left = (size_t)(eq - text);
    const char *br = memchr(text, '[', left), *dot;
    size_t name_len;
    if (br) {
        const char *close = memchr(br, ']', left - (size_t)(br - text));
        char digits[16];
        size_t nd = close ? (size_t)(close - br - 1) : 0;
        if (!close || nd == 0 || nd >= sizeof digits)
            return tusk_error_set(err, TUSK_EINVAL, "set '%s': the instance is written ACTOR[K]", text);
        memcpy(digits, br + 1, nd);
        digits[nd] = '\0';
        unsigned k;
        if (tusk_parse_unsigned(digits, 0, 0xFFFF, &k) != TUSK_OK)
            return tusk_error_set(err, TUSK_EINVAL, "set '%s': '%s' is no instance number", text, digits);
        out->instance = (int)k;
        name_len = (size_t)(br - text);
        dot = close + 1;
        if (dot >= eq || *dot != '.')
            return tusk_error_set(err, TUSK_EINVAL, "set '%s': a '.' and the parameter follow ACTOR[K]", text);
    } else {
        dot = memchr(text, '.', left);
        if (!dot)
            return tusk_error_set(err, TUSK_EINVAL, "set '%s': give ACTOR.PARAM=VALUE (no '.' before the '=')",
                                  text);
        name_len = (size_t)(dot - text);
    }
    size_t key_len = (size_t)(eq - dot - 1), value_len = strlen(eq + 1);
    if (name_len == 0 || key_len == 0)
        return tusk_error_set(err, TUSK_EINVAL, "set '%s': the actor or the parameter is empty", text);
    if (name_len >= sizeof out->actor || key_len >= sizeof out->key || value_len >= sizeof out->value)
        return tusk_error_set(err, TUSK_EINVAL, "set '%.64s...': too long", text);
    if (strpbrk(eq + 1, "\n\r"))
        return tusk_error_set(err, TUSK_EINVAL, "set '%s': a value is one line", text);
    memcpy(out->actor, text, name_len);
    memcpy(out->key, dot + 1, key_len);
    memcpy(out->value, eq + 1, value_len);
    return TUSK_OK;
}
