/* config.c — the environment contract's one table (config.h), turned into defaults, strict
 * parsers, a checker and a printer by expanding ARGUS_CONFIG_TABLE. Parsing is strict:
 * garbage, trailing characters, empty values, overflow and out-of-bounds values are all
 * rejected with one line naming the variable, the value and what is accepted. Never
 * exits, never logs: the caller decides what to do with the message.
 */
#include "common/config.h"
#include "common/errbuf.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

const struct argus_config_var argus_config_vars[] = {
#define X(NAME, field, type, def, mn, mx, help) {#NAME, #type, def, help, mn, mx},
    ARGUS_CONFIG_TABLE(X)
#undef X
};
const size_t argus_config_nvars = sizeof argus_config_vars / sizeof argus_config_vars[0];

/* "..." after a value cut at 64 bytes in a message. */
static const char *ell(const char *s) { return s && strlen(s) > 64 ? "..." : ""; }

/* Every parser_<TYPE>: (row, value, destination, its size, errbuf). The destination is
 * written only on success. */
static int parse_INT(const struct argus_config_var *v, const char *s, void *dst,
                     size_t dstsz, char *errbuf, size_t errlen)
{
    long lo = (long)v->min, hi = (long)v->max;
    char *end = NULL;
    long x = 0;
    int ok = s && (isdigit((unsigned char)s[0]) ||
                   ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1])));

    if (ok) {
        errno = 0;
        x = strtol(s, &end, 10);
        ok = errno == 0 && end && *end == '\0' && x >= lo && x <= hi;
    }
    if (!ok || dstsz != sizeof(long)) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: not an integer in [%ld, %ld]", v->name,
               s ? s : "", ell(s), lo, hi);
        return -EINVAL;
    }
    *(long *)dst = x;
    return 0;
}

static int parse_DOUBLE(const struct argus_config_var *v, const char *s, void *dst,
                        size_t dstsz, char *errbuf, size_t errlen)
{
    char *end = NULL;
    double x = 0;
    int ok = s && *s && strspn(s, "0123456789.eE+-") == strlen(s);

    if (ok) {
        errno = 0;
        x = strtod(s, &end);
        ok = errno == 0 && end && *end == '\0' && isfinite(x) && x >= v->min && x <= v->max;
    }
    if (!ok || dstsz != sizeof(double)) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: not a number in [%g, %g]", v->name,
               s ? s : "", ell(s), v->min, v->max);
        return -EINVAL;
    }
    *(double *)dst = x;
    return 0;
}

/* Match s against a list of words (case-insensitive); index or -1. */
static int word_index(const char *s, const char *const *words, int n)
{
    for (int i = 0; s && i < n; i++)
        if (strcasecmp(s, words[i]) == 0)
            return i;
    return -1;
}

static int parse_BOOL(const struct argus_config_var *v, const char *s, void *dst,
                      size_t dstsz, char *errbuf, size_t errlen)
{
    static const char *const words[] = {"0", "off", "no", "false", "1", "on", "yes", "true"};
    int i = word_index(s, words, 8);

    if (i < 0 || dstsz != sizeof(int)) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: not a boolean in [0, 1] (0/1, off/on, no/yes, "
               "false/true)", v->name, s ? s : "", ell(s));
        return -EINVAL;
    }
    *(int *)dst = i >= 4;
    return 0;
}

static const char *const mode_words[] = {"off", "on"};
#define N_MODE_WORDS ((int)(sizeof mode_words / sizeof mode_words[0]))

static int parse_MODE(const struct argus_config_var *v, const char *s, void *dst,
                      size_t dstsz, char *errbuf, size_t errlen)
{
    int i = word_index(s, mode_words, N_MODE_WORDS);

    if (i < 0 || dstsz != sizeof(int)) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: not one of off, on", v->name,
               s ? s : "", ell(s));
        return -EINVAL;
    }
    *(int *)dst = i;
    return 0;
}

static const char *const level_words[] = {"error", "warn", "info", "debug"};

