/* gpubus.c — the GPU's PCI bus id from the CUDA driver API, found with dlsym in the
 * libcuda.so.1 the program loaded (gpubus.h). Must not load or initialise CUDA, must not
 * include CUDA headers (the few driver signatures are spelled here: CUresult is an int, 0
 * success; CUdevice an int), never prints, never exits.
 */
#include "tracer/gpubus.h"

#include <dlfcn.h>
#include <errno.h>

typedef int (*cu_ctx_get_device_fn)(int *dev);
typedef int (*cu_device_get_count_fn)(int *n);
typedef int (*cu_device_get_fn)(int *dev, int ordinal);
typedef int (*cu_primary_state_fn)(int dev, unsigned *flags, int *active);
typedef int (*cu_bus_id_fn)(char *bus, int len, int dev);

/* The device this process uses (see gpubus.h), or -1. */
static int pick_device(void *h)
{
    cu_ctx_get_device_fn ctx_dev = (cu_ctx_get_device_fn)dlsym(h, "cuCtxGetDevice");
    cu_device_get_count_fn count = (cu_device_get_count_fn)dlsym(h, "cuDeviceGetCount");
    cu_device_get_fn get = (cu_device_get_fn)dlsym(h, "cuDeviceGet");
    cu_primary_state_fn state = (cu_primary_state_fn)dlsym(h, "cuDevicePrimaryCtxGetState");
    int dev = -1, n = 0;

    if (ctx_dev && ctx_dev(&dev) == 0)
        return dev;
    if (!count || !get || count(&n) != 0 || n <= 0)
        return -1;
    if (n == 1)
        return get(&dev, 0) == 0 ? dev : -1;
    int found = -1;
    for (int i = 0; i < n && state; i++) {
        unsigned flags = 0;
        int active = 0, d;
        if (get(&d, i) != 0 || state(d, &flags, &active) != 0 || !active)
            continue;
        if (found >= 0)
            return -1; /* several: not one rank's GPU */
        found = d;
    }
    return found;
}

int argus_gpubus_current(char *bus, size_t len)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

    if (!h)
        return -ENOENT;
    cu_bus_id_fn bus_id = (cu_bus_id_fn)dlsym(h, "cuDeviceGetPCIBusId");
    int dev = bus_id ? pick_device(h) : -1;
    int rc = dev >= 0 && len > 0 && bus_id(bus, len > 64 ? 64 : (int)len, dev) == 0 ? 0
                                                                                     : -ENODEV;
    dlclose(h);
    return rc;
}
