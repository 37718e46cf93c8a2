/* nccl.c — NCCL's in-band view in the reports (docs/REPORT_SCHEMA.md, "nccl"): the `nccl`
 * object of an anomaly and the whole-run `nccl` summary of report.json, and their lines
 * in report.md. Writes what analysis/ncclview.c found (struct argus_nccl_view) and
 * decides nothing; a result without NCCL data writes nothing at all.
 */
#include "report/report_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#define CK(x) ARGUS_JSON_CK(x)
#define CKR(x) ARGUS_JSON_TRY(x)

static int gen_int(yajl_gen g, const char *key, int64_t v)
{
    CKR(argus_json_key(g, key));
    if (v < 0)
        CK(yajl_gen_null(g));
    else
        CKR(argus_json_uint(g, (uint64_t)v));
    return 0;
}

static int gen_num(yajl_gen g, const char *key, double v, int digits)
{
    CKR(argus_json_key(g, key));
    return argus_json_num(g, v, digits);
}

int an_gen_nccl_view(yajl_gen g, const struct argus_nccl_view *v)
{
    char hash[24];
    snprintf(hash, sizeof hash, "0x%016" PRIx64, v->comm_hash);
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "comm_hash"));
    CKR(argus_json_str(g, hash));
    CKR(argus_json_key(g, "steps"));
    CK(yajl_gen_array_open(g));
    CKR(argus_json_uint(g, v->step_first));
    CKR(argus_json_uint(g, v->step_last));
    CK(yajl_gen_array_close(g));
    CKR(gen_int(g, "members", v->n_members_total));
    CKR(gen_int(g, "steps_aligned", v->steps_aligned));
    CKR(gen_int(g, "last_arriver", v->last_arriver));
    CKR(gen_int(g, "times_last", v->times_last));
    CKR(gen_num(g, "median_lateness_ms", v->median_lateness_ms, 3));
    CKR(argus_json_key(g, "late"));
    CK(yajl_gen_bool(g, v->late));
    CKR(argus_json_key(g, "slow_pair"));
    if (v->pair_rank >= 0) {
        CK(yajl_gen_map_open(g));
        CKR(gen_int(g, "rank", v->pair_rank));
        CKR(gen_int(g, "peer", v->pair_peer));
        CKR(gen_num(g, "transfer_ms", v->pair_xfer_ms, 3));
        CKR(gen_num(g, "ratio", v->pair_ratio, 3));
        CKR(gen_num(g, "score", v->pair_z, 2));
        CK(yajl_gen_map_close(g));
    } else {
        CK(yajl_gen_null(g));
    }
    CKR(argus_json_key(g, "ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < v->n_members && i < ARGUS_NCCL_VIEW_RANKS; i++) {
        const struct argus_nccl_member *m = &v->members[i];
        CK(yajl_gen_map_open(g));
        CKR(gen_int(g, "rank", m->rank));
        CKR(gen_int(g, "steps", m->steps));
        CKR(gen_int(g, "times_last", m->times_last));
        CKR(gen_num(g, "peer_wait_ms", m->peer_wait_ms, 3));
        CKR(gen_num(g, "transfer_ms", m->xfer_ms, 3));
        CKR(gen_num(g, "gpu_wait_ms", m->gpu_wait_ms, 3));
        CKR(gen_int(g, "peer", m->peer));
        CKR(gen_num(g, "peer_transfer_ms", m->peer_xfer_ms, 3));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

int an_gen_nccl_run(yajl_gen g, const struct argus_result *r)
{
    if (!r->n_nccl_comms)
        return 0;
    CKR(argus_json_key(g, "nccl"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "communicators"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < r->n_nccl_comms; i++)
        CKR(an_gen_nccl_view(g, &r->nccl_comms[i]));
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* One line for view v, "" when it names nobody. */
static void md_view(FILE *f, const char *lead, const struct argus_nccl_view *v)
{
    fprintf(f, "%sNCCL communicator 0x%016" PRIx64 " (%u ranks, %u steps aligned): ", lead,
            v->comm_hash, v->n_members_total, v->steps_aligned);
    if (v->last_arriver >= 0)
        fprintf(f, "rank %d arrived last in %u step%s, median %.3f ms after the others%s",
                v->last_arriver, v->times_last, v->times_last == 1 ? "" : "s",
                v->median_lateness_ms, v->late ? " (**late arriver**)" : "");
    else
        fputs("no collective aligned", f);
    if (v->pair_rank >= 0)
        fprintf(f, "; **slow link** rank %d → rank %d, %.3f ms/step transfer, %.2fx the other "
                   "pairs'", v->pair_rank, v->pair_peer, v->pair_xfer_ms, v->pair_ratio);
    fputs(".\n", f);
}

void an_md_nccl_anomaly(FILE *f, const struct argus_result *r, size_t idx)
{
    if (r->nccl && idx < r->n_nccl && r->nccl[idx].comm_hash)
        md_view(f, "- ", &r->nccl[idx]);
}

void an_md_nccl_run(FILE *f, const struct argus_result *r)
{
    if (!r->n_nccl_comms)
        return;
    fputs("\n## NCCL in-band view\n\nPer communicator over the run (NCCL's profiler plugin): "
          "who arrived last at its collectives, and each rank's median per step of waiting "
          "for peers, transfer and waiting for its own kernel.\n\n", f);
    for (uint32_t i = 0; i < r->n_nccl_comms; i++) {
        const struct argus_nccl_view *v = &r->nccl_comms[i];
        md_view(f, "", v);
        fputs("\n| rank | last | peer wait ms | transfer ms | GPU wait ms | busiest peer | "
              "its transfer ms |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", f);
        for (uint32_t j = 0; j < v->n_members && j < ARGUS_NCCL_VIEW_RANKS; j++) {
            const struct argus_nccl_member *m = &v->members[j];
            fprintf(f, "| %u | %u | %.3f | %.3f | %.3f | ", m->rank, m->times_last,
                    m->peer_wait_ms, m->xfer_ms, m->gpu_wait_ms);
            if (m->peer >= 0)
                fprintf(f, "%d | %.3f |\n", m->peer, m->peer_xfer_ms);
            else
                fputs("– | – |\n", f);
        }
        fputc('\n', f);
    }
}
