/* policy.c — site policy, --argus decision, outdir templates and LD_PRELOAD editing for
 * the SPANK plugin (policy.h). Pure string work: no spank_* calls, no environment, no
 * I/O, no allocation, so the same code runs in srun, sbatch, slurmstepd and the unit
 * tests. Must never accept a key it does not know or a library path that is not absolute.
 */
#include "spank/policy.h"
#include "common/errbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KNOWN_KEYS "default, enforce, outdir, window, libdir, spool_max"

static int copy_str(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);

    if (n >= len)
        return -ENAMETOOLONG;
    memcpy(dst, src, n + 1);
    return 0;
}

void argus_policy_defaults(struct argus_policy *p, const char *default_libdir)
{
    memset(p, 0, sizeof *p);
    p->def_mode = ARGUS_MODE_OFF;
    p->enforce = ARGUS_ENFORCE_NONE;
    snprintf(p->outdir, sizeof p->outdir, "%%w");
    snprintf(p->libdir, sizeof p->libdir, "%s", default_libdir ? default_libdir : "");
}

int argus_mode_parse(const char *s)
{
    /* Any case, as ARGUS_MODE itself (common/config.c). */
    if (!s || !*s || strcasecmp(s, "on") == 0)
        return ARGUS_MODE_ON;
    if (strcasecmp(s, "off") == 0)
        return ARGUS_MODE_OFF;
    return -EINVAL;
}

const char *argus_mode_name(int mode)
{
    switch (mode) {
    case ARGUS_MODE_OFF: return "off";
    case ARGUS_MODE_ON: return "on";
    default: return "?";
    }
}

/* One "key=value" word. bit: which key it was (to refuse repeats). */
static int parse_word(struct argus_policy *p, const char *word, unsigned *seen, char *err,
                      size_t errlen)
{
    static const char *const keys[] = {"default", "enforce", "outdir", "window", "libdir",
                                       "spool_max"};
    const char *eq = strchr(word, '=');
    size_t klen;
    int k = -1;

    if (!eq) {
        argus_seterr(err, errlen, "plugstack.conf argument '%s' is not key=value (keys: %s)", word,
               KNOWN_KEYS);
        return -EINVAL;
    }
    klen = (size_t)(eq - word);
    for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
        if (strlen(keys[i]) == klen && strncmp(word, keys[i], klen) == 0)
            k = i;
    if (k < 0) {
        argus_seterr(err, errlen, "plugstack.conf: unknown key '%.*s' in '%s' (keys: %s)",
                     (int)klen, word, word, KNOWN_KEYS);
        return -EINVAL;
    }
    if (*seen & (1u << k)) {
        argus_seterr(err, errlen, "plugstack.conf: key '%s' given twice", keys[k]);
        return -EINVAL;
    }
    *seen |= 1u << k;

    const char *v = eq + 1;
    switch (k) {
    case 0: /* default */
        if (strcmp(v, "on") == 0)
            p->def_mode = ARGUS_MODE_ON;
        else if (strcmp(v, "off") == 0)
            p->def_mode = ARGUS_MODE_OFF;
        else
            goto bad_value;
        return 0;
    case 1: /* enforce */
        if (strcmp(v, "on") == 0)
            p->enforce = ARGUS_ENFORCE_ON;
        else if (strcmp(v, "off") == 0)
            p->enforce = ARGUS_ENFORCE_OFF;
        else if (strcmp(v, "none") == 0)
            p->enforce = ARGUS_ENFORCE_NONE;
        else
            goto bad_value;
        return 0;
    case 2: /* outdir */
        if (!*v) {
            argus_seterr(err, errlen, "plugstack.conf: outdir= is empty (e.g. outdir=%%w or "
                   "outdir=/scratch/%%u/argus)");
            return -EINVAL;
        }
        if (argus_template_check(v, err, errlen) != 0)
            return -EINVAL;
        if (copy_str(p->outdir, sizeof p->outdir, v) != 0)
            goto too_long;
        return 0;
    case 3: { /* window */
        char cerr[256];
        if (argus_config_check("ARGUS_WINDOW", v, cerr, sizeof cerr) != 0) {
            argus_seterr(err, errlen, "plugstack.conf: window=%s: %s", v, cerr);
            return -EINVAL;
        }
        if (copy_str(p->window, sizeof p->window, v) != 0)
            goto too_long;
        return 0;
    }
    case 4: /* libdir */
        if (v[0] != '/') {
            argus_seterr(err, errlen, "plugstack.conf: libdir=%s must be an absolute directory "
                   "(where libargus.so is installed)", v);
            return -EINVAL;
        }
        if (copy_str(p->libdir, sizeof p->libdir - sizeof "/libargus.so", v) != 0)
            goto too_long;
        return 0;
    case 5: { /* spool_max */
        char cerr[256];
        if (argus_config_check("ARGUS_SPOOL_MAX", v, cerr, sizeof cerr) != 0) {
            argus_seterr(err, errlen, "plugstack.conf: spool_max=%s: %s", v, cerr);
            return -EINVAL;
        }
        if (copy_str(p->spool_max, sizeof p->spool_max, v) != 0)
            goto too_long;
        return 0;
    }
    }
bad_value:
    argus_seterr(err, errlen, "plugstack.conf: %s has a bad value (accepted: %s)", word,
           k == 0 ? "on, off" : "on, off, none");
    return -EINVAL;
too_long:
    argus_seterr(err, errlen, "plugstack.conf: %s: value too long", word);
    return -ENAMETOOLONG;
}

