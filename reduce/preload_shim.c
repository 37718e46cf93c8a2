/* preload_shim.c — libargus_preload.so, what argus-run and the SPANK plugin put in
 * LD_PRELOAD (issue 16, item 15). Every exec of a job inherits the preload: shells,
 * nvidia-smi, compilers, the launcher's helpers. Preloading libargus.so itself makes
 * ld.so load MPI, CUPTI, zstd and yajl into each of them (~3 ms an exec); this library
 * needs only libc and libdl, so a process with nothing to trace pays a few getenv calls.
 *
 * Contract:
 *  - ARGUS_MODE not "on" (case-insensitive): nothing is loaded at start; every hook
 *    below calls the next definition (dlsym(RTLD_NEXT)).
 *  - The rank: the first process of its lineage with Argus on. ARGUS_RANK_MARK holds
 *    "<pid>:<key>", where key hashes the launcher's identity variables (rank_vars below:
 *    MPI, PMIx, Slurm and torchrun ranks, job and step). A process whose mark is absent,
 *    names its own pid (the rank exec'd another program) or carries another key (a
 *    launcher made it a rank: mpirun's ranks, srun's tasks, torchrun's workers) is a
 *    rank: it sets the mark to itself and dlopen()s libargus.so (RTLD_NOW|RTLD_GLOBAL,
 *    from the directory this library was loaded from), whose constructors then run as
 *    when libargus.so itself is preloaded.
 *  - Any other process (same key, another pid: a child of a rank) loads nothing at start.
 *    If it starts MPI or NCCL itself (MPI_Init, MPI_Init_thread, ncclCommInitRank*) it is
 *    doing a rank's work after all (the program under a wrapper script): libargus.so is
 *    loaded then and the call goes to it. CUDA processes get libargus.so through
 *    CUDA_INJECTION64_PATH as before.
 *  - The hooks are the symbols libargus.so interposes (reduce/pmpi.c, tracer/ncclhook.c):
 *    each goes to libargus.so's definition once this library loaded it, else to the next
 *    definition, else (no MPI/NCCL in the global scope, e.g. a library opened with
 *    RTLD_LOCAL) to libargus.so's, which reaches them through its own dependencies.
 *  - argus.h is defined here too, for programs that find it with dlsym(RTLD_DEFAULT) "in
 *    the preload": a process that marks steps has something to trace, so the first call
 *    loads libargus.so (Argus on) and every call goes to its definition, looked up once.
 *    Argus absent: the calls do nothing (argus_now_ns still tells the time).
 *  - argus_preload_next(name) is the next definition after this library: how
 *    tracer/ncclhook.c, loaded after the program's libnccl, finds the real NCCL.
 *  - A failed dlopen prints one line on stderr (the library and dlerror()) and the
 *    process runs without Argus: the hooks then call the next definition.
 * Preloading libargus.so directly still works (the heavier way: every exec loads it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <mpi.h> /* the types and error codes only: this library does not link MPI */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "argus.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define LIBARGUS "libargus.so"
#define MARK_VAR "ARGUS_RANK_MARK"
#define NCCL_ID_BYTES 128
#define NCCL_SYSTEM_ERROR 2

typedef struct {
    char internal[NCCL_ID_BYTES];
} shim_nccl_id;

static struct {
    pthread_once_t once;
    _Atomic(void *) lib; /* libargus.so once loaded here, else NULL */
    int on;              /* ARGUS_MODE=on (set by the constructor, before any thread) */
} shim = {.once = PTHREAD_ONCE_INIT};

/* The variables a launcher sets per rank; a child of a rank inherits them unchanged. */
static const char *const rank_vars[] = {
    "OMPI_COMM_WORLD_RANK", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMIX_RANK",
    "PMI_RANK",             "SLURM_JOB_ID",            "SLURM_STEP_ID",  "SLURM_PROCID",
    "RANK",                 "LOCAL_RANK"};

