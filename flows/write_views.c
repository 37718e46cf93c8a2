/* write_views.c — the parts of flows.json and flows.md (flows/write.c) for the switch
 * ports (flows/ports.h) and the cross-check with an in-band Argus run (flows/xcheck.h).
 * Reads the analysed context only.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/jsongen.h"
#include "flows/flows_int.h"
#include "flows/xcheck.h"

#define CK(x) ARGUS_JSON_CK(x)
#define TRY(x) ARGUS_JSON_TRY(x)

static int cmp_port(const void *x, const void *y, void *ctx)
{
    const struct argus_ports *ps = ctx;
    const struct fl_port *a = &ps->p[*(const size_t *)x], *b = &ps->p[*(const size_t *)y];
    if (a->degraded != b->degraded)
        return b->degraded - a->degraded;
    return a->z < b->z ? -1 : a->z > b->z;
}

/* the ports, degraded first, then by z; NULL on no memory (or none) */
size_t *fl_ports_ranked(const struct argus_ports *ps)
{
    size_t *ix = malloc((ps->n + 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t i = 0; i < ps->n; i++)
        ix[i] = i;
    qsort_r(ix, ps->n, sizeof *ix, cmp_port, (void *)ps);
    return ix;
}

int fl_gen_ports(yajl_gen g, const struct argus_ports *ps, const size_t *rank)
{
    TRY(argus_json_key(g, "ports"));
    CK(yajl_gen_map_open(g));
    TRY(fl_gen_u(g, "lines", ps->lines));
    TRY(fl_gen_u(g, "samples", ps->ns));
    TRY(fl_gen_u(g, "samples_dropped", ps->dropped));
    TRY(fl_gen_u(g, "counter_resets", ps->resets));
    TRY(argus_json_key(g, "list"));
    CK(yajl_gen_array_open(g));
    for (size_t r = 0; r < ps->n; r++) {
        const struct fl_port *p = &ps->p[rank[r]];
        char name[2 * ARGUS_TOPO_NAME + 2];
        snprintf(name, sizeof name, "%s:%s", p->device, p->port);
        CK(yajl_gen_map_open(g));
        TRY(argus_json_key(g, "port"));
        TRY(argus_json_str(g, name));
        TRY(argus_json_key(g, "tier"));
        TRY(argus_json_str(g, p->tier ? "other" : "nic"));
        TRY(fl_gen_u(g, "samples", p->samples));
        TRY(fl_gen_u(g, "intervals_busy", p->busy));
        TRY(argus_json_key(g, "mean_in_Bps"));
        TRY(argus_json_num(g, p->mean_in, 0));
        TRY(argus_json_key(g, "mean_out_Bps"));
        TRY(argus_json_num(g, p->mean_out, 0));
        TRY(argus_json_key(g, "busy_fraction"));
        TRY(argus_json_num(g, p->busy_frac, 4));
        TRY(argus_json_key(g, "peak_Bps"));
        TRY(argus_json_num(g, p->peak, 0));
        TRY(argus_json_key(g, "z"));
        TRY(argus_json_num(g, p->z, 2));
        TRY(argus_json_key(g, "drop"));
        TRY(argus_json_num(g, p->drop, 4));
        TRY(fl_gen_u(g, "windows", p->win_used));
        TRY(fl_gen_u(g, "windows_flagged", p->win_flagged));
        TRY(argus_json_key(g, "degraded"));
        CK(yajl_gen_bool(g, p->degraded));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

int fl_gen_xcheck(yajl_gen g, const struct fl_xcheck *x)
{
    TRY(argus_json_key(g, "argus_crosscheck"));
    CK(yajl_gen_map_open(g));
    TRY(argus_json_key(g, "report"));
    TRY(argus_json_str(g, x->path));
    TRY(argus_json_key(g, "layout_argus"));
    CK(yajl_gen_map_open(g));
    TRY(fl_gen_u(g, "dp", (uint64_t)x->dp));
    TRY(fl_gen_u(g, "pp", (uint64_t)x->pp));
    TRY(fl_gen_u(g, "tp", (uint64_t)x->tp));
    CK(yajl_gen_map_close(g));
    TRY(fl_gen_u(g, "ranks", (uint64_t)x->ranks));
    TRY(fl_gen_u(g, "ranks_mapped", x->ranks_mapped));
    TRY(fl_gen_u(g, "ranks_seen", x->ranks_seen));
    TRY(argus_json_key(g, "job"));
    if (x->job >= 0)
        TRY(argus_json_uint(g, (uint64_t)x->job));
    else
        CK(yajl_gen_null(g));
    TRY(argus_json_key(g, "layout_agrees"));
    CK(yajl_gen_bool(g, x->layout_agrees));
    TRY(fl_gen_u(g, "pairs_checked", x->pairs_checked));
    TRY(fl_gen_u(g, "pairs_disagree", x->pairs_disagree));
    TRY(argus_json_key(g, "suspect_ranks"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < x->nsuspect; i++)
        TRY(argus_json_uint(g, (uint64_t)x->suspect[i]));
    CK(yajl_gen_array_close(g));
    TRY(fl_gen_u(g, "rail_crossings", x->rail_crossings));
    TRY(fl_gen_u(g, "stages_checked", x->stages_checked));
    TRY(fl_gen_u(g, "stage_disagree", x->stage_disagree));
    TRY(argus_json_key(g, "step_median_ms_argus"));
    TRY(argus_json_num(g, x->argus_median_ms, 3));
    TRY(argus_json_key(g, "step_median_ms_flows"));
    TRY(argus_json_num(g, x->job >= 0 ? x->flows_median_ms : NAN, 3));
    TRY(argus_json_key(g, "step_median_rel_diff"));
    TRY(argus_json_num(g, x->job >= 0 ? x->median_rel_diff : NAN, 5));
    TRY(fl_gen_u(g, "steps_compared", x->steps_compared));
    TRY(argus_json_key(g, "step_shift"));
    TRY(argus_json_num(g, (double)x->shift, 0));
    TRY(argus_json_key(g, "step_duration_err_median"));
    TRY(argus_json_num(g, x->dur_err_median, 5));
    TRY(argus_json_key(g, "step_end_offset_ms"));
    TRY(argus_json_num(g, x->end_offset_ms, 3));
    CK(yajl_gen_map_close(g));
    return 0;
}

void fl_md_xcheck(struct fl_sbuf *b, const struct argus_flows *f, const struct fl_xcheck *x)
{
    fl_sb_printf(b, "\n## Cross-check with Argus (%s)\n\n", x->path);
    if (x->job < 0) {
        fl_sb_printf(b, "No flows job holds a NIC of the rank map (%zu of %d ranks mapped in the "
                     "topology's rank column): nothing to compare.\n", x->ranks_mapped, x->ranks);
        return;
    }
    const struct fl_job *jb = &f->job[x->job];
    fl_sb_printf(b, "- ranks: %d in Argus's run, %zu mapped to NICs, %zu of them seen in flows "
                 "job %d.\n", x->ranks, x->ranks_mapped, x->ranks_seen, x->job);
    fl_sb_printf(b, "- layout: flows DP %d x PP %d x TP %d, Argus DP %d x PP %d x TP %d: %s.\n",
                 jb->dp, jb->pp, jb->tp, x->dp, x->pp, x->tp, x->layout_agrees ? "agree"
                                                                            : "**disagree**");
    fl_sb_printf(b, "- groups: %zu of %zu pairs between mapped NICs disagree with Argus's DP "
                 "groups and pipelines.", x->pairs_disagree, x->pairs_checked);
    if (x->nsuspect) {
        fl_sb_printf(b, " Most pairs of rank");
        for (size_t i = 0; i < x->nsuspect; i++) {
            const struct argus_topo_entry *te = NULL;
            for (size_t k = 0; f->topo && k < f->topo->n && !te; k++)
                if (f->topo->e[k].rank == x->suspect[i])
                    te = &f->topo->e[k];
            fl_sb_printf(b, "%s %d (%s)", i ? "," : "", x->suspect[i], te ? te->host : "?");
        }
        fl_sb_printf(b, " disagree: **the rank to host map is likely wrong** for them (their "
                     "NICs carry other ranks' traffic).");
    }
    fl_sb_printf(b, "\n- rails: %zu DP or PP pairs join NICs of different GPU index%s.\n",
                 x->rail_crossings, x->rail_crossings ? " (**traffic crossing rails**)" : "");
    fl_sb_printf(b, "- stages: %zu of %zu mapped endpoints in another stage than their rank's.\n",
                 x->stage_disagree, x->stages_checked);
    fl_sb_printf(b, "- median step: flows %.3f ms, Argus %.3f ms (%.2f %% apart)",
                 x->flows_median_ms, x->argus_median_ms, 100 * x->median_rel_diff);
    if (isfinite(x->dur_err_median))
        fl_sb_printf(b, "; per step (%zu steps, flows step s = Argus step s%+d of steps.csv) the "
                     "durations differ by %.2f %% (median)", x->steps_compared, x->shift,
                     100 * x->dur_err_median);
    if (isfinite(x->end_offset_ms))
        fl_sb_printf(b, "; on one clock the flows' step ends (the last DP burst) lie %.3f ms from "
                     "Argus's", x->end_offset_ms);
    fl_sb_printf(b, ".\n");
}

void fl_md_ports(struct fl_sbuf *b, const struct argus_ports *ps, const size_t *prank)
{
    fl_sb_printf(b, "\n## Switch ports\n\n%" PRIu64 " counter lines, %zu samples (%" PRIu64
                 " dropped: table full), %" PRIu64 " intervals skipped (a counter went down).\n\n"
                 "| port | tier | mean in / out (GB/s) | busy | peak (GB/s) | z | drop | windows "
                 "flagged | degraded |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
                 ps->lines, ps->ns, ps->dropped, ps->resets);
    for (size_t r = 0; r < ps->n && r < 20; r++) {
        const struct fl_port *p = &ps->p[prank[r]];
        fl_sb_printf(b, "| %s:%s | %s | %.3f / %.3f | %.1f %% | %.3f | %.1f | %.1f %% | %u / %u | "
                     "%s |\n", p->device, p->port, p->tier ? "other" : "nic", p->mean_in / 1e9,
                     p->mean_out / 1e9, 100 * p->busy_frac, p->peak / 1e9, p->z, 100 * p->drop,
                     p->win_flagged, p->win_used, p->degraded ? "yes" : "no");
    }
}