int argus_policy_parse(struct argus_policy *p, int ac, char *const av[],
                       const char *default_libdir, char *err, size_t errlen)
{
    unsigned seen = 0;
    int rc;

    argus_policy_defaults(p, default_libdir);
    for (int i = 0; i < ac; i++) {
        rc = parse_word(p, av[i], &seen, err, errlen);
        if (rc != 0)
            return rc;
    }
    if (p->libdir[0] != '/') {
        argus_seterr(err, errlen, "plugstack.conf: no usable libdir= (the built-in '%s' is not "
               "absolute)", p->libdir);
        return -EINVAL;
    }
    return 0;
}

/* A value ARGUS_SPOOL_MAX accepts, as a number of MiB (0: no cap); -1 if not one. */
static long spool_mib(const char *v)
{
    char *end;
    if (!v || argus_config_check("ARGUS_SPOOL_MAX", v, NULL, 0) != 0)
        return -1;
    long n = strtol(v, &end, 10);
    return *end ? -1 : n;
}

const char *argus_policy_spool_max(const struct argus_policy *p, const char *user)
{
    if (!p->spool_max[0])
        return NULL;
    const long site = spool_mib(p->spool_max), mine = spool_mib(user);
    if (site == 0 || (mine > 0 && mine <= site))
        return NULL;
    return p->spool_max;
}

int argus_policy_decide(const struct argus_policy *p, int requested, int *mode, char *err,
                        size_t errlen)
{
    switch (p->enforce) {
    case ARGUS_ENFORCE_ON:
        *mode = ARGUS_MODE_ON;
        if (requested == ARGUS_MODE_OFF) {
            argus_seterr(err, errlen, "this site runs Argus on every job (plugstack.conf "
                         "enforce=on)");
            return -EPERM;
        }
        break;
    case ARGUS_ENFORCE_OFF:
        *mode = ARGUS_MODE_OFF;
        if (requested == ARGUS_MODE_ON) {
            argus_seterr(err, errlen, "Argus is disabled on this site (plugstack.conf "
                         "enforce=off)");
            return -EPERM;
        }
        return 0;
    default:
        *mode = requested == ARGUS_REQ_NONE ? p->def_mode : requested;
        break;
    }
    return 0;
}

int argus_template_check(const char *tmpl, char *err, size_t errlen)
{
    for (const char *c = tmpl; *c; c++) {
        if (*c != '%')
            continue;
        c++;
        if (!*c || !strchr("jsuxw%", *c)) {
            argus_seterr(err, errlen, "plugstack.conf: outdir=%s: unknown code '%%%.1s' (codes: "
                   "%%j job id, %%s step id, %%u user, %%x job name, %%w working directory, "
                   "%%%% a percent sign)", tmpl, *c ? c : "");
            return -EINVAL;
        }
    }
    return 0;
}

