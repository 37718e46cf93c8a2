/* ncclhook.c — interposition of NCCL's communicator-creating calls in libargus.so
 * (ncclCommInitRank, ncclCommInitRankConfig, ncclCommSplit): each calls the real function
 * (the next definition, dlsym(RTLD_NEXT), else an already loaded libnccl.so.2) and notes
 * the membership in commgroups.c. NCCL headers are not needed: only the ABI of these
 * calls (ncclUniqueId is 128 bytes passed by value; communicators and configs are
 * pointers; results are ints, 0 = ncclSuccess).
 * Must never change what the application gets back, except when no real NCCL can be
 * found at all, which then reports ncclSystemError (2).
 *   init:  id = hash of the ncclUniqueId bytes, size = nranks, index = rank;
 *   split: id = hash of (parent, ordinal of splits of that parent, color), size and
 *          index from ncclCommCount/UserRank.
 * With Argus's NCCL profiler plugin loaded, NCCL tells it each communicator's commHash,
 * commName and nNodes, from inside these calls or (NCCL linked statically, a
 * non-blocking init) outside them (argus_ncclhook_plugin_comm, commgroups.h): the
 * membership's id is then NCCL's own hash, the one the plugin's per-collective records
 * carry.
 * The family (which groups across ranks are parts of one partition, docs/ALGORITHMS.md,
 * "Layout, peer classes and groups") must not depend on the order a rank made its
 * communicators in: ranks do not make the same ones (Megatron's embedding groups exist
 * on the first and last stage only), PyTorch makes them lazily at a group's first
 * collective, splits interleave with other inits. So it is hash(key, k), k = how many
 * communicators of the same key this rank noted before (0 unless a rank holds several):
 *   a commName (from the plugin): key = (the name without its per-instance part, nranks).
 *     PyTorch names a communicator "<group_desc>:<group_name>", the group name being a
 *     per-group counter or hash: everything from the last ':' goes, then any trailing
 *     digits and '_', '-', '.', '#', ' ' ("tp_3" is "tp"). A name left empty, or
 *     PyTorch's description when none was given ("undefined"), counts as none;
 *   no name, a split: family = hash of (parent, ordinal of splits of that parent), the
 *     same on every member (a split is collective over the parent);
 *   no name otherwise: key = (nranks, nNodes when the plugin said it, else 0). Only
 *     communicators of the same size and span can then swap families between ranks that
 *     made them in other orders; the members' world ranks are not known here.
 * The table of keys is bounded (FAMILY_KEYS); past it k = 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracer/commgroups.h"
#include "tracer/tracer.h"

#define NCCL_ID_BYTES 128
#define NCCL_IN_PROGRESS 7 /* ncclInProgress: non-blocking init, the comm is coming */
#define NCCL_SYSTEM_ERROR 2
#define KNOWN 16           /* communicators whose ids are remembered for their splits */
#define FAMILY_KEYS 32     /* family keys whose ordinals are counted */
#define NAME_MAX_BYTES 256 /* of a commName, hashed */

typedef struct {
    char internal[NCCL_ID_BYTES];
} argus_nccl_id;

typedef int (*init_fn)(void **, int, argus_nccl_id, int);
typedef int (*initcfg_fn)(void **, int, argus_nccl_id, int, void *);
typedef int (*split_fn)(void *, int, int, void **, void *);
typedef int (*query_fn)(const void *, int *);

/* The hooks (NCCL's own prototypes, with its types spelled out). */
ARGUS_EXPORT int ncclCommInitRank(void **comm, int nranks, argus_nccl_id uid, int rank);
ARGUS_EXPORT int ncclCommInitRankConfig(void **comm, int nranks, argus_nccl_id uid, int rank,
                                        void *config);
ARGUS_EXPORT int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config);

/* > 0 while this thread is inside a hook: a library whose own calls come back through
 * the hooks (one entry point calling another by its exported name) is noted once. */
static _Thread_local int depth;
/* What the plugin said for the call this thread is inside (set = 1): NCCL's commHash,
 * the commName's key (0: no name) and nNodes. */
static _Thread_local struct {
    uint64_t hash, name_key;
    int nnodes, set;
} plugin_said;

static struct {
    pthread_mutex_t mu;
    uint32_t n;
    const void *comm[KNOWN];
    uint64_t id[KNOWN];
    uint32_t splits[KNOWN];
    uint32_t nkeys;
    uint64_t key[FAMILY_KEYS];    /* family keys met so far */
    uint32_t key_seen[FAMILY_KEYS]; /* memberships noted under each */
    int plugin_seen;       /* the plugin has told us of a communicator */
} ncclhook_state = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The real function: the next definition after ours; else, when libargus.so was loaded
 * by the preload shim (reduce/preload_shim.c) after the program's own libnccl, the next
 * definition after the shim's (argus_preload_next), unless that is ours; else
 * libnccl.so.2 if loaded. */
