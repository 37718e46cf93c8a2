/* fuzz_kineto.c — libFuzzer harness of the Kineto importer (import/kineto.c + the feeder
 * through the live summariser): any bytes, as a plain or gzip file named rank-1.json, must
 * import or fail with one error line, never crash or leak. Inputs of odd length import
 * with the smallest table limit (32 KiB), so the spill-to-file path (import/kineto_spill.c) is
 * fuzzed too. Build and run: tests/fuzz/run.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4096];

static void remove_input(void)
{
    unlink(path);
}

static void on_sum(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    (void)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    static struct argus_kineto_info in;
    struct argus_import_sink sink = {on_sum, NULL, NULL};
    struct argus_kineto_opts o = {.max_events = 4096,
                                  .max_mem = size & 1 ? 32u << 10 : 8u << 20};

    if (!path[0]) {
        const char *d = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/argus-fuzz-%d-rank-1.json", d && *d ? d : "/tmp",
                 (int)getpid());
        atexit(remove_input);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    err[0] = '\0';
    if (argus_kineto_import(path, &o, &sink, &in, err, sizeof err) != 0 &&
        (!err[0] || strchr(err, '\n')))
        __builtin_trap(); /* an error must come with exactly one line */
    return 0;
}
