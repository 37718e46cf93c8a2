/* xcheck.c — the cross-check with an in-band Argus run (flows/xcheck.h). */
#include "flows/xcheck.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "common/errbuf.h"
#include "flows/flows_int.h"

#define MAX_FILE (64u << 20)
#define MAX_STEPS 1000000

/* the whole file, NUL-terminated; NULL with errno */
static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            if (cap >= MAX_FILE) {
                errno = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap + 65537);
            if (!nb)
                break;
            buf = nb, cap += 65536;
        }
        size_t k = fread(buf + n, 1, cap - n, fp);
        n += k;
        if (k == 0) {
            if (ferror(fp))
                break;
            fclose(fp);
            buf[n] = '\0';
            *len = n;
            return buf;
        }
    }
    int e = errno;
    fclose(fp);
    free(buf);
    errno = e ? e : EIO;
    return NULL;
}

static long long int_at(yajl_val root, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    yajl_val v = yajl_tree_get(root, path, yajl_t_number);
    return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

/* steps.csv beside report.json: per step the latest end over ranks */
static int load_steps(struct fl_xcheck *x, const char *path, char *errbuf, size_t errlen)
{
    size_t n;
    char *t = slurp(path, &n);
    if (!t)
        return errno == ENOENT ? 0 : (argus_seterr(errbuf, errlen, "%s: %s", path,
                                                   strerror(errno)), -errno);
    int cs = -1, ce = -1, rc = 0;
    long first = -1, last = -1;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        char *p = t;
        int header = 1;
        while (*p) {
            char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            char line[512];
            if (len >= sizeof line)
                len = sizeof line - 1;
            memcpy(line, p, len);
            line[len] = '\0';
            p += len + (nl != NULL);
            char *f[16];
            int nf = 0;
            for (char *q = line, *tok; nf < 16 && (tok = strsep(&q, ",\r")) != NULL;)
                f[nf++] = tok;
            if (header) {
                for (int i = 0; i < nf; i++) {
                    if (strcmp(f[i], "step") == 0)
                        cs = i;
                    if (strcmp(f[i], "end_ns") == 0)
                        ce = i;
                }
                header = 0;
                if (cs < 0 || ce < 0) {
                    argus_seterr(errbuf, errlen, "%s: no step or end_ns column", path);
                    rc = -EINVAL;
                    break;
                }
                continue;
            }
            if (nf <= cs || nf <= ce)
                continue;
            char *e1, *e2;
            long s = strtol(f[cs], &e1, 10);
            unsigned long long end = strtoull(f[ce], &e2, 10);
            if (*e1 || *e2 || s < 0 || e1 == f[cs] || e2 == f[ce])
                continue;
            if (pass == 0) {
                if (first < 0 || s < first)
                    first = s;
                if (s > last)
                    last = s;
            } else if ((uint64_t)end > x->step_end[s - first])
                x->step_end[s - first] = end;
        }
        if (pass == 0 && rc == 0) {
            if (first < 0 || last - first >= MAX_STEPS)
                break;
            x->nsteps = (size_t)(last - first + 1);
            if (!(x->step_end = calloc(x->nsteps, sizeof *x->step_end)))
                rc = -ENOMEM;
        }
    }
    free(t);
    return rc;
}

int fl_xcheck_load(struct fl_xcheck *x, const char *path, char *errbuf, size_t errlen)
{
    struct stat st;
    char rp[600], sp[600], err[256];
    memset(x, 0, sizeof *x);
    x->job = -1;
    x->dur_err_median = x->end_offset_ms = NAN;
    int dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(rp, sizeof rp, dir ? "%s/report.json" : "%s", path);
    snprintf(x->path, sizeof x->path, "%.500s", rp);
    size_t n;
    char *t = slurp(rp, &n);
    if (!t) {
        argus_seterr(errbuf, errlen, "%s: %s", rp, strerror(errno));
        return -errno;
    }
    yajl_val root = yajl_tree_parse(t, err, sizeof err);
    free(t);
    if (!root) {
        argus_seterr(errbuf, errlen, "%s: not JSON (%s)", rp, err);
        return -EINVAL;
    }
    x->tp = (int)int_at(root, "layout", "tp"), x->pp = (int)int_at(root, "layout", "pp");
    x->dp = (int)int_at(root, "layout", "dp"), x->ranks = (int)int_at(root, "job", "ranks");
    const char *mp[] = {"steps", "median_ms", NULL};
    yajl_val m = yajl_tree_get(root, mp, yajl_t_number);
    x->argus_median_ms = m ? YAJL_GET_DOUBLE(m) : NAN;
    yajl_tree_free(root);
    if (x->tp < 1 || x->pp < 1 || x->dp < 1 || x->ranks < 1 || x->ranks > 10000000) {
        argus_seterr(errbuf, errlen, "%s: no layout (tp, pp, dp) or job.ranks: not an Argus "
                     "report.json", rp);
        return -EINVAL;
    }
    const char *slash = strrchr(rp, '/');
    snprintf(sp, sizeof sp, "%.*ssteps.csv", slash ? (int)(slash - rp + 1) : 0, rp);
    return load_steps(x, sp, errbuf, errlen);
}

void fl_xcheck_free(struct fl_xcheck *x)
{
    free(x->step_end);
    x->step_end = NULL;
}

static int rank_of(const struct argus_flows *f, uint32_t e)
{
    return f->ep[e].topo ? f->ep[e].topo->rank : -1;
}

