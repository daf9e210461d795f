/* hostlist.c - Slurm's compact host lists, expanded (see hostlist.h). */
#include "base/hostlist.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGITS_MAX 9 /* a bound fits an unsigned long on every platform */

typedef struct range {
    unsigned long lo, hi;
    int width; /* digits to pad to (0: none) */
} range_t;

/* A literal, then (when n_ranges > 0) one bracketed group. */
typedef struct seg {
    const char *lit;
    size_t lit_len;
    range_t *ranges;
    size_t n_ranges;
} seg_t;

typedef struct item {
    seg_t *segs;
    size_t n_segs;
} item_t;

static bool name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
           ch == '.' || ch == '_';
}

static void items_free(item_t *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t s = 0; s < items[i].n_segs; s++)
            free(items[i].segs[s].ranges);
        free(items[i].segs);
    }
    free(items);
}

/* One bound at text[*pos]: 1..DIGITS_MAX digits. */
static int parse_bound(const char *text, size_t *pos, unsigned long *v, size_t *digits, tusk_error_t *err)
{
    size_t start = *pos;
    unsigned long x = 0;
    while (text[*pos] >= '0' && text[*pos] <= '9') {
        if (*pos - start == DIGITS_MAX)
            return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: a number longer than %d digits",
                                  start + 1, DIGITS_MAX);
        x = x * 10 + (unsigned long)(text[*pos] - '0');
        (*pos)++;
    }
    if (*pos == start) {
        if (text[*pos] == '\0')
            return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: '[' at the end is not closed",
                                  start + 1);
        return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: a number expected in brackets, not '%c'",
                              start + 1, text[*pos]);
    }
    *v = x;
    *digits = *pos - start;
    return TUSK_OK;
}

/* The group after '[' at text[*pos] up to its ']': its ranges, and the
 * count of numbers they hold (capped at limit + 1). */
static int parse_group(const char *text, size_t *pos, seg_t *seg, uint64_t limit, uint64_t *count, tusk_error_t *err)
{
    size_t open = *pos - 1, cap = 0;
    *count = 0;
    for (;;) {
        range_t r;
        size_t d_lo, d_hi, at = *pos;
        int rc = parse_bound(text, pos, &r.lo, &d_lo, err);
        if (rc != TUSK_OK)
            return rc;
        r.hi = r.lo;
        r.width = d_lo > 1 && text[at] == '0' ? (int)d_lo : 0;
        if (text[*pos] == '-') {
            (*pos)++;
            if ((rc = parse_bound(text, pos, &r.hi, &d_hi, err)) != TUSK_OK)
                return rc;
            if (r.hi < r.lo)
                return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: range %lu-%lu goes down", at + 1,
                                      r.lo, r.hi);
        }
        if (seg->n_ranges == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            range_t *grown = realloc(seg->ranges, ncap * sizeof *grown);
            if (!grown)
                return tusk_error_set(err, TUSK_ENOMEM, "host list: out of memory");
            seg->ranges = grown;
            cap = ncap;
        }
        seg->ranges[seg->n_ranges++] = r;
        *count += (uint64_t)(r.hi - r.lo) + 1;
        if (*count > limit)
            *count = limit + 1;
        if (text[*pos] == ',') {
            (*pos)++;
            continue;
        }
        if (text[*pos] == ']') {
            (*pos)++;
            return TUSK_OK;
        }
        if (text[*pos] == '\0')
            return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: '[' is not closed", open + 1);
        return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: '%c' in brackets (numbers, '-' and ',' only)",
                              *pos + 1, text[*pos]);
    }
}

/* One name of the list, from text[*pos] to the next top-level ',' or the
 * end; *count: the names it expands to (capped at limit + 1). */
static int parse_item(const char *text, size_t *pos, item_t *item, uint64_t limit, uint64_t *count,
                      tusk_error_t *err)
{
    size_t start = *pos, cap = 0;
    *count = 1;
    while (text[*pos] != ',' && text[*pos] != '\0') {
        if (item->n_segs == cap) {
            size_t ncap = cap ? cap * 2 : 2;
            seg_t *grown = realloc(item->segs, ncap * sizeof *grown);
            if (!grown)
                return tusk_error_set(err, TUSK_ENOMEM, "host list: out of memory");
            item->segs = grown;
            cap = ncap;
        }
        seg_t *seg = &item->segs[item->n_segs++];
        memset(seg, 0, sizeof *seg);
        seg->lit = text + *pos;
        while (name_char(text[*pos]))
            (*pos)++;
        seg->lit_len = (size_t)(text + *pos - seg->lit);
        char ch = text[*pos];
        if (ch == '[') {
            (*pos)++;
            uint64_t k;
            int rc = parse_group(text, pos, seg, limit, &k, err);
            if (rc != TUSK_OK)
                return rc;
            *count = *count * k > limit ? limit + 1 : *count * k;
        } else if (ch == ']') {
            return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: ']' without '['", *pos + 1);
        } else if (ch != ',' && ch != '\0') {
            if (ch == ' ' || ch == '\t' || ch == '\n')
                return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: a space (names are separated by ',')",
                                      *pos + 1);
            return tusk_error_set(err, TUSK_EINVAL,
                                  "host list, column %zu: '%c' in a host name (letters, digits and - . _ only)",
                                  *pos + 1, ch);
        }
    }
    if (*pos == start)
        return tusk_error_set(err, TUSK_EINVAL, "host list, column %zu: an empty name", start + 1);
    return TUSK_OK;
}