static void *real(const char *name);

/* 1 when f is defined in the object holding this file (libargus.so). */
static int defined_here(void *f)
{
    Dl_info a, b;
    return f && dladdr(f, &a) && dladdr((void *)(uintptr_t)real, &b) &&
           a.dli_fbase == b.dli_fbase;
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        void *(*next)(const char *) =
            (void *(*)(const char *))(uintptr_t)dlsym(RTLD_DEFAULT, "argus_preload_next");
        if (next && defined_here(f = next(name)))
            f = NULL;
    }
    if (!f) {
        void *h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libnccl.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, name);
            dlclose(h);
        }
    }
    return f;
}

static uint64_t bytes_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return argus_commgroups_mix(h);
}

/* The key of a commName without its per-instance part (header comment); 0 when there is
 * no name left. */
static uint64_t name_key(const char *name)
{
    if (!name)
        return 0;
    size_t n = strnlen(name, NAME_MAX_BYTES);
    const char *colon = memrchr(name, ':', n);
    if (colon)
        n = (size_t)(colon - name);
    while (n > 0 && strchr("0123456789_-.# ", name[n - 1]))
        n--;
    if (n == 0 || (n == 9 && memcmp(name, "undefined", 9) == 0))
        return 0;
    const uint64_t k = bytes_hash(name, n);
    return k ? k : 1;
}

/* The key of a communicator: its name's with nranks, else (nranks, nnodes). */
static uint64_t family_key(uint64_t nkey, int nnodes, int nranks)
{
    if (nkey)
        return argus_commgroups_mix(nkey ^ ((uint64_t)(uint32_t)nranks << 16 | 0x4e));
    return argus_commgroups_mix(0x4e43434c00000000ull ^ (uint64_t)(uint32_t)nranks << 8 ^
                                (uint64_t)(uint32_t)(nnodes > 0 ? nnodes : 0) << 40);
}

/* The family of the next membership noted under key: hash(key, k), k = the memberships
 * noted under it before on this rank. */
static uint32_t family_of(uint64_t key)
{
    uint32_t k = 0;
    pthread_mutex_lock(&ncclhook_state.mu);
    uint32_t i = 0;
    while (i < ncclhook_state.nkeys && ncclhook_state.key[i] != key)
        i++;
    if (i == ncclhook_state.nkeys && i < FAMILY_KEYS) {
        ncclhook_state.key[i] = key;
        ncclhook_state.key_seen[i] = 0;
        ncclhook_state.nkeys++;
    }
    if (i < FAMILY_KEYS)
        k = ncclhook_state.key_seen[i]++;
    pthread_mutex_unlock(&ncclhook_state.mu);
    return (uint32_t)argus_commgroups_mix(key + 0x9e3779b97f4a7c15ull * k);
}

static void remember(const void *comm, uint64_t id)
{
    if (!comm)
        return;
    pthread_mutex_lock(&ncclhook_state.mu);
    uint32_t i = 0;
    while (i < ncclhook_state.n && ncclhook_state.comm[i] != comm)
        i++;
    if (i == ncclhook_state.n && ncclhook_state.n < KNOWN)
        ncclhook_state.n++;
    if (i < KNOWN) {
        ncclhook_state.comm[i] = comm;
        ncclhook_state.id[i] = id;
        ncclhook_state.splits[i] = 0;
    }
    pthread_mutex_unlock(&ncclhook_state.mu);
}

/* NCCL's hash for the call just returned on this thread, when the plugin said it. */
static int take_plugin_hash(uint64_t *hash)
{
    const int set = plugin_said.set;
    if (set)
        *hash = plugin_said.hash;
    plugin_said.set = 0;
    return set;
}

static void note_init(void *const *comm, int nranks, const argus_nccl_id *uid, int rank,
                      int rc)
{
    uint64_t id = bytes_hash(uid->internal, NCCL_ID_BYTES);
    const int from_plugin = take_plugin_hash(&id);
    pthread_mutex_lock(&ncclhook_state.mu);
    const int skip = !from_plugin && rc == NCCL_IN_PROGRESS && ncclhook_state.plugin_seen;
    pthread_mutex_unlock(&ncclhook_state.mu);
    if (skip) /* finishing on NCCL's thread, where the plugin notes it */
        return;
    if (comm)
        remember(*comm, id);
    if (nranks < 2 || rank < 0 || rank >= nranks)
        return;
    const uint64_t key = from_plugin
                             ? family_key(plugin_said.name_key, plugin_said.nnodes, nranks)
                             : family_key(0, 0, nranks);
    struct argus_comm_group g = {.id = id, .family = family_of(key), .size = (uint32_t)nranks,
                                 .index = (uint32_t)rank, .kind = ARGUS_COMM_NCCL};
    argus_commgroups_add(&g);
}

