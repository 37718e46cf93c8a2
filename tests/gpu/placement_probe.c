/* placement_probe.c — the placement on a real GPU (tracer/gpubus.c, tracer/placement.c),
 * NOT part of `make check`: it initialises CUDA through the driver (dlopen of libcuda.so.1,
 * as a program would), makes device 0's primary context current, and checks that
 *   bus_current   argus_gpubus_current on this thread names the device CUDA names;
 *   bus_other     from a thread with no current context (the drain thread's case) too;
 *   in_topology   hwloc's topology of this machine has that PCI device;
 * then prints the placement as one JSON line (exit 0 pass, 1 fail, 77 no GPU).
 * Build (tests/gpu/check_cupti.sh may fold it in; B is a configured build directory):
 *   gcc -std=gnu11 -I. -IB tests/gpu/placement_probe.c tracer/placement.c tracer/gpubus.c \
 *       common/errbuf.c -lhwloc -ldl -lpthread -o placement_probe
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tracer/gpubus.h"
#include "tracer/placement.h"

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_dev_get_fn)(int *, int);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_set_fn)(void *);
typedef int (*cu_bus_fn)(char *, int, int);

static char other_bus[32];
static int other_rc = -1;

static void *other_thread(void *arg)
{
    (void)arg;
    other_rc = argus_gpubus_current(other_bus, sizeof other_bus);
    return NULL;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        printf("{\"check\":\"gpu_placement\",\"ok\":false,\"skipped\":\"no libcuda.so.1\"}\n");
        return 77;
    }
    cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
    cu_dev_get_fn get = (cu_dev_get_fn)dlsym(h, "cuDeviceGet");
    cu_retain_fn retain = (cu_retain_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
    cu_set_fn set = (cu_set_fn)dlsym(h, "cuCtxSetCurrent");
    cu_bus_fn busid = (cu_bus_fn)dlsym(h, "cuDeviceGetPCIBusId");
    int dev = -1;
    void *ctx = NULL;
    char want[32] = "", cur[32] = "", err[256] = "";
    if (!init || !get || !retain || !set || !busid || init(0) != 0 || get(&dev, 0) != 0 ||
        retain(&ctx, dev) != 0 || set(ctx) != 0 || busid(want, sizeof want, dev) != 0) {
        printf("{\"check\":\"gpu_placement\",\"ok\":false,\"skipped\":\"no CUDA device\"}\n");
        return 77;
    }
    int rc_cur = argus_gpubus_current(cur, sizeof cur);
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, NULL) == 0)
        pthread_join(t, NULL);
    struct argus_placer *p = NULL;
    struct argus_placement pl;
    memset(&pl, 0, sizeof pl);
    int rc_load = argus_placer_create(NULL, &p, err, sizeof err);
    if (rc_load == 0)
        argus_placer_fill(p, rc_cur == 0 ? cur : want, NULL, &pl, err, sizeof err);
    const int ok_cur = rc_cur == 0 && strcasecmp(cur, want) == 0;
    const int ok_other = other_rc == 0 && strcasecmp(other_bus, want) == 0;
    const int in_topo = (pl.flags & ARGUS_PLACE_GPU) != 0;
    const int ok = ok_cur && ok_other && in_topo;
    printf("{\"check\":\"gpu_placement\",\"ok\":%s,\"cuda_bus\":\"%s\",\"bus_current\":%s,"
           "\"bus_other\":%s,\"in_topology\":%s,\"gpu_bus\":\"%s\",\"gpu_numa\":%d,"
           "\"nic\":\"%s\",\"cpuset\":\"%s\",\"cpu_numa\":%d,\"local\":%s,\"error\":\"%s\"}\n",
           ok ? "true" : "false", want, ok_cur ? "true" : "false", ok_other ? "true" : "false",
           in_topo ? "true" : "false", pl.gpu_bus, pl.gpu_numa, pl.nic, pl.cpuset, pl.cpu_numa,
           (pl.flags & ARGUS_PLACE_LOCAL) ? "true" : "false", err);
    argus_placer_free(p);
    return ok ? 0 : 1;
}