static int parse_LEVEL(const struct argus_config_var *v, const char *s, void *dst,
                       size_t dstsz, char *errbuf, size_t errlen)
{
    enum argus_log_level lvl;

    if (argus_log_parse_level(s, &lvl) < 0 || dstsz != sizeof(int)) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: not one of error, warn, info, debug", v->name,
               s ? s : "", ell(s));
        return -EINVAL;
    }
    *(int *)dst = (int)lvl;
    return 0;
}

static int parse_STR(const struct argus_config_var *v, const char *s, void *dst,
                     size_t dstsz, char *errbuf, size_t errlen)
{
    size_t n = s ? strlen(s) : 0;

    if (!s || n >= dstsz) {
        argus_seterr(errbuf, errlen, "%s=%.64s%s: %zu bytes, at most %zu", v->name,
               s ? s : "", ell(s), n, dstsz - 1);
        return -EINVAL;
    }
    memcpy(dst, s, n + 1);
    return 0;
}

/* One rule of ARGUS_PHASE_MAP (len bytes at p): 0 or -EINVAL. */
static int phase_rule_ok(const char *p, size_t len)
{
    static const char *const phases[] = {"forward", "backward", "optimizer", "comm", "host",
                                         "other"};
    const char *colon = memchr(p, ':', len);

    if (!colon || colon == p || (size_t)(colon - p) >= ARGUS_PHASE_MAP_SUB_MAX)
        return -EINVAL;
    const char *w = colon + 1;
    const size_t wn = len - (size_t)(w - p);
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        if (strlen(phases[i]) == wn && strncasecmp(w, phases[i], wn) == 0)
            return 0;
    return -EINVAL;
}

static int parse_PHASEMAP(const struct argus_config_var *v, const char *s, void *dst,
                          size_t dstsz, char *errbuf, size_t errlen)
{
    size_t n = 0;

    for (const char *p = s; p && *p; n++) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (n >= ARGUS_PHASE_MAP_RULES) {
            argus_seterr(errbuf, errlen, "%s=%.64s%s: more than %d rules", v->name, s, ell(s),
                         ARGUS_PHASE_MAP_RULES);
            return -EINVAL;
        }
        if (phase_rule_ok(p, len) != 0) {
            argus_seterr(errbuf, errlen, "%s=%.64s%s: bad rule '%.*s' (want substring:phase,"
                         "...; the substring 1 to %d bytes, the phase one of forward, "
                         "backward, optimizer, comm, host, other)", v->name, s, ell(s),
                         (int)(len > 64 ? 64 : len), p, ARGUS_PHASE_MAP_SUB_MAX - 1);
            return -EINVAL;
        }
        p = end ? end + 1 : p + len;
    }
    return parse_STR(v, s, dst, dstsz, errbuf, errlen);
}

/* Parse variable number i of the table into c. */
static int parse_var(struct argus_config *c, size_t i, const char *s, char *errbuf,
                     size_t errlen)
{
    size_t k = 0;

#define X(NAME, field, type, def, mn, mx, help)                                           \
    if (i == k++)                                                                         \
        return parse_##type(&argus_config_vars[i], s, (void *)&c->field, sizeof c->field,  \
                            errbuf, errlen);
    ARGUS_CONFIG_TABLE(X)
#undef X
    return -ENOENT;
}

void argus_config_defaults(struct argus_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < argus_config_nvars; i++) {
        /* A default that does not parse is a bug in the table (the unit test checks). */
        int rc = parse_var(c, i, argus_config_vars[i].def, NULL, 0);
        assert(rc == 0);
        (void)rc;
    }
}