/* Append s to out at *n; safe=1 reduces it to [A-Za-z0-9._-] and never yields "." or "..". */
static int put(char *out, size_t outlen, size_t *n, const char *s, int safe)
{
    size_t len = strlen(s), start = *n;

    if (*n + len >= outlen)
        return -ENAMETOOLONG;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[(*n)++] = !safe || isalnum(ch) || ch == '.' || ch == '_' || ch == '-'
                          ? (char)ch : '_';
    }
    out[*n] = '\0';
    if (safe && (strcmp(out + start, ".") == 0 || strcmp(out + start, "..") == 0))
        memset(out + start, '_', len);
    return 0;
}

int argus_template_expand(const char *tmpl, const struct argus_tmpl_vars *v, char *out,
                          size_t outlen, char *err, size_t errlen)
{
    const char *wd = v->workdir && *v->workdir ? v->workdir : ".";
    size_t n = 0;
    int rc = 0;

    if (outlen == 0)
        return -ENAMETOOLONG;
    out[0] = '\0';
    if (argus_template_check(tmpl, err, errlen) != 0)
        return -EINVAL;
    for (const char *c = tmpl; *c && rc == 0; c++) {
        char lit[2] = {*c, '\0'};
        const char *s;

        if (*c != '%') {
            rc = put(out, outlen, &n, lit, 0);
            continue;
        }
        switch (*++c) {
        case 'j': s = v->jobid; break;
        case 's': s = v->stepid; break;
        case 'u': s = v->user; break;
        case 'x': s = v->jobname; break;
        case 'w': rc = put(out, outlen, &n, wd, 0); continue;
        default: rc = put(out, outlen, &n, "%", 0); continue;
        }
        rc = put(out, outlen, &n, s && *s ? s : "unknown", 1);
    }
    if (rc == 0 && out[0] != '/') { /* relative: against the working directory */
        char tmp[PATH_MAX];
        if (snprintf(tmp, sizeof tmp, "%s/%s", wd, out) >= (int)sizeof tmp ||
            copy_str(out, outlen, tmp) != 0)
            rc = -ENAMETOOLONG;
    }
    if (rc != 0)
        argus_seterr(err, errlen, "outdir=%s: expanded path too long", tmpl);
    return rc;
}

/* LD_PRELOAD elements are separated by colons or spaces (ld.so(8)). */
#define SEPS ": "

int argus_preload_has(const char *list, const char *lib)
{
    size_t ll = strlen(lib);

    for (const char *c = list ? list : ""; *c;) {
        size_t n = strcspn(c, SEPS);
        if (n == ll && strncmp(c, lib, n) == 0)
            return 1;
        c += n;
        c += strspn(c, SEPS);
    }
    return 0;
}

int argus_preload_prepend(const char *old, const char *lib, char *out, size_t outlen)
{
    int n;

    if (old && argus_preload_has(old, lib))
        n = snprintf(out, outlen, "%s", old);
    else if (old && *old)
        n = snprintf(out, outlen, "%s:%s", lib, old);
    else
        n = snprintf(out, outlen, "%s", lib);
    return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int argus_preload_remove(const char *old, const char *lib, char *out, size_t outlen)
{
    size_t ll = strlen(lib), o = 0;

    if (outlen == 0)
        return -ENAMETOOLONG;
    out[0] = '\0';
    for (const char *c = old ? old : ""; *c;) {
        c += strspn(c, SEPS);
        size_t n = strcspn(c, SEPS);
        if (n && !(n == ll && strncmp(c, lib, n) == 0)) {
            if (o + n + 2 > outlen)
                return -ENAMETOOLONG;
            if (o)
                out[o++] = ':';
            memcpy(out + o, c, n);
            o += n;
            out[o] = '\0';
        }
        c += n;
    }
    return 0;
}
