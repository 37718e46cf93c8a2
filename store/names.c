/* names.c — the job store's kernel-name dictionary (store/jobstore.h:
 * argus_jobstore_add_name, argus_jobstore_name): open addressing on the 64-bit name hash.
 * Writes js->names only and calls no other file of store/ (store/jobstore_int.h lists
 * them); must know nothing of wire records. One owner; not thread-safe.
 */
#include "store/jobstore_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void jobstore_names_fini(struct argus_jobstore *js)
{
    for (size_t i = 0; i < js->names_cap; i++)
        free(js->names[i].name);
    free(js->names);
    js->names = NULL;
    js->names_cap = js->names_used = 0;
}

/* Spread the hash (it is already FNV-1a, but its low bits are what we index with). */
static size_t name_slot(uint64_t hash, size_t cap)
{
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdull;
    hash ^= hash >> 33;
    return (size_t)hash & (cap - 1);
}

/* Twice the slots, every entry placed again (not argus_grow: a rehash, not a copy). */
static int names_grow(struct argus_jobstore *js)
{
    size_t ncap = js->names_cap ? js->names_cap * 2 : 1024;
    struct name_entry *nt = calloc(ncap, sizeof *nt);

    if (!nt)
        return -ENOMEM;
    for (size_t i = 0; i < js->names_cap; i++) {
        if (!js->names[i].name)
            continue;
        size_t j = name_slot(js->names[i].hash, ncap);
        while (nt[j].name)
            j = (j + 1) & (ncap - 1);
        nt[j] = js->names[i];
    }
    free(js->names);
    js->names = nt;
    js->names_cap = ncap;
    return 0;
}

static struct name_entry *name_find(const struct argus_jobstore *js, uint64_t hash)
{
    if (js->names_cap == 0)
        return NULL;
    size_t j = name_slot(hash, js->names_cap);
    while (js->names[j].name) {
        if (js->names[j].hash == hash)
            return &js->names[j];
        j = (j + 1) & (js->names_cap - 1);
    }
    return NULL;
}

int argus_jobstore_add_name(struct argus_jobstore *js, uint64_t hash, const char *name)
{
    if (!js || !name)
        return -EINVAL;
    size_t n = strnlen(name, ARGUS_NAME_MAX);
    struct name_entry *e = name_find(js, hash);
    if (e && strncmp(e->name, name, n) == 0 && e->name[n] == '\0')
        return 0;
    char *copy = malloc(n + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, name, n);
    copy[n] = '\0';
    if (e) { /* same hash, new spelling: the latest wins */
        free(e->name);
        e->name = copy;
        return 0;
    }
    if ((js->names_used + 1) * 2 > js->names_cap) {
        int rc = names_grow(js);
        if (rc < 0) {
            free(copy);
            return rc;
        }
    }
    size_t j = name_slot(hash, js->names_cap);
    while (js->names[j].name)
        j = (j + 1) & (js->names_cap - 1);
    js->names[j].hash = hash;
    js->names[j].name = copy;
    js->names_used++;
    return 0;
}

const char *argus_jobstore_name(const struct argus_jobstore *js, uint64_t hash)
{
    if (!js)
        return NULL;
    const struct name_entry *e = name_find(js, hash);
    return e ? e->name : NULL;
}
