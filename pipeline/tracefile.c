/* tracefile.c — one collected L4 plan becomes one Chrome-trace/Perfetto file under
 * the output directory (pipeline.h: argus_pipeline_write_trace): the targets' events merged
 * by report/trace_merge.h, the process labels, and otherData naming the anomaly, its steps,
 * the ranks and the clock refinement. No MPI: reduce/tracereq.c collects the replies.
 */
#include "pipeline/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/outdir.h"
#include "report/trace_merge.h"

/* ", "key": [ranks]": which 0 the sources, 1 the peers, 2 those that did not answer. */
static void write_ranks(FILE *f, const char *key, const struct argus_trace_plan *p,
                        const struct argus_pipeline_trace_reply *reply, int which)
{
    int n = 0;
    fprintf(f, ", \"%s\": [", key);
    for (uint32_t k = 0; k < p->ntargets; k++) {
        int src = k < p->nsources;
        int pick = which == 0 ? src : which == 1 ? !src : !reply[k].got;
        if (pick)
            fprintf(f, "%s%u", n++ ? ", " : "", p->targets[k]);
    }
    fputc(']', f);
}

static int failed(struct argus_trace_plan *p, const char *why)
{
    p->state = ARGUS_TRACE_FAILED;
    snprintf(p->why, sizeof p->why, "%s", why);
    return 0;
}

int argus_pipeline_write_trace(struct argus_traceplan *tp, size_t i, const char *dir,
                               const struct argus_pipeline_trace_reply *reply)
{
    struct argus_trace_plan *p = &tp->v[i];
    uint64_t first = UINT64_MAX, last = 0, events = 0;
    uint32_t answered = 0;
    char rel[128], path[4400], why[sizeof p->why];

    for (uint32_t k = 0; k < p->ntargets; k++) {
        if (!reply[k].got)
            continue;
        answered++;
        events += reply[k].events;
        if (reply[k].events) {
            if (reply[k].first_step < first)
                first = reply[k].first_step;
            if (reply[k].last_step > last)
                last = reply[k].last_step;
        }
    }
    const char *kind = argus_pipeline_kind_name(p->kind);
    if (events == 0) {
        if (answered)
            snprintf(why, sizeof why, "the rings no longer held steps %llu-%llu "
                     "(ARGUS_RING_EVENTS too small for the window)",
                     (unsigned long long)p->from, (unsigned long long)p->to);
        else
            snprintf(why, sizeof why, "no target rank answered");
        return failed(p, why);
    }
    snprintf(rel, sizeof rel, "traces/%s-steps-%llu-%llu.json", kind,
             (unsigned long long)first, (unsigned long long)last);
    for (size_t j = 0; j < tp->n; j++)
        if (j != i && strcmp(tp->v[j].path, rel) == 0) {
            snprintf(rel, sizeof rel, "traces/%s-%zu-steps-%llu-%llu.json", kind, i + 1,
                     (unsigned long long)first, (unsigned long long)last);
            break;
        }
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *doc = NULL;
    size_t doclen = 0;
    FILE *f = open_memstream(&doc, &doclen);
    if (!f) {
        snprintf(why, sizeof why, "out of memory for %s", rel);
        return failed(p, why);
    }
    struct argus_trace_part parts[ARGUS_TRACE_TARGETS];
    uint32_t kof[ARGUS_TRACE_TARGETS], np = 0;
    for (uint32_t k = 0; k < p->ntargets; k++)
        if (reply[k].got) { /* sources first: the first answering source is the reference */
            parts[np] = (struct argus_trace_part){.rank = p->targets[k], .json = reply[k].json,
                                                  .len = reply[k].len};
            kof[np++] = k;
        }
    fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f);
    int wrote = 0;
    if (argus_trace_merge(f, parts, np, &wrote) != 0) {
        fclose(f);
        free(doc);
        return failed(p, "the replies could not be merged (out of memory)");
    }
    for (uint32_t m = 0; m < np; m++) { /* sources on top, labelled; peers below */
        uint32_t k = kof[m];
        fprintf(f, "%s{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, "
                "\"tid\": 0, \"args\": {\"sort_index\": %u}},\n{\"name\": \"process_labels\", "
                "\"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"args\": {\"labels\": \"%s\"}}",
                wrote ? ",\n" : "", p->targets[k], k, p->targets[k],
                k < p->nsources ? "source" : "healthy peer");
        wrote = 1;
    }
    fprintf(f, "],\n\"otherData\": {\"argus_anomaly\": \"%s\", \"steps\": [%llu, %llu], "
            "\"clock\": \"us since the job started, on rank 0's clock: each rank's ping-pong "
            "offset (GPU time by its clock triple), then refined on the ends of collectives "
            "it shares with the reference rank\"",
            kind, (unsigned long long)first, (unsigned long long)last);
    write_ranks(f, "sources", p, reply, 0);
    write_ranks(f, "peers", p, reply, 1);
    write_ranks(f, "missing", p, reply, 2);
    fprintf(f, ", \"clock_reference_rank\": %u, \"clock_refinement\": [", np ? parts[0].rank : 0);
    for (uint32_t m = 1; m < np; m++)
        fprintf(f, "%s{\"rank\": %u, \"shift_us\": %.3f, \"collectives\": %u, "
                "\"mad_us\": %.3f}", m > 1 ? ", " : "", parts[m].rank,
                (double)parts[m].refine_ns / 1000.0, parts[m].matched, parts[m].mad_ns / 1000.0);
    fputs("]}}\n", f);
    char err[512] = "out of memory for a trace"; /* unless the file write says more */
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || !doc ||
        argus_file_write_atomic(path, doc, doclen, err, sizeof err) != 0) {
        free(doc);
        argus_log_once(ARGUS_LOG_WARN, "trace-write", "%s; L4 traces are not kept",
                       bad || !doc ? "out of memory for a trace" : err);
        snprintf(why, sizeof why, "cannot write %s", rel);
        return failed(p, why);
    }
    free(doc);
    snprintf(p->path, sizeof p->path, "%s", rel);
    p->state = ARGUS_TRACE_WRITTEN;
    return 1;
}
