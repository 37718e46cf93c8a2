/* fuzz_summary.c — libFuzzer harness of the wire-record decoders behind spool import
 * (common/wire.c via argus_jobstore_ingest_buffer): any bytes must be ingested or refused
 * with a message, never crash. Build and run: tests/fuzz/run.sh.
 */
#include <stddef.h>
#include <stdint.h>

#include "store/jobstore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct argus_jobstore *js;
    char err[512];

    if (argus_jobstore_create(64, &js) != 0)
        return 0;
    (void)argus_jobstore_ingest_buffer(js, data, size, 0, err, sizeof err);
    argus_jobstore_free(js);
    return 0;
}
