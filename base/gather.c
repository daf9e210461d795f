/* gather.c - frames gathered into parts, parts counted into units (see
 * gather.h). */
#include "base/gather.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

void tusk_gather_init(tusk_gather_t *g, size_t size, void (*release)(void *rec), const char *unit_name,
                      const char *part_name)
{
    memset(g, 0, sizeof *g);
    g->unit_name = unit_name;
    g->part_name = part_name;
    g->size = size;
    g->release = release;
}

void tusk_gather_free(tusk_gather_t *g)
{
    for (size_t i = 0; g->release && i < g->n; i++)
        g->release(g->parts + i * g->size);
    free(g->parts);
    free(g->units);
    tusk_gather_init(g, g->size, g->release, g->unit_name, g->part_name);
}

void *tusk_gather_part(tusk_gather_t *g, uint32_t unit, uint32_t part, tusk_error_t *err)
{
    tusk_part_t *p = tusk_grow_find(&g->parts, &g->n, &g->cap, g->size, (uint64_t)unit << 32 | part);
    if (!p) {
        tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        return NULL;
    }
    p->unit = unit;
    p->part = part;
    return p;
}

void tusk_gather_close(tusk_gather_t *g, void *rec)
{
    if (g->release)
        g->release(rec);
    tusk_grow_drop(g->parts, &g->n, g->size, (size_t)((unsigned char *)rec - g->parts) / g->size);
}

int tusk_gather_unit(tusk_gather_t *g, uint32_t unit, uint32_t parts, tusk_error_t *err)
{
    tusk_unit_t *u = tusk_grow_find(&g->units, &g->n_units, &g->cap_units, sizeof *g->units, unit);
    if (!u)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (u->seen && u->expected != parts)
        return tusk_error_set(err, TUSK_EINVAL, "%s %u: %ss announce %u and %u %ss", g->unit_name, (unsigned)unit,
                              g->part_name, (unsigned)u->expected, (unsigned)parts, g->part_name);
    u->expected = parts;
    u->seen++;
    return TUSK_OK;
}

const tusk_part_t *tusk_gather_open(const tusk_gather_t *g)
{
    return g->n ? (const tusk_part_t *)g->parts : NULL;
}

const tusk_part_t *tusk_gather_lowest(const tusk_gather_t *g)
{
    const tusk_part_t *low = NULL;
    for (size_t i = 0; i < g->n; i++) {
        const tusk_part_t *p = (const tusk_part_t *)(g->parts + i * g->size);
        if (!low || p->key < low->key)
            low = p;
    }
    return low;
}

const tusk_unit_t *tusk_gather_short(const tusk_gather_t *g)
{
    for (size_t i = 0; i < g->n_units; i++)
        if (g->units[i].seen != g->units[i].expected)
            return &g->units[i];
    return NULL;
}

void tusk_gather_missing(unsigned have, const char *const *names, unsigned n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned k = 0; k < n && used < cap; k++)
        if (!(have & (1u << k)))
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", names[k]);
}
