/* jsongen.c — shared JSON generator pieces (jsongen.h). */
#include "common/jsongen.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int argus_json_key(yajl_gen g, const char *k)
{
    return yajl_gen_string(g, (const unsigned char *)k, strlen(k)) == yajl_gen_status_ok
               ? 0
               : -EIO;
}

/* Length of the valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4
                                                                                             : 0;
    if (n == 0 || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

int argus_json_str(yajl_gen g, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    char stackbuf[1024] = "", *buf = n < sizeof stackbuf ? stackbuf : malloc(n + 1);
    if (!buf)
        return -ENOMEM;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t l = utf8_len(p);
        if (l == 0) {
            buf[o++] = '?';
            p++;
            continue;
        }
        memcpy(buf + o, p, l);
        o += l;
        p += l;
    }
    int rc = yajl_gen_string(g, (const unsigned char *)buf, o) == yajl_gen_status_ok ? 0 : -EIO;
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int argus_json_num(yajl_gen g, double v, int decimals)
{
    char buf[64];
    if (!isfinite(v))
        return yajl_gen_null(g) == yajl_gen_status_ok ? 0 : -EIO;
    int n = snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return -EIO;
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0')
            buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '.')
            buf[--n] = '\0';
    }
    if (!strcmp(buf, "-0")) {
        strcpy(buf, "0");
        n = 1;
    }
    return yajl_gen_number(g, buf, (size_t)n) == yajl_gen_status_ok ? 0 : -EIO;
}

int argus_json_uint(yajl_gen g, uint64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return yajl_gen_number(g, buf, (size_t)n) == yajl_gen_status_ok ? 0 : -EIO;
}

int argus_json_numf(yajl_gen g, const char *fmt, ...)
{
    char b[64];
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n <= 0 || (size_t)n >= sizeof b)
        return -EIO;
    return yajl_gen_number(g, b, (size_t)n) == yajl_gen_status_ok ? 0 : -EIO;
}
