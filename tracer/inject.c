/* inject.c — the CUDA injection entry point. argus-run and the SPANK plugin set
 * CUDA_INJECTION64_PATH to libargus.so, so the CUDA driver calls InitializeInjection in
 * every CUDA process. This build has no CUPTI activity collector yet (the real tracer is
 * a later step): the entry point accepts the injection, says so once at info level, and
 * returns success so the program is never disturbed. Nothing here may block or exit. */
#include "common/log.h"
#include "tracer/tracer.h"

ARGUS_EXPORT int InitializeInjection(void);

ARGUS_EXPORT int InitializeInjection(void)
{
    argus_log_init();
    argus_log_once(ARGUS_LOG_INFO, "cuda-injection",
                   "CUDA injection accepted; GPU kernels are not collected by this build "
                   "(only events reported through argus.h)");
    return 1;
}
