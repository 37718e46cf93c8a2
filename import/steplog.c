/* steplog.c — trainer logs into step summaries through one table of line formats
 * (import/steplog.h). Memory: one line buffer and the compiled table. Never prints.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "import/steplog.h"
#include "import/import_int.h"

#define SL_LINE_MAX 65536
#define SL_NGROUPS 10
/* Text read without a line of any format before the file is declared none of them. */
#define SL_SNIFF_MAX ((uint64_t)64 << 20)

/* step: capture of the step; SL_ORD: the ordinal (1, 2, ...) of the line among the format's
 * timed lines; SL_SETS: the line only announces the step (its capture is `time`) for the
 * next timed line; SL_PENDING: the step the last announcing line gave. */
enum { SL_ORD = 0, SL_SETS = -1, SL_PENDING = -2 };
/* unit: ns per unit of the time capture; SL_HMS: [[H:]M]:S */
#define SL_HMS 0.0

struct slfmt {
    const char *name;
    const char *re;
    int step, time;
    double unit;
    int cumulative;
    int ph[5]; /* capture of forward, backward, optimizer, comm, host (same unit); 0 none */
};

#define NUM "([0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?)"
static const struct slfmt fmts[] = {
    {"megatron", "iteration +([0-9]+) */ *[0-9]+ +\\|.*elapsed time per iteration \\(ms\\): *"
     NUM, 1, 2, 1e6, 0, {0}},
    {"mlperf", ":::MLLOG .*\"key\": *\"tracked_stats\".*\"train_step_timing\": *" NUM,
     SL_ORD, 1, 1e9, 0, {0}},
    {"modded-nanogpt", "^step:([0-9]+)/[0-9]+ .*train_time:([0-9]+)ms", 1, 2, 1e6, 1, {0}},
    {"deepspeed-chat", "^epoch: *[0-9]+\\|step: *([0-9]+)\\|", SL_SETS, 1, 0, 0, {0}},
    {"deepspeed-chat", "^\\|E2E latency=" NUM "s .*\\|Generate time=" NUM "s .*"
     "\\|Training time=" NUM "s .*\\|Others=" NUM, SL_PENDING, 1, 1e9, 0, {4, 7, 0, 0, 10}},
    {"tqdm", "([0-9]+)/[0-9]+ \\[(([0-9]+:)?[0-9]+:[0-9]+)<", 1, 2, SL_HMS, 1, {0}},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

int32_t argus_steplog_rank(const char *path, const char *pattern, int *how)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (pattern) {
        regex_t re;
        regmatch_t m[2];
        if (regcomp(&re, pattern, REG_EXTENDED) != 0)
            return -2;
        int ok = regexec(&re, base, 2, m, 0) == 0 && m[1].rm_so >= 0;
        regfree(&re);
        if (ok) {
            long v = 0;
            int good = m[1].rm_eo > m[1].rm_so;
            for (regoff_t i = m[1].rm_so; good && i < m[1].rm_eo; i++) {
                good = base[i] >= '0' && base[i] <= '9' && v <= INT32_MAX / 10 - 1;
                v = v * 10 + (base[i] - '0');
            }
            if (good) {
                *how = 1;
                return (int32_t)v;
            }
        }
    }
    *how = 0;
    return kt_rank_from_name(path);
}

void argus_steps_fold(struct argus_step_summary *s, const double ms[5])
{
    uint64_t wall = s->end_ns - s->start_ns;
    for (int p = 0; p < 5; p++)
        if (isnan(ms[p])) { /* unknown: no split at all (the summary has no "unknown") */
            for (int q = 0; q < ARGUS_PH_COUNT; q++)
                s->phase_wall_ns[q] = s->phase_compute_ns[q] = 0;
            /* the step time is all there is: nothing known of its compute or GPU time
             * (docs/ALGORITHMS.md, "Data levels": the steps level) */
            s->collective_ns = s->host_gap_ns = 0;
            s->busy_ns = s->compute_ns = 0;
            return;
        }
    for (int p = 0; p < 5; p++)
        s->phase_wall_ns[p] = (uint64_t)(ms[p] * 1e6);
    s->collective_ns = s->phase_wall_ns[ARGUS_PH_COMM];
    s->host_gap_ns = s->phase_wall_ns[ARGUS_PH_HOST] < wall ? s->phase_wall_ns[ARGUS_PH_HOST]
                                                            : wall;
    s->busy_ns = wall - s->host_gap_ns;
    s->compute_ns = s->busy_ns > s->collective_ns ? s->busy_ns - s->collective_ns : 0;
    uint64_t ph = s->phase_wall_ns[0] + s->phase_wall_ns[1] + s->phase_wall_ns[2];
    for (int p = 0; p < 3 && ph; p++)
        s->phase_compute_ns[p] =
            (uint64_t)((double)s->compute_ns * (double)s->phase_wall_ns[p] / (double)ph);
}

