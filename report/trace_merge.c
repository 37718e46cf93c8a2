/* trace_merge.c — rank 0's L4 merge with clock refinement on collective ends
 * (report/trace_merge.h). Writes nothing but tokens into the caller's yajl_gen. */
#include "report/trace_merge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/types.h"

/* One collective instance of a part. */
struct cend {
    uint64_t name_hash;
    long long step;
    uint32_t occ;
    double end_ns;
};

static yajl_val get(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static int cmp_time(const void *a, const void *b)
{
    const struct cend *x = a, *y = b;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

static int cmp_key(const void *a, const void *b)
{
    const struct cend *x = a, *y = b;
    if (x->name_hash != y->name_hash)
        return x->name_hash < y->name_hash ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return (x->occ > y->occ) - (x->occ < y->occ);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The collective instances of one parsed part, keyed (name, step, occurrence). */
static int collect_ends(yajl_val arr, struct cend **out, size_t *nout)
{
    size_t n = 0, cap = arr->u.array.len ? arr->u.array.len : 1;
    struct cend *v = malloc(cap * sizeof *v);

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < arr->u.array.len; i++) {
        yajl_val e = arr->u.array.values[i];
        const char *cat = YAJL_GET_STRING(get(e, "cat"));
        const char *name = YAJL_GET_STRING(get(e, "name"));
        yajl_val ts = get(e, "ts"), dur = get(e, "dur"), args = get(e, "args");
        yajl_val step = args ? get(args, "step") : NULL;
        if (!cat || strcmp(cat, "collective") != 0 || !name || !YAJL_IS_NUMBER(ts) ||
            !YAJL_IS_NUMBER(dur) || !YAJL_IS_INTEGER(step))
            continue;
        v[n++] = (struct cend){argus_name_hash(name), YAJL_GET_INTEGER(step), 0,
                               (YAJL_GET_DOUBLE(ts) + YAJL_GET_DOUBLE(dur)) * 1000.0};
    }
    qsort(v, n, sizeof *v, cmp_time);
    /* number the instances of each (name, step) in time order */
    for (size_t i = 0; i < n; i++) {
        uint32_t occ = 0;
        for (size_t j = i; j-- > 0;) /* few collectives per step: short scans */
            if (v[j].name_hash == v[i].name_hash && v[j].step == v[i].step) {
                occ = v[j].occ + 1;
                break;
            }
        v[i].occ = occ;
    }
    qsort(v, n, sizeof *v, cmp_key);
    *out = v;
    *nout = n;
    return 0;
}

/* Median and MAD of d[0..n) (sorts d; uses tmp[n]). */
static void median_mad(double *d, size_t n, double *tmp, double *med, double *mad)
{
    qsort(d, n, sizeof *d, cmp_double);
    *med = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
    for (size_t i = 0; i < n; i++)
        tmp[i] = fabs(d[i] - *med);
    qsort(tmp, n, sizeof *tmp, cmp_double);
    *mad = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* Refine part p against the reference instances (see report/trace_merge.h). */
static int refine(struct argus_trace_part *p, const struct cend *ref, size_t nref,
                  const struct cend *mine, size_t nmine)
{
    size_t cap = nref < nmine ? nref : nmine, i = 0, j = 0, nd = 0;
    double *d = malloc((cap ? cap : 1) * sizeof *d), *tmp = malloc((cap ? cap : 1) * sizeof *d);
    uint64_t *nh = malloc((cap ? cap : 1) * sizeof *nh);
    double best_mad = HUGE_VAL, best_med = 0;
    uint32_t best_n = 0;

    if (!d || !tmp || !nh) {
        free(d);
        free(tmp);
        free(nh);
        return -ENOMEM;
    }
    while (i < nref && j < nmine) { /* merge join on (name, step, occurrence) */
        int c = cmp_key(&ref[i], &mine[j]);
        if (c == 0) {
            nh[nd] = ref[i].name_hash;
            d[nd++] = ref[i].end_ns - mine[j].end_ns;
            i++;
            j++;
        } else if (c < 0) {
            i++;
        } else {
            j++;
        }
    }
    for (size_t a = 0; a < nd;) { /* matches come grouped by name */
        size_t b = a;
        while (b < nd && nh[b] == nh[a])
            b++;
        if (b - a >= ARGUS_MERGE_MIN_MATCH) {
            double med, mad;
            median_mad(d + a, b - a, tmp, &med, &mad);
            if (mad <= ARGUS_MERGE_MAX_MAD_NS &&
                (mad < best_mad || (mad == best_mad && b - a > best_n))) {
                best_mad = mad;
                best_med = med;
                best_n = (uint32_t)(b - a);
            }
        }
        a = b;
    }
    if (best_n) {
        p->refine_ns = (int64_t)llround(best_med);
        p->matched = best_n;
        p->mad_ns = best_mad;
    }
    free(d);
    free(tmp);
    free(nh);
    return 0;
}

/* Re-emit v into g; the "ts" of an event object (top) moves by shift_us. 0, or -EIO at
 * the first token g refuses. */
static int emit(yajl_gen g, yajl_val v, double shift_us, int top)
{
    yajl_gen_status st;

    if (YAJL_IS_OBJECT(v)) {
        if (yajl_gen_map_open(g) != yajl_gen_status_ok)
            return -EIO;
        for (size_t i = 0; i < v->u.object.len; i++) {
            const char *k = v->u.object.keys[i];
            yajl_val x = v->u.object.values[i];
            if (yajl_gen_string(g, (const unsigned char *)k, strlen(k)) != yajl_gen_status_ok)
                return -EIO;
            if (top && shift_us != 0 && strcmp(k, "ts") == 0 && YAJL_IS_NUMBER(x)) {
                if (yajl_gen_double(g, YAJL_GET_DOUBLE(x) + shift_us) != yajl_gen_status_ok)
                    return -EIO;
            } else if (emit(g, x, 0, 0) != 0) {
                return -EIO;
            }
        }
        st = yajl_gen_map_close(g);
    } else if (YAJL_IS_ARRAY(v)) {
        if (yajl_gen_array_open(g) != yajl_gen_status_ok)
            return -EIO;
        for (size_t i = 0; i < v->u.array.len; i++)
            if (emit(g, v->u.array.values[i], 0, 0) != 0)
                return -EIO;
        st = yajl_gen_array_close(g);
    } else if (YAJL_IS_STRING(v)) {
        const char *s = YAJL_GET_STRING(v);
        st = yajl_gen_string(g, (const unsigned char *)s, strlen(s));
    } else if (YAJL_IS_NUMBER(v)) {
        const char *s = YAJL_GET_NUMBER(v);
        st = yajl_gen_number(g, s, strlen(s)); /* the number's own text */
    } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
        st = yajl_gen_bool(g, YAJL_IS_TRUE(v));
    } else {
        st = yajl_gen_null(g);
    }
    return st == yajl_gen_status_ok ? 0 : -EIO;
}

int argus_trace_merge(yajl_gen g, struct argus_trace_part *parts, size_t n, int *wrote)
{
    yajl_val *tree = calloc(n ? n : 1, sizeof *tree);
    struct cend **ends = calloc(n ? n : 1, sizeof *ends);
    size_t *nends = calloc(n ? n : 1, sizeof *nends);
    int rc = 0;

    *wrote = 0;
    if (!tree || !ends || !nends) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        parts[k].refine_ns = 0;
        parts[k].matched = 0;
        parts[k].mad_ns = 0;
        tree[k] = yajl_tree_parse(parts[k].json, NULL, 0);
        if (!tree[k] || !YAJL_IS_ARRAY(tree[k]))
            rc = -EINVAL;
        else
            rc = collect_ends(tree[k], &ends[k], &nends[k]);
    }
    for (size_t k = 1; k < n && rc == 0; k++)
        rc = refine(&parts[k], ends[0], nends[0], ends[k], nends[k]);
    if (rc)
        goto out;
    for (size_t k = 0; k < n && rc == 0; k++) /* g sees its first token only now */
        for (size_t i = 0; i < tree[k]->u.array.len && rc == 0; i++)
            if ((rc = emit(g, tree[k]->u.array.values[i], (double)parts[k].refine_ns / 1000.0,
                           1)) == 0)
                *wrote = 1;
out:
    for (size_t k = 0; tree && k < n; k++)
        yajl_tree_free(tree[k]);
    for (size_t k = 0; ends && k < n; k++)
        free(ends[k]);
    free(tree);
    free(ends);
    free(nends);
    return rc;
}
