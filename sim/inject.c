/* inject.c — anomaly injection for argus-simtrain: strict parsing of --inject SPECs
 * (one line naming the problem on any error), the per-step factors a rank applies, and
 * the ground-truth JSON that tests compare Argus's report with (YAJL's generator). It
 * must not touch MPI or emit kernels.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "sim/sim.h"

#define MAX_FACTOR 100.0
#define MAX_STALL_MS 600000.0

static const char *const kind_names[] = {
    [SIM_INJ_COMPUTE_STRAGGLER] = "compute_straggler",
    [SIM_INJ_COMM_DEGRADATION] = "comm_degradation",
    [SIM_INJ_PIPELINE_BUBBLE] = "pipeline_bubble",
    [SIM_INJ_HOST_STALL] = "host_stall",
    [SIM_INJ_STEP_REGRESSION] = "step_regression",
    [SIM_INJ_KERNEL_DEGRADATION] = "kernel_degradation",
    [SIM_INJ_ITERATION_JITTER] = "iteration_jitter",
    [SIM_INJ_CRASH] = "crash",
};
#define NKINDS ((int)(sizeof(kind_names) / sizeof(kind_names[0])))

/* Keys a SPEC may hold; each kind allows a subset. */
enum key { KEY_RANKS, KEY_STEPS, KEY_STEP, KEY_FACTOR, KEY_MS, KEY_KERNEL, KEY_STAGE,
           KEY_GROUP, KEY_INDEX, KEY_RANK, NKEYS };
static const char *const key_names[NKEYS] = {
    "ranks", "steps", "step", "factor", "ms", "kernel", "stage", "group", "index", "rank",
};
#define B(k) (1u << (k))

static const unsigned kind_allowed[] = {
    [SIM_INJ_COMPUTE_STRAGGLER] = B(KEY_RANKS) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_COMM_DEGRADATION] = B(KEY_GROUP) | B(KEY_INDEX) | B(KEY_RANK) | B(KEY_RANKS) |
                                 B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_PIPELINE_BUBBLE] = B(KEY_STAGE) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_HOST_STALL] = B(KEY_RANKS) | B(KEY_STEPS) | B(KEY_MS),
    [SIM_INJ_STEP_REGRESSION] = B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_KERNEL_DEGRADATION] = B(KEY_RANKS) | B(KEY_KERNEL) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_ITERATION_JITTER] = B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_CRASH] = B(KEY_RANK) | B(KEY_STEP),
};
static const unsigned kind_required[] = {
    [SIM_INJ_COMPUTE_STRAGGLER] = B(KEY_RANKS) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_COMM_DEGRADATION] = B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_PIPELINE_BUBBLE] = B(KEY_STAGE) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_HOST_STALL] = B(KEY_RANKS) | B(KEY_STEPS) | B(KEY_MS),
    [SIM_INJ_STEP_REGRESSION] = B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_KERNEL_DEGRADATION] = B(KEY_RANKS) | B(KEY_KERNEL) | B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_ITERATION_JITTER] = B(KEY_STEPS) | B(KEY_FACTOR),
    [SIM_INJ_CRASH] = B(KEY_RANK) | B(KEY_STEP),
};

const char *sim_inject_kind_name(enum sim_inject_kind k)
{
    return (int)k >= 0 && (int)k < NKINDS ? kind_names[k] : "?";
}

void sim_group_ranks(const struct sim_opts *o, enum sim_group_type g, int index, int *out)
{
    if (g == SIM_GROUP_DP) {
        const int tp_i = index % o->tp, pp_i = index / o->tp;
        for (int d = 0; d < o->dp; d++)
            out[d] = tp_i + o->tp * (d + o->dp * pp_i);
    } else {
        for (int t = 0; t < o->tp; t++)
            out[t] = index * o->tp + t;
    }
}

