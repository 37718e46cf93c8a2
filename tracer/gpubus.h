/* gpubus.h — the PCI bus id of the GPU this process uses, asked of the CUDA driver the
 * program has already loaded (the one thin CUDA adapter of the placement, placement.h).
 * Argus loads nothing and initialises nothing: without libcuda.so.1 in the process, or
 * before the program initialised CUDA, there is no answer. No CUDA header; no allocation;
 * any thread. Never prints.
 */
#ifndef ARGUS_TRACER_GPUBUS_H
#define ARGUS_TRACER_GPUBUS_H

#include <stddef.h>

/* The device is the calling thread's current context's; else the only visible device; else
 * the only device whose primary context is active. 0 and bus ("0000:17:00.0"), -ENOENT
 * (no CUDA driver in the process) or -ENODEV (CUDA not initialised, or no single device). */
int argus_gpubus_current(char *bus, size_t len);

#endif /* ARGUS_TRACER_GPUBUS_H */