typedef struct out {
    char **hosts;
    size_t n;
} out_t;

static int emit(const item_t *item, size_t s, char *name, size_t len, out_t *out, tusk_error_t *err)
{
    if (s == item->n_segs) {
        char *copy = malloc(len + 1);
        if (!copy)
            return tusk_error_set(err, TUSK_ENOMEM, "host list: out of memory");
        memcpy(copy, name, len);
        copy[len] = '\0';
        out->hosts[out->n++] = copy;
        return TUSK_OK;
    }
    const seg_t *seg = &item->segs[s];
    if (len + seg->lit_len > TUSK_HOSTLIST_NAME_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "host list: a name longer than %u characters ('%.*s...')",
                              TUSK_HOSTLIST_NAME_MAX, (int)len, name);
    memcpy(name + len, seg->lit, seg->lit_len);
    len += seg->lit_len;
    if (seg->n_ranges == 0)
        return emit(item, s + 1, name, len, out, err);
    for (size_t r = 0; r < seg->n_ranges; r++)
        for (unsigned long v = seg->ranges[r].lo;; v++) {
            char num[32];
            int w = snprintf(num, sizeof num, "%0*lu", seg->ranges[r].width, v);
            if (len + (size_t)w > TUSK_HOSTLIST_NAME_MAX)
                return tusk_error_set(err, TUSK_EINVAL, "host list: a name longer than %u characters ('%.*s...')",
                                      TUSK_HOSTLIST_NAME_MAX, (int)len, name);
            memcpy(name + len, num, (size_t)w);
            int rc = emit(item, s + 1, name, len + (size_t)w, out, err);
            if (rc != TUSK_OK)
                return rc;
            if (v == seg->ranges[r].hi)
                break;
        }
    return TUSK_OK;
}

void tusk_hostlist_free(char **hosts, size_t n)
{
    if (!hosts)
        return;
    for (size_t i = 0; i < n; i++)
        free(hosts[i]);
    free(hosts);
}

int tusk_hostlist_expand(const char *text, size_t max_hosts, char ***hosts, size_t *n, tusk_error_t *err)
{
    *hosts = NULL;
    *n = 0;
    uint64_t limit = max_hosts == 0 || max_hosts > TUSK_HOSTLIST_MAX ? TUSK_HOSTLIST_MAX : max_hosts;
    item_t *items = NULL;
    size_t n_items = 0, cap = 0, pos = 0;
    uint64_t total = 0;
    int rc = TUSK_OK;
    for (;;) {
        if (n_items == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            item_t *grown = realloc(items, ncap * sizeof *grown);
            if (!grown) {
                rc = tusk_error_set(err, TUSK_ENOMEM, "host list: out of memory");
                break;
            }
            items = grown;
            cap = ncap;
        }
        item_t *item = &items[n_items++];
        memset(item, 0, sizeof *item);
        uint64_t k;
        if ((rc = parse_item(text, &pos, item, limit, &k, err)) != TUSK_OK)
            break;
        total += k;
        if (total > limit) {
            rc = tusk_error_set(err, TUSK_ELIMIT, "host list: more than %llu names", (unsigned long long)limit);
            break;
        }
        if (text[pos] == '\0')
            break;
        pos++; /* the ',' */
    }
    out_t out = {NULL, 0};
    if (rc == TUSK_OK && !(out.hosts = malloc((size_t)total * sizeof *out.hosts)))
        rc = tusk_error_set(err, TUSK_ENOMEM, "host list: out of memory");
    char name[TUSK_HOSTLIST_NAME_MAX + 1];
    for (size_t i = 0; rc == TUSK_OK && i < n_items; i++)
        rc = emit(&items[i], 0, name, 0, &out, err);
    items_free(items, n_items);
    if (rc != TUSK_OK) {
        tusk_hostlist_free(out.hosts, out.n);
        return rc;
    }
    *hosts = out.hosts;
    *n = out.n;
    return TUSK_OK;
}
