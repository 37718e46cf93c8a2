/* benchline.c — the benchmarks' result-line helpers (bench/benchline.h). */
#include "bench/benchline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

void argus_bench_print_cb(void *ctx, const char *s, size_t len)
{
    fwrite(s, 1, len, (FILE *)ctx);
}

int argus_bench_int(yajl_gen g, const char *k, long long v)
{
    ARGUS_JSON_TRY(argus_json_key(g, k));
    ARGUS_JSON_CK(yajl_gen_integer(g, v));
    return 0;
}

int argus_bench_uint(yajl_gen g, const char *k, uint64_t v)
{
    ARGUS_JSON_TRY(argus_json_key(g, k));
    return argus_json_uint(g, v);
}

int argus_bench_str(yajl_gen g, const char *k, const char *s)
{
    ARGUS_JSON_TRY(argus_json_key(g, k));
    return argus_json_str(g, s);
}

int argus_bench_fix(yajl_gen g, const char *k, double v, int decimals)
{
    ARGUS_JSON_TRY(argus_json_key(g, k));
    if (!isfinite(v)) {
        ARGUS_JSON_CK(yajl_gen_null(g));
        return 0;
    }
    return argus_json_numf(g, "%.*f", decimals, v);
}