int argus_config_load(struct argus_config *c, argus_env_lookup_fn lookup, char *errbuf,
                      size_t errlen)
{
    int ret = 0;
    size_t at = 0; /* bytes of errbuf in use */

    if (!c)
        return -EINVAL;
    argus_config_defaults(c);
    if (!lookup)
        lookup = getenv;
    if (errbuf && errlen)
        errbuf[0] = '\0';
    for (size_t i = 0; i < argus_config_nvars; i++) {
        const char *s = lookup(argus_config_vars[i].name);
        if (!s)
            continue;
        /* Each message goes after the ones before it ("; " between), as far as it fits. */
        const size_t sep = at ? 2 : 0;
        char *slot = errbuf && at + sep + 1 < errlen ? errbuf + at + sep : NULL;
        int rc = parse_var(c, i, s, slot, slot ? errlen - at - sep : 0);
        if (rc < 0) {
            if (slot && sep)
                memcpy(errbuf + at, "; ", 2);
            if (slot)
                at += sep + strlen(slot);
            if (ret == 0)
                ret = rc;
        }
    }
    return ret;
}

int argus_config_check(const char *name, const char *value, char *errbuf, size_t errlen)
{
    struct argus_config tmp;

    if (!name)
        return -EINVAL;
    for (size_t i = 0; i < argus_config_nvars; i++) {
        if (strcmp(name, argus_config_vars[i].name) == 0) {
            memset(&tmp, 0, sizeof tmp);
            return parse_var(&tmp, i, value, errbuf, errlen);
        }
    }
    argus_seterr(errbuf, errlen, "%.64s: unknown variable", name);
    return -ENOENT;
}

void argus_config_print(const struct argus_config *c, FILE *out)
{
    if (!c || !out)
        return;
#define P_INT(NAME, f) fprintf(out, "%s=%ld\n", #NAME, c->f)
#define P_DOUBLE(NAME, f) fprintf(out, "%s=%g\n", #NAME, c->f)
#define P_BOOL(NAME, f) fprintf(out, "%s=%d\n", #NAME, c->f ? 1 : 0)
#define P_STR(NAME, f) fprintf(out, "%s=%s\n", #NAME, c->f)
#define P_PHASEMAP P_STR
#define P_MODE(NAME, f)                                                                   \
    fprintf(out, "%s=%s\n", #NAME, (c->f >= 0 && c->f < N_MODE_WORDS) ? mode_words[c->f] : "off")
#define P_LEVEL(NAME, f)                                                                  \
    fprintf(out, "%s=%s\n", #NAME, (c->f >= 0 && c->f < 4) ? level_words[c->f] : "warn")
#define X(NAME, field, type, def, mn, mx, help) P_##type(NAME, field);
    ARGUS_CONFIG_TABLE(X)
#undef X
#undef P_INT
#undef P_DOUBLE
#undef P_BOOL
#undef P_STR
#undef P_PHASEMAP
#undef P_MODE
#undef P_LEVEL
}

/* Copy src into buf, mapping every byte outside [A-Za-z0-9._-] to '_'. */
static void jobid_copy(const char *src, char *buf, size_t len)
{
    size_t i;

    for (i = 0; src[i] && i + 1 < len; i++) {
        unsigned char ch = (unsigned char)src[i];
        buf[i] = (isalnum(ch) && ch < 0x80) || ch == '.' || ch == '_' || ch == '-'
                     ? (char)ch : '_';
    }
    buf[i] = '\0';
}

void argus_config_jobid(const struct argus_config *c, argus_env_lookup_fn lookup,
                        char *buf, size_t len)
{
    static const char *const vars[] = {"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid",
                                       "PMIX_NAMESPACE"};

    if (!buf || len == 0)
        return;
    if (!lookup)
        lookup = getenv;
    if (c && c->jobid[0]) {
        jobid_copy(c->jobid, buf, len);
        return;
    }
    if (!c) {
        const char *s = lookup("ARGUS_JOBID");
        if (s && *s) {
            jobid_copy(s, buf, len);
            return;
        }
    }
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *s = lookup(vars[i]);
        if (s && *s) {
            jobid_copy(s, buf, len);
            return;
        }
    }
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm) == 0)
        snprintf(stamp, sizeof stamp, "19700101T000000");
    snprintf(buf, len, "%s-%ld", stamp, (long)getpid());
}
