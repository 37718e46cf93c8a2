/* attrib.c — what the forecast attributes the step time to (forecast/internal.h:
 * fc_crit_sync, fc_contrib; docs/ALGORITHMS.md, "Forecast (PRISM)"): the sync tax, the
 * ranks most often on the critical path, the phase contributors to the P90 step. Reads
 * the per-held-step tables fc_build made and the critical rank's summary; no I/O.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

void fc_crit_sync(const struct fc *f, size_t i0, struct argus_forecast *o)
{
    uint32_t cnt[ARGUS_FC_MAX_CRIT] = {0}, who[ARGUS_FC_MAX_CRIT] = {0};
    double smax = 0, smean = 0;
    size_t used = 0;
    /* the critical ranks of the steps, sorted: runs of one rank are its hits (O(steps
     * log steps), nothing of size P) */
    double *crit = malloc((f->nh > i0 ? f->nh - i0 : 1) * sizeof *crit);

    for (size_t i = i0; i < f->nh; i++) {
        const int r = f->argw[i];
        if (r < 0)
            continue;
        smax += f->mxw[i];
        smean += f->sumw[i] / (double)f->cntw[i];
        if (crit)
            crit[used] = (double)r;
        used++;
    }
    o->sync_tax = smean > 0 ? smax / smean : 1;
    if (crit)
        fc_sort(crit, used);
    for (size_t a = 0; crit && a < used;) {
        size_t e = a;
        while (e < used && crit[e] == crit[a])
            e++;
        const uint32_t hits = (uint32_t)(e - a), r = (uint32_t)crit[a];
        a = e;
        size_t j = ARGUS_FC_MAX_CRIT;
        while (j > 0 && hits > cnt[j - 1])
            j--;
        if (j >= ARGUS_FC_MAX_CRIT)
            continue;
        memmove(cnt + j + 1, cnt + j, (ARGUS_FC_MAX_CRIT - 1 - j) * sizeof *cnt);
        memmove(who + j + 1, who + j, (ARGUS_FC_MAX_CRIT - 1 - j) * sizeof *who);
        cnt[j] = hits;
        who[j] = r;
    }
    for (size_t j = 0; j < ARGUS_FC_MAX_CRIT && cnt[j]; j++) {
        o->crit[o->n_crit].rank = who[j];
        o->crit[o->n_crit++].share = (double)cnt[j] / (double)used;
    }
    free(crit);
}

static const char *const fc_comp_name[] = {"forward", "backward", "optimizer", "comm",
                                           "host_gap", "other", "unattributed"};
#define FC_NCOMP 7

void fc_contrib(const struct fc *f, size_t i0, double p90_ms, struct argus_forecast *o)
{
    double slow[FC_NCOMP] = {0}, rest[FC_NCOMP] = {0}, wall_slow = 0;
    size_t ns = 0, nr = 0;

    for (size_t i = i0; i < f->nh; i++) {
        const int r = f->argw[i];
        const struct argus_step_summary *s;
        if (r < 0 || f->ev[f->h0 + i] ||
            !(s = argus_jobstore_get(f->js, (uint32_t)r, f->step[f->h0 + i])))
            continue;
        const double wall = s->end_ns > s->start_ns ? (double)(s->end_ns - s->start_ns) : 0;
        double v[FC_NCOMP], sum = 0;
        v[0] = (double)s->phase_wall_ns[ARGUS_PH_FORWARD];
        v[1] = (double)s->phase_wall_ns[ARGUS_PH_BACKWARD];
        v[2] = (double)s->phase_wall_ns[ARGUS_PH_OPTIMIZER];
        v[3] = (double)s->phase_wall_ns[ARGUS_PH_COMM];
        v[4] = s->host_gap_ns ? (double)s->host_gap_ns : (double)s->phase_wall_ns[ARGUS_PH_HOST];
        v[5] = (double)s->phase_wall_ns[ARGUS_PH_OTHER];
        for (int k = 0; k < 6; k++)
            sum += v[k];
        v[6] = wall > sum ? wall - sum : 0;
        const int is_slow = f->t[f->h0 + i] >= p90_ms;
        for (int k = 0; k < FC_NCOMP; k++) {
            if (is_slow)
                slow[k] += v[k] / 1e6;
            else
                rest[k] += v[k] / 1e6;
        }
        if (is_slow) {
            ns++;
            wall_slow += wall / 1e6;
        }
        else
            nr++;
    }
    if (ns)
        wall_slow /= (double)ns;
    for (int k = 0; ns && k < FC_NCOMP; k++) {
        const double ms = slow[k] / (double)ns;
        if (ms <= 0)
            continue;
        struct argus_fc_contrib *c = &o->contrib[o->n_contrib++];
        snprintf(c->name, sizeof c->name, "%s", fc_comp_name[k]);
        c->ms = ms;
        c->excess_ms = ms - (nr ? rest[k] / (double)nr : 0);
        c->share = wall_slow > 0 ? ms / wall_slow : 0;
    }
}