ARGUS_EXPORT int ncclCommInitRank(void **comm, int nranks, argus_nccl_id uid, int rank)
{
    init_fn f = (init_fn)real("ncclCommInitRank");
    if (!f)
        return NCCL_SYSTEM_ERROR;
    if (depth++ == 0)
        plugin_said.set = 0;
    const int rc = f(comm, nranks, uid, rank);
    if (--depth == 0 && (rc == 0 || rc == NCCL_IN_PROGRESS))
        note_init(comm, nranks, &uid, rank, rc);
    return rc;
}

ARGUS_EXPORT int ncclCommInitRankConfig(void **comm, int nranks, argus_nccl_id uid, int rank,
                                        void *config)
{
    initcfg_fn f = (initcfg_fn)real("ncclCommInitRankConfig");
    if (!f)
        return NCCL_SYSTEM_ERROR;
    if (depth++ == 0)
        plugin_said.set = 0;
    const int rc = f(comm, nranks, uid, rank, config);
    if (--depth == 0 && (rc == 0 || rc == NCCL_IN_PROGRESS))
        note_init(comm, nranks, &uid, rank, rc);
    return rc;
}

ARGUS_EXPORT int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config)
{
    split_fn f = (split_fn)real("ncclCommSplit");
    if (!f)
        return NCCL_SYSTEM_ERROR;
    if (depth++ == 0)
        plugin_said.set = 0;
    const int rc = f(comm, color, key, newcomm, config);
    if (--depth > 0)
        return rc;
    /* the parent's identity and the ordinal of this split on it */
    uint64_t pid = 0;
    uint32_t k = 0;
    int found = 0;
    pthread_mutex_lock(&ncclhook_state.mu);
    for (uint32_t i = 0; i < ncclhook_state.n && !found; i++)
        if (ncclhook_state.comm[i] == comm) {
            pid = ncclhook_state.id[i];
            k = ncclhook_state.splits[i]++;
            found = 1;
        }
    pthread_mutex_unlock(&ncclhook_state.mu);
    if (rc != 0 || !found || !newcomm || !*newcomm)
        return rc;
    query_fn count = (query_fn)real("ncclCommCount");
    query_fn user_rank = (query_fn)real("ncclCommUserRank");
    int size = 0, idx = 0;
    if (!count || !user_rank || count(*newcomm, &size) != 0 || user_rank(*newcomm, &idx) != 0)
        return rc;
    const uint64_t fam = argus_commgroups_mix(pid ^ ((uint64_t)k << 40 | 0x5e));
    uint64_t id = argus_commgroups_mix(fam ^ ((uint64_t)(uint32_t)color << 8));
    const int from_plugin = take_plugin_hash(&id);
    remember(*newcomm, id);
    if (size < 2)
        return rc;
    const uint64_t nkey = from_plugin ? plugin_said.name_key : 0;
    struct argus_comm_group g = {.id = id,
                                 .family = nkey ? family_of(family_key(nkey, 0, size))
                                                : (uint32_t)fam,
                                 .size = (uint32_t)size, .index = (uint32_t)idx,
                                 .kind = ARGUS_COMM_NCCL};
    argus_commgroups_add(&g);
    return rc;
}

void argus_ncclhook_plugin_comm(uint64_t comm_hash, const char *name, int nnodes,
                                int nranks, int rank)
{
    const uint64_t nkey = name_key(name);
    pthread_mutex_lock(&ncclhook_state.mu);
    ncclhook_state.plugin_seen = 1;
    pthread_mutex_unlock(&ncclhook_state.mu);
    if (depth > 0) { /* inside a hook on this thread: it notes the membership */
        plugin_said.hash = comm_hash;
        plugin_said.name_key = nkey;
        plugin_said.nnodes = nnodes;
        plugin_said.set = 1;
        return;
    }
    if (nranks < 2 || rank < 0 || rank >= nranks)
        return;
    struct argus_comm_group g = {.id = comm_hash,
                                 .family = family_of(family_key(nkey, nnodes, nranks)),
                                 .size = (uint32_t)nranks, .index = (uint32_t)rank,
                                 .kind = ARGUS_COMM_NCCL};
    argus_commgroups_add(&g);
}