struct parse {
    const char *spec;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct parse *p, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "--inject '%s': %s", p->spec, msg);
    return -EINVAL;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return -EINVAL;
    *out = v;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "5", "4-7", "1,3,8-9" (commas already joined by the caller). Sorted, unique. */
static int parse_ranks(struct parse *p, char *val, int world, struct sim_inject *out)
{
    int cap = 8, n = 0;
    int *v = malloc((size_t)cap * sizeof *v);
    if (!v)
        return fail(p, "out of memory");
    for (char *save = NULL, *tok = strtok_r(val, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        long a, b;
        char *dash = strchr(tok, '-');
        if (dash) {
            *dash = '\0';
            if (parse_long(tok, 0, world - 1, &a) || parse_long(dash + 1, 0, world - 1, &b) ||
                b < a) {
                *dash = '-';
                free(v);
                return fail(p, "ranks: bad range '%s' (ranks are 0..%d)", tok, world - 1);
            }
        } else if (parse_long(tok, 0, world - 1, &a)) {
            free(v);
            return fail(p, "ranks: bad rank '%s' (ranks are 0..%d)", tok, world - 1);
        } else {
            b = a;
        }
        for (long x = a; x <= b; x++) {
            if (n == cap) {
                int *nv = realloc(v, (size_t)(cap *= 2) * sizeof *v);
                if (!nv) {
                    free(v);
                    return fail(p, "out of memory");
                }
                v = nv;
            }
            v[n++] = (int)x;
        }
    }
    if (n == 0) {
        free(v);
        return fail(p, "ranks: empty list");
    }
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    out->ranks = v;
    out->nranks = u;
    return 0;
}

/* "A-B" (inclusive), "A-" (to the end) or "A"; clipped to [0, steps-1]. */
static int parse_steps(struct parse *p, char *val, int steps, struct sim_inject *out)
{
    long a, b = steps - 1;
    char *dash = strchr(val, '-');
    if (dash)
        *dash = '\0';
    if (parse_long(val, 0, 1000000000L, &a) ||
        (dash && dash[1] && parse_long(dash + 1, 0, 1000000000L, &b)))
        return fail(p, "steps: want A-B, A- or A with step ids >= 0");
    if (!dash)
        b = a;
    if (b < a)
        return fail(p, "steps: range %ld-%ld is backwards", a, b);
    if (a > steps - 1)
        return fail(p, "steps: %ld is past the last step (%d)", a, steps - 1);
    out->step_lo = (int)a;
    out->step_hi = (int)(b > steps - 1 ? steps - 1 : b);
    return 0;
}

/* A compute kernel of the model whose name contains sub, or -1. */
static int kernel_matches(const char *sub)
{
    for (int k = 0; k < K_COUNT; k++)
        if (sim_kernels[k].cls == ARGUS_KERNEL_COMPUTE && strstr(sim_kernels[k].name, sub))
            return k;
    return -1;
}

static int apply_key(struct parse *p, const struct sim_opts *o, enum key key, char *val,
                     struct sim_inject *out)
{
    const int world = o->tp * o->pp * o->dp;
    long l;
    switch (key) {
    case KEY_RANKS:
        return parse_ranks(p, val, world, out);
    case KEY_RANK:
        if (parse_long(val, 0, world - 1, &l))
            return fail(p, "rank: bad rank '%s' (ranks are 0..%d)", val, world - 1);
        out->ranks = malloc(sizeof *out->ranks);
        if (!out->ranks)
            return fail(p, "out of memory");
        out->ranks[0] = (int)l;
        out->nranks = 1;
        return 0;
    case KEY_STEPS:
        return parse_steps(p, val, o->steps, out);
    case KEY_STEP:
        if (parse_long(val, 0, o->steps - 1, &l))
            return fail(p, "step: bad step '%s' (steps are 0..%d)", val, o->steps - 1);
        out->step_lo = out->step_hi = (int)l;
        return 0;
    case KEY_FACTOR:
        if (parse_double(val, 1e-3, MAX_FACTOR, &out->factor))
            return fail(p, "factor: bad value '%s' (want a number in (0, %g])", val, MAX_FACTOR);
        return 0;
    case KEY_MS:
        if (parse_double(val, 0.0, MAX_STALL_MS, &out->ms))
            return fail(p, "ms: bad value '%s' (want 0..%g)", val, MAX_STALL_MS);
        return 0;
    case KEY_KERNEL:
        if (!*val || strlen(val) >= sizeof out->kernel)
            return fail(p, "kernel: want a non-empty name substring under %zu characters",
                        sizeof out->kernel);
        if (kernel_matches(val) < 0)
            return fail(p, "kernel: '%s' is in no compute kernel name of the model", val);
        strcpy(out->kernel, val);
        return 0;
    case KEY_STAGE:
        if (parse_long(val, 0, o->pp - 1, &l))
            return fail(p, "stage: bad stage '%s' (stages are 0..%d)", val, o->pp - 1);
        out->stage = (int)l;
        return 0;
    case KEY_GROUP:
        if (!strcmp(val, "dp"))
            out->group = SIM_GROUP_DP;
        else if (!strcmp(val, "tp"))
            out->group = SIM_GROUP_TP;
        else
            return fail(p, "group: want dp or tp, not '%s'", val);
        return 0;
    case KEY_INDEX:
        if (parse_long(val, 0, 1000000, &l))
            return fail(p, "index: bad group index '%s'", val);
        out->group_index = (int)l;
        return 0;
    case NKEYS:
        break;
    }
    return fail(p, "internal: bad key");
}

static int group_of(const struct sim_opts *o, int is_dp, int rank)
{
    return is_dp ? rank % o->tp + o->tp * (rank / (o->tp * o->dp)) : rank / o->tp;
}

/* comm_degradation: resolve index= / rank= / ranks= to the group and its member ranks. */
static int resolve_group(struct parse *p, const struct sim_opts *o, unsigned seen,
                         struct sim_inject *out)
{
    const int is_dp = out->group == SIM_GROUP_DP;
    const char *gname = is_dp ? "DP" : "TP";
    const int ngroups = is_dp ? o->tp * o->pp : o->dp * o->pp;
    const int size = is_dp ? o->dp : o->tp;
    const unsigned sel = seen & (B(KEY_INDEX) | B(KEY_RANK) | B(KEY_RANKS));
    if (sel == 0 || (sel & (sel - 1)))
        return fail(p, "give exactly one of index=K, rank=R or ranks=R,... to select the "
                    "group");
    if (size < 2)
        return fail(p, "group=%s needs --%s > 1 (no %s collectives otherwise)",
                    is_dp ? "dp" : "tp", is_dp ? "dp" : "tp", gname);
    if (sel != B(KEY_INDEX)) {
        const int g = group_of(o, is_dp, out->ranks[0]);
        for (int i = 1; i < out->nranks; i++)
            if (group_of(o, is_dp, out->ranks[i]) != g)
                return fail(p, "ranks %d and %d are not in one %s group", out->ranks[0],
                            out->ranks[i], gname);
        out->group_index = g;
        free(out->ranks);
        out->ranks = NULL;
    } else if (out->group_index >= ngroups) {
        return fail(p, "index: group %d does not exist (%s groups are 0..%d)",
                    out->group_index, gname, ngroups - 1);
    }
    out->ranks = malloc((size_t)size * sizeof *out->ranks);
    if (!out->ranks)
        return fail(p, "out of memory");
    out->nranks = size;
    sim_group_ranks(o, out->group, out->group_index, out->ranks);
    return 0;
}

int sim_inject_parse(const char *spec, const struct sim_opts *o, struct sim_inject *out,
                     char *err, size_t errlen)
{
    struct parse p = { spec, err, errlen };
    char buf[1024];
    char *vals[NKEYS] = { 0 };
    unsigned seen = 0;
    int kind = -1, rc;

    memset(out, 0, sizeof *out);
    out->factor = 1.0;
    if (strlen(spec) >= sizeof buf)
        return fail(&p, "too long");
    strcpy(buf, spec);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(buf, kind_names[k]))
            kind = k;
    if (kind < 0)
        return fail(&p, "unknown kind '%s' (compute_straggler, comm_degradation, "
                    "pipeline_bubble, host_stall, step_regression, kernel_degradation, "
                    "iteration_jitter, crash)", buf);
    out->kind = (enum sim_inject_kind)kind;

    /* key=val,key=val; a comma-separated piece without '=' continues the previous value
     * (ranks=1,2,3). Values are rewritten in place to keep their commas. */
    char *w = colon ? colon + 1 : buf + strlen(buf);
    enum key last = NKEYS;
    char *end = w + strlen(w);
    for (char *tok = w; tok < end && *tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(tok, '=');
        if (!eq) {
            if (last == NKEYS || !*tok)
                return fail(&p, "'%s' is not key=value", tok);
            tok[-1] = ','; /* re-join with the previous value */
        } else {
            *eq = '\0';
            int k = -1;
            for (int i = 0; i < NKEYS; i++)
                if (!strcmp(tok, key_names[i]))
                    k = i;
            if (k < 0 || !(kind_allowed[kind] & B(k)))
                return fail(&p, "unknown key '%s' for %s", tok, kind_names[kind]);
            if (seen & B(k))
                return fail(&p, "key '%s' given twice", tok);
            seen |= B(k);
            vals[k] = eq + 1;
            last = (enum key)k;
        }
        if (!comma)
            break;
        tok = comma + 1;
    }
    for (int k = 0; k < NKEYS; k++)
        if ((kind_required[kind] & B(k)) && !(seen & B(k)))
            return fail(&p, "%s needs %s=", kind_names[kind], key_names[k]);
    for (int k = 0; k < NKEYS; k++) {
        if (!(seen & B(k)))
            continue;
        rc = apply_key(&p, o, (enum key)k, vals[k], out);
        if (rc)
            goto bad;
    }
    if (kind == SIM_INJ_COMM_DEGRADATION) {
        rc = resolve_group(&p, o, seen, out);
        if (rc)
            goto bad;
    }
    if (kind == SIM_INJ_PIPELINE_BUBBLE) { /* the sources: every rank of the stage */
        const int per_stage = o->tp * o->dp;
        out->ranks = malloc((size_t)per_stage * sizeof *out->ranks);
        if (!out->ranks)
            return fail(&p, "out of memory");
        out->nranks = per_stage;
        for (int i = 0; i < per_stage; i++)
            out->ranks[i] = out->stage * per_stage + i;
    }
    return 0;
bad:
    free(out->ranks);
    out->ranks = NULL;
    return rc;
}