/* FNV-1a over "NAME=value\n" of each set variable. */
static uint64_t rank_key(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        const char *v = getenv(rank_vars[i]);
        if (!v)
            continue;
        for (const char *p = rank_vars[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        h = (h ^ '=') * 0x100000001b3ull;
        for (const char *p = v; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        h = (h ^ '\n') * 0x100000001b3ull;
    }
    return h;
}

static void load_once(void)
{
    Dl_info di;
    char *path = NULL;
    const char *self = dladdr((void *)(uintptr_t)&load_once, &di) ? di.dli_fname : NULL;
    const char *slash = self ? strrchr(self, '/') : NULL;

    if (slash && asprintf(&path, "%.*s/" LIBARGUS, (int)(slash - self), self) < 0)
        path = NULL;
    void *h = dlopen(path ? path : LIBARGUS, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        fprintf(stderr, "argus: cannot load %s: %s; this process runs without Argus\n",
                path ? path : LIBARGUS, e ? e : "unknown error");
    }
    free(path);
    atomic_store(&shim.lib, h);
}

static void *load(void)
{
    pthread_once(&shim.once, load_once);
    return atomic_load(&shim.lib);
}

/* The function to call for name: libargus.so's when loaded here (start: load it first
 * when Argus is on), else the next definition, else libargus.so's after all. */
static void *target(const char *name, int start)
{
    void *h = start && shim.on ? load() : atomic_load(&shim.lib), *f = NULL;

    if (h)
        f = dlsym(h, name);
    if (!f)
        f = dlsym(RTLD_NEXT, name);
    if (!f && !h && (h = load()) != NULL)
        f = dlsym(h, name);
    return f;
}

__attribute__((constructor)) static void shim_start(void)
{
    const char *m = getenv("ARGUS_MODE");
    char mark[64];

    if (!m || strcasecmp(m, "on") != 0)
        return;
    shim.on = 1;
    snprintf(mark, sizeof mark, "%ld:%016llx", (long)getpid(),
             (unsigned long long)rank_key());
    const char *old = getenv(MARK_VAR), *key = strchr(mark, ':');
    const char *okey = old ? strchr(old, ':') : NULL;
    if (okey && strcmp(okey, key) == 0 && strtol(old, NULL, 10) != (long)getpid())
        return; /* a child of this lineage's rank */
    if (!old || strcmp(old, mark) != 0)
        setenv(MARK_VAR, mark, 1);
    (void)load();
}

/* ---- the hooks (reduce/pmpi.c's prototypes) ---- */

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*finalize_fn)(void);
typedef int (*split_fn)(MPI_Comm, int, int, MPI_Comm *);
typedef int (*split_type_fn)(MPI_Comm, int, int, MPI_Info, MPI_Comm *);
typedef int (*create_fn)(MPI_Comm, MPI_Group, MPI_Comm *);

SHIM_EXPORT int MPI_Init(int *argc, char ***argv)
{
    init_fn f = (init_fn)(uintptr_t)target("MPI_Init", 1);
    return f ? f(argc, argv) : MPI_ERR_OTHER;
}

SHIM_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_thread_fn f = (init_thread_fn)(uintptr_t)target("MPI_Init_thread", 1);
    return f ? f(argc, argv, required, provided) : MPI_ERR_OTHER;
}

SHIM_EXPORT int MPI_Finalize(void)
{
    finalize_fn f = (finalize_fn)(uintptr_t)target("MPI_Finalize", 0);
    return f ? f() : MPI_ERR_OTHER;
}

SHIM_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    split_fn f = (split_fn)(uintptr_t)target("MPI_Comm_split", 0);
    return f ? f(comm, color, key, newcomm) : MPI_ERR_OTHER;
}

SHIM_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm *newcomm)
{
    split_type_fn f = (split_type_fn)(uintptr_t)target("MPI_Comm_split_type", 0);
    return f ? f(comm, split_type, key, info, newcomm) : MPI_ERR_OTHER;
}

SHIM_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    create_fn f = (create_fn)(uintptr_t)target("MPI_Comm_create", 0);
    return f ? f(comm, group, newcomm) : MPI_ERR_OTHER;
}

/* ---- tracer/ncclhook.c's hooks (NCCL's ABI, its types spelled out) ---- */

/* The next definition of name after this library's place in the lookup order. libargus.so
 * is loaded here after the program's own libnccl, so its dlsym(RTLD_NEXT) cannot see that
 * library; tracer/ncclhook.c asks this instead (and refuses its own definition back). */
SHIM_EXPORT void *argus_preload_next(const char *name);
SHIM_EXPORT void *argus_preload_next(const char *name)
{
    /* not a tail call: RTLD_NEXT is relative to the object dlsym returns to */
    void *f = name ? dlsym(RTLD_NEXT, name) : NULL;
    __asm__ volatile("" ::: "memory");
    return f;
}

typedef int (*nccl_init_fn)(void **, int, shim_nccl_id, int);
typedef int (*nccl_initcfg_fn)(void **, int, shim_nccl_id, int, void *);
typedef int (*nccl_split_fn)(void *, int, int, void **, void *);

