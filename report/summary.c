/* summary.c — the few lines printed at the end of a run (where the report is, or exactly
 * what was and was not written and why; one line per anomaly, naming only trace files
 * that are there) and anomalies.jsonl, appended relative to the output directory's fd:
 * each anomaly appended once across repeated online analyses. An anomaly is the same as
 * one already logged when its kind and its sources (ranks, or group members) match and
 * its steps overlap or touch the logged ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"
#include "analysis/analysis.h"
#include "report/report_int.h"
#include "common/grow.h"
#include "common/outdir.h"

#define LINE_MAX_BYTES 8192

static void print_kernel(FILE *out, const struct argus_jobstore *js, uint64_t h)
{
    char kb[40];
    const char *n = an_kernel_name(js, h, kb, sizeof kb);
    if (strlen(n) > 48)
        fprintf(out, "%.45s...", n);
    else
        fputs(n, out);
}

/* The files of mask, named in a list ("report.json, the pictures"). */
static void list_files(FILE *out, unsigned mask)
{
    static const char *const names[] = {"report.json", "the SVG pictures", "report.md",
                                        "metrics.prom", "steps.csv", "report.html"};
    int first = 1;

    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (mask & (1u << i)) {
            fprintf(out, "%s%s", first ? "" : ", ", names[i]);
            first = 0;
        }
}

/* Whether the directory oc->dirfd was removed (its fd then names an unlinked directory). */
static int dir_gone(const struct argus_report_outcome *oc)
{
    struct stat st;
    return oc && oc->dirfd >= 0 && fstat(oc->dirfd, &st) == 0 && st.st_nlink == 0;
}

