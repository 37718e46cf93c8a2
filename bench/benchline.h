/* benchline.h — the pieces the C benchmarks share to print their one JSON result line
 * (docs/STYLE.md, "Benchmarks") on top of common/jsongen.h: a print callback that writes
 * to a FILE, and "key": value pairs for integers, strings and numbers with a fixed
 * number of decimals or a printf format of their own. Each function returns 0, -EIO
 * (generator error) or -ENOMEM. The generator is the caller's; any thread that owns it.
 */
#ifndef ARGUS_BENCH_BENCHLINE_H
#define ARGUS_BENCH_BENCHLINE_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "common/jsongen.h"

/* yajl_gen_print_callback: writes the generator's text to ctx, a FILE *. */
void argus_bench_print_cb(void *ctx, const char *s, size_t len);
/* "k": v */
int argus_bench_int(yajl_gen g, const char *k, long long v);
int argus_bench_uint(yajl_gen g, const char *k, uint64_t v);
/* "k": s (argus_json_str: NULL is "", bytes that are not UTF-8 become '?') */
int argus_bench_str(yajl_gen g, const char *k, const char *s);
/* "k": v with exactly `decimals` decimals ("%.*f", trailing zeros kept); not finite: null */
int argus_bench_fix(yajl_gen g, const char *k, double v, int decimals);

/* "k": v as printf writes it with the format that follows (each figure keeps its own);
 * returns the code from the enclosing function when it fails. */
#define ARGUS_BENCH_PUT_F(g, k, ...)                                                         \
    do {                                                                                     \
        ARGUS_JSON_TRY(argus_json_key(g, k));                                                \
        ARGUS_JSON_TRY(argus_json_numf(g, __VA_ARGS__));                                     \
    } while (0)

#endif /* ARGUS_BENCH_BENCHLINE_H */