void sim_inject_free(struct sim_opts *o)
{
    for (int i = 0; i < o->ninj; i++)
        free(o->inj[i].ranks);
    free(o->inj);
    o->inj = NULL;
    o->ninj = 0;
}

static int has_rank(const struct sim_inject *in, int rank)
{
    for (int i = 0; i < in->nranks; i++)
        if (in->ranks[i] == rank)
            return 1;
    return 0;
}

int sim_inject_step(struct sim_rank *r)
{
    const struct sim_opts *o = r->o;
    double cf = 1.0;
    int crash = 0;

    for (int k = 0; k < K_COUNT; k++)
        r->kfactor[k] = 1.0;
    r->tp_comm_factor = r->dp_comm_factor = 1.0;
    r->host_stall_ns = 0;
    for (int i = 0; i < o->ninj; i++) {
        const struct sim_inject *in = &o->inj[i];
        if (r->step < in->step_lo || r->step > in->step_hi)
            continue;
        switch (in->kind) {
        case SIM_INJ_COMPUTE_STRAGGLER:
            if (has_rank(in, r->rank))
                cf *= in->factor;
            break;
        case SIM_INJ_PIPELINE_BUBBLE:
            if (r->pp_i == in->stage)
                cf *= in->factor;
            break;
        case SIM_INJ_STEP_REGRESSION:
        case SIM_INJ_ITERATION_JITTER:
            cf *= in->factor;
            break;
        case SIM_INJ_COMM_DEGRADATION:
            if (in->group == SIM_GROUP_DP && in->group_index == r->dp_group)
                r->dp_comm_factor *= in->factor;
            if (in->group == SIM_GROUP_TP && in->group_index == r->tp_group)
                r->tp_comm_factor *= in->factor;
            break;
        case SIM_INJ_HOST_STALL:
            if (has_rank(in, r->rank))
                r->host_stall_ns += (uint64_t)(in->ms * 1e6);
            break;
        case SIM_INJ_KERNEL_DEGRADATION:
            if (!has_rank(in, r->rank))
                break;
            for (int k = 0; k < K_COUNT; k++)
                if (sim_kernels[k].cls == ARGUS_KERNEL_COMPUTE &&
                    strstr(sim_kernels[k].name, in->kernel))
                    r->kfactor[k] *= in->factor;
            break;
        case SIM_INJ_CRASH:
            if (has_rank(in, r->rank))
                crash = 1;
            break;
        }
    }
    for (int k = 0; k < K_COUNT; k++)
        if (sim_kernels[k].cls == ARGUS_KERNEL_COMPUTE)
            r->kfactor[k] *= cf;
    return crash;
}