/* A capture as a number of units (SL_HMS: seconds from [[H:]M:]S). 0 or -1. */
static int cap_num(const char *line, const regmatch_t *m, double unit, double *out)
{
    char buf[64];
    size_t n = (size_t)(m->rm_eo - m->rm_so);
    if (m->rm_so < 0 || n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, line + m->rm_so, n);
    buf[n] = '\0';
    if (unit == SL_HMS) {
        double v = 0;
        for (char *p = buf, *e; *p; p = *e ? e + 1 : e) {
            long part = strtol(p, &e, 10);
            if (e == p || (*e && *e != ':') || part < 0)
                return -1;
            v = v * 60 + (double)part;
        }
        *out = v * 1e9;
        return 0;
    }
    char *e;
    double v = strtod(buf, &e);
    if (*e || !isfinite(v) || v < 0)
        return -1;
    *out = v * unit;
    return 0;
}

static int cap_u64(const char *line, const regmatch_t *m, uint64_t *out)
{
    uint64_t v = 0;
    if (m->rm_so < 0 || m->rm_eo == m->rm_so)
        return -1;
    for (regoff_t i = m->rm_so; i < m->rm_eo; i++) {
        if (line[i] < '0' || line[i] > '9' || v > (ARGUS_CSV_MAX_NS - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(line[i] - '0');
    }
    *out = v;
    return 0;
}

struct slstate {
    const struct slfmt *fam;     /* the file's format (its first row in the table) */
    uint64_t ord, pending, prev_step;
    int have_pending, have_prev, have_base;
    double base_ns;              /* running total at prev_step (cumulative formats) */
    double off_ns;               /* added to the total: the end of the steps before a
                                    restart, so a rank's times never go back */
    uint64_t clock;              /* per-step formats: where the next step starts */
};

static void sl_refuse(struct argus_steplog_info *in, unsigned long line, const char *why)
{
    if (in->refused++ == 0) {
        in->refused_line = line;
        snprintf(in->refused_why, sizeof in->refused_why, "%s", why);
    }
}

static void sl_ignore(struct argus_steplog_info *in, unsigned long line)
{
    if (in->ignored++ == 0)
        in->ignored_line = line;
}

/* One line: match it against the table (only the file's format once it is fixed). */
static void sl_line(const char *line, unsigned long lineno, regex_t *re, struct slstate *st,
                    struct argus_step_summary *s, const struct argus_import_sink *sink,
                    struct argus_steplog_info *in)
{
    regmatch_t m[SL_NGROUPS + 10];
    size_t k;
    for (k = 0; k < NFMTS; k++) {
        if (st->fam && strcmp(st->fam->name, fmts[k].name) != 0)
            continue;
        if (regexec(&re[k], line, SL_NGROUPS + 10, m, 0) == 0)
            break;
    }
    if (k == NFMTS)
        return;
    const struct slfmt *f = &fmts[k];
    if (!st->fam) {
        for (size_t j = 0; j < NFMTS; j++)
            if (strcmp(fmts[j].name, f->name) == 0) {
                st->fam = &fmts[j];
                break;
            }
        in->format = f->name;
    }
    uint64_t step;
    if (f->step == SL_SETS) {
        if (cap_u64(line, &m[f->time], &st->pending) == 0)
            st->have_pending = 1;
        return;
    }
    if (f->step == SL_PENDING) {
        if (!st->have_pending)
            return sl_ignore(in, lineno);
        step = st->pending;
        st->have_pending = 0;
    } else if (f->step == SL_ORD) {
        step = ++st->ord;
    } else if (cap_u64(line, &m[f->step], &step) != 0) {
        return sl_refuse(in, lineno, "the step is not an integer in bounds");
    }
    double t, ph[5];
    if (cap_num(line, &m[f->time], f->unit, &t) != 0 || t > (double)ARGUS_CSV_MAX_NS)
        return sl_refuse(in, lineno, "the time is not a number in bounds");
    int split = 0;
    for (int p = 0; p < 5; p++)
        split |= f->ph[p];
    for (int p = 0; p < 5; p++) { /* a format's split names some phases: the rest are 0 */
        ph[p] = split ? 0.0 : NAN;
        if (f->ph[p] && cap_num(line, &m[f->ph[p]], f->unit, &ph[p]) == 0)
            ph[p] /= 1e6; /* ns -> ms */
        else if (f->ph[p])
            ph[p] = NAN;
    }
    if (st->have_prev && step <= st->prev_step)
        return sl_ignore(in, lineno);
    uint64_t start, end;
    if (f->cumulative) {
        if (!st->have_base) {
            st->have_base = 1, st->base_ns = t, st->prev_step = step, st->have_prev = 1;
            return; /* the origin: no step of its own */
        }
        if (t < st->base_ns) { /* the total went down: it restarted from 0 */
            st->base_ns = 0;
            st->off_ns = (double)st->clock;
        }
        double per = (t - st->base_ns) / (double)(step - st->prev_step);
        end = (uint64_t)(st->off_ns + t);
        start = end - (uint64_t)per;
        st->base_ns = t;
    } else {
        start = st->clock;
        end = start + (uint64_t)t;
    }
    if (end - start > ARGUS_CSV_MAX_STEP_NS || st->off_ns + t > (double)ARGUS_CSV_MAX_NS ||
        end > ARGUS_CSV_MAX_NS)
        return sl_refuse(in, lineno, "a step longer than a day");
    st->clock = end;
    st->prev_step = step, st->have_prev = 1;
    memset(s, 0, sizeof *s);
    s->step = step;
    s->rank = (uint32_t)in->rank;
    s->start_ns = start;
    s->end_ns = end;
    argus_steps_fold(s, ph);
    s->flags = ARGUS_SF_PARTIAL;
    if (in->steps++ == 0)
        in->first_step = step;
    in->last_step = step;
    if (sink && sink->summary)
        sink->summary(sink->ctx, s);
}

int argus_steplog_bracket_text(const char *path)
{
    char buf[512];
    gzFile gz = gzopen(path, "rb");
    int n = gz ? gzread(gz, buf, sizeof buf - 1) : -1, i = 0;
    if (gz)
        gzclose(gz);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    if (n >= 3 && (unsigned char)buf[0] == 0xef && (unsigned char)buf[1] == 0xbb &&
        (unsigned char)buf[2] == 0xbf)
        i = 3;
    i += (int)strspn(buf + i, " \t\r\n");
    if (buf[i] != '[')
        return 0;
    i++;
    i += (int)strspn(buf + i, " \t\r\n");
    return i < n && buf[i] != '{' && buf[i] != ']';
}

int argus_steplog_import(const char *path, const struct argus_steplog_opts *o,
                         const struct argus_import_sink *sink, struct argus_steplog_info *info,
                         char *errbuf, size_t errlen)
{
    const uint32_t max_ranks = o && o->max_ranks ? o->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    regex_t re[NFMTS];
    size_t nre = 0;
    char *line = malloc(SL_LINE_MAX);
    struct argus_step_summary *s = calloc(1, sizeof *s);
    struct slstate st = {0};
    gzFile gz = NULL;
    int rc = 0;

    memset(info, 0, sizeof *info);
    int how = 2;
    int32_t rank = argus_steplog_rank(path, o ? o->rank_from : NULL, &how);
    if (rank == -2) {
        snprintf(errbuf, errlen, "--rank-from: not a valid regular expression");
        rc = -EINVAL;
        goto out;
    }
    if (rank < 0)
        rank = o ? o->default_rank : 0, how = 2;
    info->rank = rank, info->rank_how = how;
    if (!line || !s) {
        snprintf(errbuf, errlen, "%s: out of memory", path);
        rc = -ENOMEM;
        goto out;
    }
    for (; nre < NFMTS; nre++)
        if (regcomp(&re[nre], fmts[nre].re, REG_EXTENDED) != 0) {
            snprintf(errbuf, errlen, "%s: internal: format %s does not compile", path,
                     fmts[nre].name);
            rc = -EINVAL;
            goto out;
        }
    gz = gzopen(path, "rb");
    if (!gz) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
        rc = -errno;
        goto out;
    }
    uint64_t bytes = 0;
    while (gzgets(gz, line, SL_LINE_MAX)) {
        size_t len = strlen(line);
        bytes += len;
        if (!info->format && bytes > SL_SNIFF_MAX)
            break; /* no format in the first 64 MiB: not a trainer log */
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!gzeof(gz)) { /* longer than the buffer: no format has such lines */
            int c;
            while ((c = gzgetc(gz)) != -1 && c != '\n')
                ;
        }
        /* \r ends a line too (tqdm redraws its bar with \r) */
        for (char *p = line, *e; p; p = e) {
            e = strchr(p, '\r');
            if (e)
                *e++ = '\0';
            info->lines++;
            sl_line(p, info->lines, re, &st, s, (uint32_t)rank < max_ranks ? sink : NULL,
                    info);
        }
    }
    if (!info->format) {
        snprintf(errbuf, errlen, "%s: no line of a known trainer log format (megatron, mlperf, "
                 "modded-nanogpt, deepspeed-chat, tqdm) and not a trace, spool or steps.csv",
                 path);
        rc = -ENOMSG;
    } else if (!gzeof(gz)) {
        snprintf(errbuf, errlen, "%s:%lu: read error (damaged gzip?)", path, info->lines);
        rc = info->steps ? 1 : -EIO;
    } else if ((uint32_t)rank >= max_ranks) {
        snprintf(errbuf, errlen, "%s: rank %ld is at or past the bound of %lu ranks "
                 "(--max-ranks)", path, (long)rank, (unsigned long)max_ranks);
        rc = -ERANGE;
    } else if (info->steps == 0) {
        snprintf(errbuf, errlen, "%s: %s log with no usable step", path, info->format);
        rc = -ENODATA;
    }
out:
    if (gz)
        gzclose(gz);
    for (size_t i = 0; i < nre; i++)
        regfree(&re[i]);
    free(s);
    free(line);
    return rc;
}
