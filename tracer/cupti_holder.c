/* cupti_holder.c — which tool holds CUPTI (cupti_holder.h): known subscriber names,
 * environment variables and mapped libraries, matched in a fixed order. Reads its inputs
 * once, line by line (bounded line buffer); nothing allocated, nothing logged.
 */
#include "tracer/cupti_holder.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/types.h"

struct clue {
    const char *text; /* substring (names, paths) or variable-name prefix (environment) */
    unsigned why;
};

/* Subscriber names and mapped files, most specific first: libtorch_cuda.so is in every
 * CUDA PyTorch process, so it names Kineto only when nothing else matched. */
static const struct clue names[] = {
    {"libToolsInjection", ARGUS_CUPTI_HELD_NSYS},
    {"nsys", ARGUS_CUPTI_HELD_NSYS},
    {"Nsight Systems", ARGUS_CUPTI_HELD_NSYS},
    {"libInterceptorInjectionTarget", ARGUS_CUPTI_HELD_NCU},
    {"Nsight Compute", ARGUS_CUPTI_HELD_NCU},
    {"nvidia_resiliency_ext", ARGUS_CUPTI_HELD_NVRX},
    {"straggler", ARGUS_CUPTI_HELD_NVRX},
    {"libdcgm", ARGUS_CUPTI_HELD_DCGM},
    {"dcgm", ARGUS_CUPTI_HELD_DCGM},
    {"libkineto", ARGUS_CUPTI_HELD_KINETO},
    {"kineto", ARGUS_CUPTI_HELD_KINETO},
};
static const struct clue weak_names[] = {
    {"libtorch_cuda", ARGUS_CUPTI_HELD_KINETO},
};
static const struct clue vars[] = {
    {"NSYS_", ARGUS_CUPTI_HELD_NSYS},
    {"NV_COMPUTE_PROFILER", ARGUS_CUPTI_HELD_NCU},
    {"NV_NSIGHT_INJECTION", ARGUS_CUPTI_HELD_NCU},
    {"NVRX_", ARGUS_CUPTI_HELD_NVRX},
    {"DCGM_", ARGUS_CUPTI_HELD_DCGM},
    {"KINETO_", ARGUS_CUPTI_HELD_KINETO},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void say(char *ev, size_t cap, const char *s, size_t len)
{
    if (!ev || !cap)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(ev, s, len);
    ev[len] = '\0';
}

static const struct clue *match_name(const char *s, const struct clue *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasestr(s, t[i].text))
            return &t[i];
    return NULL;
}

/* A maps line's path (from its first '/', without the newline; NULL: none) and, in *base,
 * its file name. */
static const char *path_of(char *line, const char **base)
{
    char *p = strchr(line, '/');

    if (!p)
        return NULL;
    p[strcspn(p, "\n")] = '\0';
    *base = strrchr(p, '/') + 1;
    return p;
}

unsigned argus_cupti_holder(const char *old, char *const *env, FILE *maps, char *evidence,
                            size_t cap)
{
    const struct clue *c;
    char line[1024];
    unsigned weak = 0;

    say(evidence, cap, "", 0);
    if (old && old[0]) {
        say(evidence, cap, old, strlen(old));
        c = match_name(old, names, N(names));
        return c ? c->why : ARGUS_CUPTI_HELD_OTHER;
    }
    for (char *const *e = env; e && *e; e++)
        for (size_t i = 0; i < N(vars); i++)
            if (strncmp(*e, vars[i].text, strlen(vars[i].text)) == 0) {
                say(evidence, cap, *e, strcspn(*e, "="));
                return vars[i].why;
            }
    while (maps && fgets(line, sizeof line, maps)) {
        const char *b = NULL, *p = path_of(line, &b);
        if (!p)
            continue;
        if ((c = match_name(p, names, N(names)))) {
            say(evidence, cap, b, strlen(b));
            return c->why;
        }
        if (!weak && (c = match_name(p, weak_names, N(weak_names)))) {
            say(evidence, cap, b, strlen(b));
            weak = c->why;
        }
    }
    return weak ? weak : ARGUS_CUPTI_HELD_OTHER;
}