/* ---- ground truth ------------------------------------------------------------------- */

#define GK(x)                                                                                \
    do {                                                                                     \
        if ((x) != yajl_gen_status_ok)                                                       \
            return -EIO;                                                                     \
    } while (0)

static yajl_gen_status gen_str(yajl_gen g, const char *s)
{
    return yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* A number as "%g" prints it (the truth file's text for factors and times). */
static yajl_gen_status gen_g(yajl_gen g, double v)
{
    char b[40];
    int n = snprintf(b, sizeof b, "%g", v);
    if (n <= 0 || (size_t)n >= sizeof b)
        return yajl_gen_invalid_number;
    return yajl_gen_number(g, b, (size_t)n);
}

static int json_accepted(yajl_gen g, const struct sim_inject *in)
{
    static const char *const acc[][3] = {
        [SIM_INJ_COMPUTE_STRAGGLER] = { "compute_straggler" },
        [SIM_INJ_COMM_DEGRADATION] = { "comm_degradation" },
        [SIM_INJ_PIPELINE_BUBBLE] = { "pipeline_bubble", "compute_straggler" },
        [SIM_INJ_HOST_STALL] = { "host_stall" },
        [SIM_INJ_STEP_REGRESSION] = { "step_regression" },
        [SIM_INJ_KERNEL_DEGRADATION] = { "kernel_degradation", "compute_straggler" },
        [SIM_INJ_ITERATION_JITTER] = { "iteration_jitter", "step_regression" },
        [SIM_INJ_CRASH] = { "crash" },
    };
    GK(gen_str(g, "accepted_kinds"));
    GK(yajl_gen_array_open(g));
    for (int i = 0; i < 3 && acc[in->kind][i]; i++)
        GK(gen_str(g, acc[in->kind][i]));
    GK(yajl_gen_array_close(g));
    return 0;
}

static int json_injection(yajl_gen g, const struct sim_inject *in)
{
    const int attributable = in->kind != SIM_INJ_STEP_REGRESSION &&
                             in->kind != SIM_INJ_ITERATION_JITTER;
    GK(yajl_gen_map_open(g));
    GK(gen_str(g, "kind"));
    GK(gen_str(g, sim_inject_kind_name(in->kind)));
    GK(gen_str(g, "ranks"));
    GK(yajl_gen_array_open(g));
    for (int i = 0; attributable && i < in->nranks; i++)
        GK(yajl_gen_integer(g, in->ranks[i]));
    GK(yajl_gen_array_close(g));
    GK(gen_str(g, "steps"));
    GK(yajl_gen_array_open(g));
    GK(yajl_gen_integer(g, in->step_lo));
    GK(yajl_gen_integer(g, in->step_hi));
    GK(yajl_gen_array_close(g));
    if (in->kind != SIM_INJ_CRASH && in->kind != SIM_INJ_HOST_STALL) {
        GK(gen_str(g, "factor"));
        GK(gen_g(g, in->factor));
    }
    if (in->kind == SIM_INJ_HOST_STALL) {
        GK(gen_str(g, "ms"));
        GK(gen_g(g, in->ms));
    }
    if (in->kind == SIM_INJ_PIPELINE_BUBBLE) {
        GK(gen_str(g, "stage"));
        GK(yajl_gen_integer(g, in->stage));
    }
    if (in->kind == SIM_INJ_KERNEL_DEGRADATION) {
        GK(gen_str(g, "kernel"));
        GK(gen_str(g, in->kernel));
    }
    if (in->kind == SIM_INJ_COMM_DEGRADATION) {
        GK(gen_str(g, "group"));
        GK(yajl_gen_map_open(g));
        GK(gen_str(g, "type"));
        GK(gen_str(g, in->group == SIM_GROUP_DP ? "dp" : "tp"));
        GK(gen_str(g, "index"));
        GK(yajl_gen_integer(g, in->group_index));
        GK(yajl_gen_map_close(g));
    }
    if (json_accepted(g, in) != 0)
        return -EIO;
    GK(yajl_gen_map_close(g));
    return 0;
}

static int json_truth(yajl_gen g, const struct sim_opts *o)
{
    const char *const lk[3] = {"tp", "pp", "dp"};
    const int lv[3] = {o->tp, o->pp, o->dp};

    GK(yajl_gen_map_open(g));
    GK(gen_str(g, "layout"));
    GK(yajl_gen_map_open(g));
    for (int i = 0; i < 3; i++) {
        GK(gen_str(g, lk[i]));
        GK(yajl_gen_integer(g, lv[i]));
    }
    GK(yajl_gen_map_close(g));
    GK(gen_str(g, "steps"));
    GK(yajl_gen_integer(g, o->steps));
    GK(gen_str(g, "ranks"));
    GK(yajl_gen_integer(g, o->tp * o->pp * o->dp));
    GK(gen_str(g, "microbatches"));
    GK(yajl_gen_integer(g, o->microbatches));
    GK(gen_str(g, "layers_per_stage"));
    GK(yajl_gen_integer(g, o->layers));
    GK(gen_str(g, "seed"));
    char seed[24];
    int n = snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    GK(yajl_gen_number(g, seed, (size_t)n));
    GK(gen_str(g, "noise"));
    GK(gen_g(g, o->noise));
    GK(gen_str(g, "injections"));
    GK(yajl_gen_array_open(g));
    for (int i = 0; i < o->ninj; i++)
        if (json_injection(g, &o->inj[i]) != 0)
            return -EIO;
    GK(yajl_gen_array_close(g));
    GK(yajl_gen_map_close(g));
    return 0;
}

int sim_truth_write(const struct sim_opts *o, const char *path)
{
    char tmp[4096];
    const unsigned char *buf;
    size_t len;
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -ENAMETOOLONG;
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g)
        return -ENOMEM;
    if (json_truth(g, o) != 0 || yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
        yajl_gen_free(g);
        return -EIO;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int e = errno;
        yajl_gen_free(g);
        return -e;
    }
    fwrite(buf, 1, len, f);
    fputc('\n', f);
    yajl_gen_free(g);
    int rc = 0;
    if (fflush(f) || ferror(f) || fsync(fileno(f)))
        rc = errno ? -errno : -EIO;
    if (fclose(f) && !rc)
        rc = errno ? -errno : -EIO;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}