SHIM_EXPORT int ncclCommInitRank(void **comm, int nranks, shim_nccl_id uid, int rank);
SHIM_EXPORT int ncclCommInitRankConfig(void **comm, int nranks, shim_nccl_id uid, int rank,
                                       void *config);
SHIM_EXPORT int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config);

SHIM_EXPORT int ncclCommInitRank(void **comm, int nranks, shim_nccl_id uid, int rank)
{
    nccl_init_fn f = (nccl_init_fn)(uintptr_t)target("ncclCommInitRank", 1);
    return f ? f(comm, nranks, uid, rank) : NCCL_SYSTEM_ERROR;
}

SHIM_EXPORT int ncclCommInitRankConfig(void **comm, int nranks, shim_nccl_id uid, int rank,
                                       void *config)
{
    nccl_initcfg_fn f = (nccl_initcfg_fn)(uintptr_t)target("ncclCommInitRankConfig", 1);
    return f ? f(comm, nranks, uid, rank, config) : NCCL_SYSTEM_ERROR;
}

SHIM_EXPORT int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config)
{
    nccl_split_fn f = (nccl_split_fn)(uintptr_t)target("ncclCommSplit", 1);
    return f ? f(comm, color, key, newcomm, config) : NCCL_SYSTEM_ERROR;
}

/* ---- argus.h (tracer/api.c's definitions), each resolved once ---- */

/* The definition of name, cached in *slot (slot itself: there is none); NULL for none. */
static void *api(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (!f) {
        f = target(name, 1);
        atomic_store_explicit(slot, f ? f : (void *)slot, memory_order_release);
    }
    return f == (void *)slot ? NULL : f;
}

#define API(fn) static _Atomic(void *) api_##fn
API(argus_active);
API(argus_set_layout);
API(argus_set_total_steps);
API(argus_step_begin);
API(argus_step_end);
API(argus_phase_push);
API(argus_phase_pop);
API(argus_kernel);
API(argus_now_ns);
#undef API
#define CALL(fn, type) ((type)(uintptr_t)api(&api_##fn, #fn))

typedef int (*active_fn)(void);
typedef int (*layout_fn)(int, int, int, int, int, int, int, int);
typedef int (*total_fn)(uint64_t);
typedef void (*mark_fn)(uint64_t, uint64_t);
typedef void (*push_fn)(const char *, uint64_t);
typedef void (*pop_fn)(uint64_t);
typedef void (*kernel_fn)(const char *, uint64_t, uint64_t, uint32_t, uint32_t,
                          enum argus_kernel_class);
typedef uint64_t (*now_fn)(void);

SHIM_EXPORT int argus_active(void)
{
    active_fn f = CALL(argus_active, active_fn);
    return f ? f() : 0;
}

SHIM_EXPORT int argus_set_layout(int tp_size, int pp_size, int dp_size, int ep_size, int tp,
                                 int pp, int dp, int ep)
{
    layout_fn f = CALL(argus_set_layout, layout_fn);
    return f ? f(tp_size, pp_size, dp_size, ep_size, tp, pp, dp, ep) : 0;
}

SHIM_EXPORT int argus_set_total_steps(uint64_t steps)
{
    total_fn f = CALL(argus_set_total_steps, total_fn);
    return f ? f(steps) : 0;
}

SHIM_EXPORT void argus_step_begin(uint64_t step, uint64_t t_ns)
{
    mark_fn f = CALL(argus_step_begin, mark_fn);
    if (f)
        f(step, t_ns);
}

SHIM_EXPORT void argus_step_end(uint64_t step, uint64_t t_ns)
{
    mark_fn f = CALL(argus_step_end, mark_fn);
    if (f)
        f(step, t_ns);
}

SHIM_EXPORT void argus_phase_push(const char *name, uint64_t t_ns)
{
    push_fn f = CALL(argus_phase_push, push_fn);
    if (f)
        f(name, t_ns);
}

SHIM_EXPORT void argus_phase_pop(uint64_t t_ns)
{
    pop_fn f = CALL(argus_phase_pop, pop_fn);
    if (f)
        f(t_ns);
}

SHIM_EXPORT void argus_kernel(const char *name, uint64_t start_ns, uint64_t end_ns,
                              uint32_t device, uint32_t stream, enum argus_kernel_class cls)
{
    kernel_fn f = CALL(argus_kernel, kernel_fn);
    if (f)
        f(name, start_ns, end_ns, device, stream, cls);
}

SHIM_EXPORT uint64_t argus_now_ns(void)
{
    now_fn f = CALL(argus_now_ns, now_fn);
    struct timespec ts;

    if (f)
        return f();
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
