/* jsongen.h — the small pieces every JSON writer shares on top of YAJL's generator
 * (docs/STYLE.md, "File formats and JSON"): a status check that turns a generator error
 * into -EIO, keys, strings made valid UTF-8, and numbers printed the way Argus's files
 * print them. Each function returns 0, -EIO (generator error) or -ENOMEM. The generator is
 * the caller's; any thread that owns it.
 */
#ifndef ARGUS_COMMON_JSONGEN_H
#define ARGUS_COMMON_JSONGEN_H

#include <stdint.h>
#include <yajl/yajl_gen.h>

/* Return -EIO from the enclosing function when a yajl_gen_* call fails. */
#define ARGUS_JSON_CK(x)                                                                     \
    do {                                                                                     \
        if ((x) != yajl_gen_status_ok)                                                       \
            return -EIO;                                                                     \
    } while (0)
/* Return the code from the enclosing function when a call returning 0 / -errno fails. */
#define ARGUS_JSON_TRY(x)                                                                    \
    do {                                                                                     \
        int rc_ = (x);                                                                       \
        if (rc_)                                                                             \
            return rc_;                                                                      \
    } while (0)

/* A map key (plain ASCII, as every key Argus writes). */
int argus_json_key(yajl_gen g, const char *k);
/* A string; NULL is "". Bytes that are not valid UTF-8 become '?', so text from outside
 * (kernel names, paths, reasons) never makes the generator fail. */
int argus_json_str(yajl_gen g, const char *s);
/* A number with at most `decimals` decimals, trailing zeros and a lone point dropped,
 * -0 written 0; not finite: null. */
int argus_json_num(yajl_gen g, double v, int decimals);
int argus_json_uint(yajl_gen g, uint64_t v);
/* A number as printf writes it with fmt (for files whose figures keep a fixed format). */
int argus_json_numf(yajl_gen g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* ARGUS_COMMON_JSONGEN_H */