/* Whether a trace named by an anomaly is there (a regular file under the directory). */
static int trace_there(const struct argus_report_outcome *oc, const char *rel)
{
    struct stat st;
    if (!oc || oc->dirfd < 0)
        return 1;
    return fstatat(oc->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The first lines: what was written where, and what was not. Returns 1 when the directory
 * is gone (nothing in it can be named). */
static int print_written(FILE *out, const char *dir, const struct argus_report_outcome *oc)
{
    if (dir_gone(oc)) {
        fprintf(out, "argus: the output directory %s was removed during the run: no report "
                "and no trace file written there is left\n", dir);
        return 1;
    }
    if (!oc || (!oc->err && (oc->written & ARGUS_REPORT_F_ALL) == ARGUS_REPORT_F_ALL)) {
        fprintf(out, "argus: report written to %s/report.json\n", dir);
    } else {
        unsigned missing = ARGUS_REPORT_F_ALL & ~oc->written;
        fprintf(out, "argus: the report was not written to %s: %s\n", dir,
                oc->err ? oc->err : "not attempted");
        if (oc->written) {
            fputs("argus: written: ", out);
            list_files(out, oc->written);
            fputs("; not written: ", out);
        } else {
            fputs("argus: not written: ", out);
        }
        list_files(out, missing);
        if (oc->earlier)
            fputs(" (what is there of them is an earlier, provisional report)", out);
        fputc('\n', out);
    }
    if (oc && oc->alog_err)
        fprintf(out, "argus: %s/anomalies.jsonl misses anomalies: %s\n", dir, oc->alog_err);
    return 0;
}

void argus_report_print_summary(FILE *out, const char *dir, const struct argus_jobstore *js,
                                const struct argus_result *r,
                                const struct argus_report_outcome *oc)
{
    if (!out || !r)
        return;
    int gone = print_written(out, dir ? dir : ".", oc);
    if (r->n_anomalies == 0) {
        fprintf(out, "argus: no anomalies in %llu steps of %u ranks\n",
                (unsigned long long)r->steps.count,
                js ? argus_jobstore_nranks(js) : r->n_ranks);
        return;
    }
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        char src[300];
        an_describe_sources(a, src, sizeof src);
        fprintf(out, "argus: anomaly %d: %s %s%s (steps %llu-%llu", a->id,
                argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                a->n_ranks ? "on " : "across ", src, (unsigned long long)a->step_first,
                (unsigned long long)a->step_last);
        if (a->phase >= 0)
            fprintf(out, ", %s", argus_phase_name((enum argus_phase)a->phase));
        fprintf(out, ", %.2fx)", a->slowdown);
        for (uint32_t k = 0; k < a->n_kernels && k < 2 && js; k++) {
            fputs(k ? ", " : ": kernels ", out);
            print_kernel(out, js, a->kernels[k]);
        }
        if (a->trace[0] && !gone) {
            if (trace_there(oc, a->trace))
                fprintf(out, "; trace %s", a->trace);
            else
                fprintf(out, "; its trace %s is not there (removed since it was written)",
                        a->trace);
        }
        fputc('\n', out);
    }
}

void argus_anomaly_log_init(struct argus_anomaly_log *l)
{
    memset(l, 0, sizeof *l);
}

void argus_anomaly_log_free(struct argus_anomaly_log *l)
{
    free(l->keys);
    memset(l, 0, sizeof *l);
}

uint64_t argus_anomaly_sources_hash(const struct argus_anomaly *a)
{
    const uint32_t *v = a->n_group ? a->group : a->ranks;
    uint32_t n = a->n_group ? a->n_group : a->n_ranks;
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)a->group_type;
    for (uint32_t i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) {
            h ^= (v[i] >> (8 * b)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    return h;
}

/* Key text: "kind:hash:first:last". */
static void make_key(char *k, int kind, uint64_t h, uint64_t first, uint64_t last)
{
    snprintf(k, 96, "%d:%016llx:%llu:%llu", kind, (unsigned long long)h,
             (unsigned long long)first, (unsigned long long)last);
}

/* Index of a logged anomaly that is the same as a, or -1. */
static long find_same(const struct argus_anomaly_log *l, const struct argus_anomaly *a,
                      uint64_t h)
{
    for (size_t i = 0; i < l->n; i++) {
        int kind;
        unsigned long long kh, f, t;
        if (sscanf(l->keys[i], "%d:%llx:%llu:%llu", &kind, &kh, &f, &t) != 4)
            continue;
        if (kind != a->kind || kh != h)
            continue;
        if (a->step_first <= t + 1 && f <= a->step_last + 1)
            return (long)i;
    }
    return -1;
}

int argus_anomaly_log_append(struct argus_anomaly_log *l, const struct argus_outdir *od,
                             const struct argus_jobstore *js, const struct argus_result *r,
                             char *errbuf, size_t errlen)
{
    char dummy[8];
    char *line = NULL;
    int rc = 0;

    if (!errbuf || !errlen) {
        errbuf = dummy;
        errlen = sizeof dummy;
    }
    errbuf[0] = '\0';
    if (!l || !od || od->fd < 0 || !js || !r)
        return -EINVAL;
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        const uint64_t h = argus_anomaly_sources_hash(a);
        long at = find_same(l, a, h);
        if (at >= 0) {
            /* the same anomaly, grown: widen its logged span */
            unsigned long long f, t, kh;
            int kind;
            if (sscanf(l->keys[at], "%d:%llx:%llu:%llu", &kind, &kh, &f, &t) == 4)
                make_key(l->keys[at], a->kind, h, a->step_first < f ? a->step_first : f,
                         a->step_last > t ? a->step_last : t);
            continue;
        }
        if (!line && !(line = malloc(LINE_MAX_BYTES))) {
            rc = -ENOMEM;
            break;
        }
        long n = argus_report_anomaly_json(js, a, line, LINE_MAX_BYTES);
        if (n < 0) {
            snprintf(errbuf, errlen, "%s/anomalies.jsonl: anomaly %d does not fit in one line",
                     od->path, a->id);
            rc = (int)n;
            break;
        }
        if (argus_grow(&l->keys, &l->cap, l->n + 1, sizeof *l->keys, 16) != 0) {
            rc = -ENOMEM;
            break;
        }
        if ((rc = argus_file_append_at(od->fd, od->path, "anomalies.jsonl", line, errbuf,
                                       errlen)))
            break;
        make_key(l->keys[l->n++], a->kind, h, a->step_first, a->step_last);
    }
    free(line);
    return rc;
}