/* the steps' durations, aligned by the best shift: the median relative error */
static int compare_steps(struct fl_xcheck *x, const struct fl_job *jb)
{
    if (jb->nsteps < 3 || x->nsteps < 3)
        return 0;
    double *v = malloc((jb->nsteps + x->nsteps) * sizeof *v);
    if (!v)
        return -ENOMEM;
    double best = INFINITY;
    int lo_sh = -3, hi_sh = 3;
    uint64_t af = x->step_end[0], al = x->step_end[x->nsteps - 1];
    if (af && al && jb->step_end[0] <= al && jb->step_end[jb->nsteps - 1] >= af) {
        /* one clock (the spans overlap): the shift that puts each flows step end next to
         * Argus's nearest, and the offset of the ends */
        size_t k = 0, nv = 0;
        for (size_t s = 0; s < jb->nsteps; s++) {
            uint64_t t = jb->step_end[s];
            if (!t)
                continue;
            while (k + 1 < x->nsteps && fabs((double)x->step_end[k + 1] - (double)t) <=
                                            fabs((double)x->step_end[k] - (double)t))
                k++;
            v[nv++] = (double)k - (double)s;
        }
        if (nv) {
            lo_sh = hi_sh = (int)lround(fl_median(v, nv));
            nv = 0;
            for (size_t s = 0; s < jb->nsteps; s++) {
                long a = (long)s + lo_sh;
                if (jb->step_end[s] && a >= 0 && (size_t)a < x->nsteps && x->step_end[a])
                    v[nv++] = (double)jb->step_end[s] - (double)x->step_end[a];
            }
            x->end_offset_ms = nv ? fl_median(v, nv) / 1e6 : NAN;
        }
    }
    for (int sh = lo_sh; sh <= hi_sh; sh++) {
        size_t k = 0;
        for (size_t s = 1; s < jb->nsteps; s++) {
            long a = (long)s + sh;
            if (a < 1 || (size_t)a >= x->nsteps || !x->step_end[a] || !x->step_end[a - 1] ||
                !jb->step_end[s] || !jb->step_end[s - 1])
                continue;
            double ad = (double)x->step_end[a] - (double)x->step_end[a - 1];
            double fd = (double)jb->step_end[s] - (double)jb->step_end[s - 1];
            if (ad > 0)
                v[k++] = fabs(fd - ad) / ad;
        }
        if (k >= 2) {
            double med = fl_median(v, k);
            if (med < best)
                best = med, x->shift = sh, x->steps_compared = k;
        }
    }
    if (isfinite(best))
        x->dur_err_median = best;
    free(v);
    return 0;
}

int fl_xcheck_run(struct fl_xcheck *x, const struct argus_flows *f)
{
    int tp = x->tp, dp = x->dp, nr = x->ranks;
    size_t *cnt = calloc(f->njob + 1, sizeof *cnt);
    size_t *bad = calloc((size_t)nr, sizeof *bad), *all = calloc((size_t)nr, sizeof *all);
    int rc = -ENOMEM;

    if (!cnt || !bad || !all)
        goto out;
    x->ran = 1;
    if (f->topo)
        for (size_t i = 0; i < f->topo->n; i++)
            x->ranks_mapped += f->topo->e[i].rank >= 0 && f->topo->e[i].rank < nr;
    for (size_t e = 0; e < f->nep; e++) {
        int r = rank_of(f, (uint32_t)e);
        if (r >= 0 && r < nr && f->ep[e].job >= 0)
            cnt[f->ep[e].job]++, x->ranks_seen++;
    }
    for (size_t j = 0; j < f->njob; j++)
        if (cnt[j] && (x->job < 0 || cnt[j] > cnt[x->job]))
            x->job = (int)j;
    rc = 0;
    if (x->job < 0)
        goto out;
    const struct fl_job *jb = &f->job[x->job];
    x->layout_agrees = jb->dp == x->dp && jb->pp == x->pp && jb->tp == x->tp;
    for (size_t q = 0; q < f->npair; q++) {
        const struct fl_pair *p = &f->pair[q];
        if (p->job != x->job || (p->kind != FL_DP && p->kind != FL_PP))
            continue;
        const struct argus_topo_entry *ta = f->ep[p->a].topo, *tb = f->ep[p->b].topo;
        if (ta && tb && ta->gpu >= 0 && tb->gpu >= 0 && ta->gpu != tb->gpu)
            x->rail_crossings++;
        int ra = rank_of(f, p->a), rb = rank_of(f, p->b);
        if (ra < 0 || rb < 0 || ra >= nr || rb >= nr)
            continue;
        int ta_ = ra % tp, tb_ = rb % tp, da = (ra / tp) % dp, db = (rb / tp) % dp;
        int sa = ra / (tp * dp), sb = rb / (tp * dp);
        int ok = p->kind == FL_DP ? sa == sb && ta_ == tb_ && da != db
                                  : da == db && ta_ == tb_ && abs(sa - sb) == 1;
        x->pairs_checked++;
        all[ra]++, all[rb]++;
        if (!ok)
            x->pairs_disagree++, bad[ra]++, bad[rb]++;
    }
    for (int r = 0; r < nr; r++)
        if (bad[r] >= 2 && 2 * bad[r] > all[r] && x->nsuspect < FL_XCHECK_SUSPECTS)
            x->suspect[x->nsuspect++] = r;
    for (size_t k = 0; k < jb->nep; k++) {
        const struct fl_ep *ep = &f->ep[jb->ep[k]];
        int r = rank_of(f, jb->ep[k]);
        if (r < 0 || r >= nr || ep->stage < 0)
            continue;
        x->stages_checked++;
        x->stage_disagree += ep->stage != r / (tp * dp);
    }
    x->flows_median_ms = jb->step_med_ns / 1e6;
    x->median_rel_diff = x->argus_median_ms > 0
                             ? fabs(x->flows_median_ms - x->argus_median_ms) / x->argus_median_ms
                             : NAN;
    rc = compare_steps(x, jb);
out:
    free(cnt);
    free(bad);
    free(all);
    return rc;
}
