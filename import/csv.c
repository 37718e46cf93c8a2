/* csv.c — steps.csv (docs/REPORT_SCHEMA.md: step,rank,start_ns,end_ns,forward_ms,
 * backward_ms,optimizer_ms,comm_ms,host_gap_ms) into step summaries, one per row, for
 * per-rank step times from any source. Rows carry no kernels, so only L1/L2 evidence
 * (step and phase times) comes out of them: compute time is the busy time outside
 * communication, split over phases by their wall times.
 *
 * Columns are found by the header's names, in any order (unknown columns are ignored).
 * step and rank are required, and either start_ns and end_ns or duration_ms (with both,
 * start_ns/end_ns win). With duration_ms only, each rank's steps are laid end to end from
 * 0 in file order (start = the end of that rank's previous row). The five *_ms phase
 * columns are optional: an absent column is 0 for every row (all five absent: a file of
 * step times only, whose rows carry step times and nothing else, the steps level of
 * docs/ALGORITHMS.md "Data levels"); an empty cell is unknown, and a row with any unknown
 * phase carries no phase split at all (no compute either) and is counted. A
 * row that does not parse, holds a value outside the sane bounds (import/import.h) or a
 * rank at or past the bound is refused and counted, and reading goes on with the next line;
 * so is a last line without an end of line (the file was cut). A later row of a
 * (step, rank) already seen is counted (it replaces the earlier one, as in the store).
 * Plain or gzip; lines up to CSV_LINE_MAX bytes (longer ones are refused rows). Memory:
 * one line buffer, a set of (step, rank) keys, 16 bytes a row, and (duration_ms only) one
 * clock per rank id. Never prints.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "import/import.h"
#include "import/steplog.h"

#define CSV_LINE_MAX 65536
#define CSV_COLS 10

enum { C_STEP, C_RANK, C_START, C_END, C_FWD, C_BWD, C_OPT, C_COMM, C_HOST, C_DUR };
static const char *const col_name[CSV_COLS] = {
    "step", "rank", "start_ns", "end_ns", "forward_ms", "backward_ms", "optimizer_ms",
    "comm_ms", "host_gap_ms", "duration_ms",
};

/* Per-rank clocks for duration_ms-only files: where each rank's next step starts. */
struct clocks {
    uint64_t *at;
    size_t n;
};

/* ---- (step, rank) set: open addressing, key + 1 so 0 is empty ---------------------- */

struct seen {
    uint64_t *step;   /* step + 1; 0: empty slot */
    uint32_t *rank;
    unsigned long *line;
    size_t cap, n;    /* cap: a power of two */
};

static size_t seen_hash(uint64_t step, uint32_t rank, size_t mask)
{
    uint64_t h = (step * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)rank * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h ^ (h >> 29)) & mask;
}

static int seen_grow(struct seen *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct seen g = {calloc(cap, sizeof *g.step), calloc(cap, sizeof *g.rank),
                     calloc(cap, sizeof *g.line), cap, t->n};
    if (!g.step || !g.rank || !g.line) {
        free(g.step), free(g.rank), free(g.line);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->step[i])
            continue;
        size_t j = seen_hash(t->step[i] - 1, t->rank[i], cap - 1);
        while (g.step[j])
            j = (j + 1) & (cap - 1);
        g.step[j] = t->step[i], g.rank[j] = t->rank[i], g.line[j] = t->line[i];
    }
    free(t->step), free(t->rank), free(t->line);
    *t = g;
    return 0;
}

/* The line of an earlier row of (step, rank), else 0 after adding this one. -ENOMEM. */
static long seen_add(struct seen *t, uint64_t step, uint32_t rank, unsigned long line)
{
    if ((t->n + 1) * 2 > t->cap && seen_grow(t) != 0)
        return -ENOMEM;
    size_t j = seen_hash(step, rank, t->cap - 1);
    while (t->step[j]) {
        if (t->step[j] == step + 1 && t->rank[j] == rank)
            return (long)t->line[j];
        j = (j + 1) & (t->cap - 1);
    }
    t->step[j] = step + 1, t->rank[j] = rank, t->line[j] = line;
    t->n++;
    return 0;
}

/* ---- fields ------------------------------------------------------------------------ */

/* Split line (its end of line already cut) at commas in place: at most max fields, spaces
 * around each trimmed. Returns the count, or max + 1 when there are more. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;

    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (n == max)
            return max + 1;
        f[n++] = p;
        if (!c)
            return n;
        p = c + 1;
    }
}

/* A plain decimal integer of at most bound. 0 or -1. */
static int parse_u64(const char *s, uint64_t bound, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (bound - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* Milliseconds in [0, ARGUS_CSV_MAX_MS]. 0 or -1. */
static int parse_ms(const char *s, double *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    double d = strtod(s, &end);
    if (*end || !isfinite(d) || d < 0 || d > ARGUS_CSV_MAX_MS)
        return -1;
    *out = d;
    return 0;
}

/* The header: which field holds each column (-1: absent). 0, or -1 with why. */
static int parse_header(char *line, int *pos, int *nfields, char *why, size_t whylen)
{
    char *f[CSV_COLS * 8];
    const int max = (int)(sizeof f / sizeof f[0]);
    int n;

    if ((unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
        (unsigned char)line[2] == 0xbf)
        line += 3; /* UTF-8 byte order mark */
    n = split(line, f, max);
    if (n > max) {
        snprintf(why, whylen, "header of more than %d columns", max);
        return -1;
    }
    for (int c = 0; c < CSV_COLS; c++)
        pos[c] = -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < CSV_COLS; c++)
            if (strcmp(f[i], col_name[c]) == 0) {
                if (pos[c] >= 0) {
                    snprintf(why, whylen, "column \"%s\" twice in the header", col_name[c]);
                    return -1;
                }
                pos[c] = i;
            }
    for (int c = 0; c <= C_END; c++)
        if (pos[c] < 0 && (c <= C_RANK || pos[C_DUR] < 0 || pos[C_START + C_END - c] >= 0)) {
            snprintf(why, whylen, "no column \"%s\" in the header (step, rank, and start_ns "
                     "and end_ns or duration_ms are required)", col_name[c]);
            return -1;
        }
    *nfields = n;
    return 0;
}

/* One row into s. 0, or -1 with why. */
static int parse_row(char *line, const int *pos, int nfields, uint32_t max_ranks,
                     struct clocks *ck, struct argus_step_summary *s, int *unknown, char *why,
                     size_t whylen)
{
    char *f[CSV_COLS * 8];
    uint64_t u[4] = {0};
    double d[5] = {0}, dur = 0;
    const int by_dur = pos[C_START] < 0;
    int n = split(line, f, nfields);

    if (n != nfields) {
        snprintf(why, whylen, "%s fields, the header has %d", n > nfields ? "more" : "fewer",
                 nfields);
        return -1;
    }
    const uint64_t bound[4] = {ARGUS_CSV_MAX_NS, UINT32_MAX, ARGUS_CSV_MAX_NS,
                               ARGUS_CSV_MAX_NS};
    for (int c = 0; c < 4; c++)
        if ((!by_dur || c <= C_RANK) && parse_u64(f[pos[c]], bound[c], &u[c]) != 0) {
            snprintf(why, whylen, "%s \"%.40s\" is not an integer in [0, %llu]", col_name[c],
                     f[pos[c]], (unsigned long long)bound[c]);
            return -1;
        }
    *unknown = 0;
    int any_phase = 0;
    for (int c = C_FWD; c <= C_HOST; c++)
        any_phase |= pos[c] >= 0;
    if (!any_phase) /* step times only: nothing known of phases or compute */
        for (int c = 0; c < 5; c++)
            d[c] = NAN;
    for (int c = C_FWD; c <= C_HOST; c++)
        if (pos[c] >= 0 && !*f[pos[c]]) {
            d[c - C_FWD] = NAN; /* empty: unknown */
            *unknown = 1;
        } else if (pos[c] >= 0 && parse_ms(f[pos[c]], &d[c - C_FWD]) != 0) {
            snprintf(why, whylen, "%s \"%.40s\" is not a number of milliseconds in [0, %.0f]",
                     col_name[c], f[pos[c]], ARGUS_CSV_MAX_MS);
            return -1;
        }
    if (by_dur && (parse_ms(f[pos[C_DUR]], &dur) != 0 ||
                   dur * 1e6 > (double)ARGUS_CSV_MAX_STEP_NS)) {
        snprintf(why, whylen, "duration_ms \"%.40s\" is not a number of milliseconds in "
                 "[0, %.0f]", f[pos[C_DUR]], (double)ARGUS_CSV_MAX_STEP_NS / 1e6);
        return -1;
    }
    if (u[C_RANK] >= max_ranks) {
        snprintf(why, whylen, "rank %llu is at or past the bound of %lu ranks (--max-ranks)",
                 (unsigned long long)u[C_RANK], (unsigned long)max_ranks);
        return -1;
    }
    if (by_dur) { /* laid end to end per rank, from 0 */
        if (u[C_RANK] >= ck->n) {
            size_t cap = ck->n ? ck->n : 64;
            while (cap <= u[C_RANK])
                cap *= 2;
            uint64_t *at = realloc(ck->at, cap * sizeof *at);
            if (!at) {
                snprintf(why, whylen, "out of memory");
                return -1;
            }
            memset(at + ck->n, 0, (cap - ck->n) * sizeof *at);
            ck->at = at, ck->n = cap;
        }
        u[C_START] = ck->at[u[C_RANK]];
        u[C_END] = u[C_START] + (uint64_t)(dur * 1e6 + 0.5);
        if (u[C_END] > ARGUS_CSV_MAX_NS) {
            snprintf(why, whylen, "the durations of rank %llu add up past %llu ns",
                     (unsigned long long)u[C_RANK], (unsigned long long)ARGUS_CSV_MAX_NS);
            return -1;
        }
        ck->at[u[C_RANK]] = u[C_END];
    }
    if (u[C_END] < u[C_START] || u[C_END] - u[C_START] > ARGUS_CSV_MAX_STEP_NS) {
        snprintf(why, whylen, "end_ns - start_ns is %s (a step lasts 0 to %llu ns)",
                 u[C_END] < u[C_START] ? "negative" : "too long",
                 (unsigned long long)ARGUS_CSV_MAX_STEP_NS);
        return -1;
    }
    memset(s, 0, sizeof *s);
    s->step = u[C_STEP];
    s->rank = (uint32_t)u[C_RANK];
    s->start_ns = u[C_START];
    s->end_ns = u[C_END];
    argus_steps_fold(s, d);
    s->flags = ARGUS_SF_PARTIAL;
    return 0;
}

int argus_steps_csv_sniff(const char *path)
{
    char *line = malloc(CSV_LINE_MAX);
    gzFile gz = line ? gzopen(path, "rb") : NULL;
    int pos[CSV_COLS], nf, yes = 0;
    char why[200];

    if (gz && gzgets(gz, line, CSV_LINE_MAX)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') {
            line[--len] = '\0';
            yes = parse_header(line, pos, &nf, why, sizeof why) == 0;
        }
    }
    if (gz)
        gzclose(gz);
    free(line);
    return yes;
}

static void refuse(struct argus_csv_info *info, unsigned long lineno, const char *why)
{
    if (info->refused++ == 0) {
        info->refused_line = lineno;
        snprintf(info->refused_why, sizeof info->refused_why, "%s", why);
    }
}

int argus_steps_csv_import(const char *path, const struct argus_csv_opts *o,
                           const struct argus_import_sink *sink, struct argus_csv_info *info,
                           char *errbuf, size_t errlen)
{
    const uint32_t max_ranks = o && o->max_ranks ? o->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    char *line = malloc(CSV_LINE_MAX);
    struct argus_step_summary *s = calloc(1, sizeof *s);
    struct seen seen = {0};
    struct clocks ck = {0};
    int unknown = 0;
    gzFile gz = gzopen(path, "rb");
    unsigned long lineno = 0;
    int rc = 0, pos[CSV_COLS], nfields = 0, have_header = 0;
    char why[200];

    memset(info, 0, sizeof *info);
    if (!gz || !s || !line) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, gz ? "out of memory"
                                                                 : strerror(errno));
        rc = gz ? -ENOMEM : -errno;
        goto out;
    }
    while (gzgets(gz, line, CSV_LINE_MAX)) {
        size_t len = strlen(line);
        lineno++;
        if (len == 0 || line[len - 1] != '\n') {
            if (gzeof(gz)) { /* the last line, cut short */
                info->cut_line = lineno;
                refuse(info, lineno, "no end of line: the file was cut short here");
                break;
            }
            int c; /* longer than the buffer: refuse it, skip to its end */
            while ((c = gzgetc(gz)) != -1 && c != '\n')
                ;
            snprintf(why, sizeof why, "line longer than %d bytes", CSV_LINE_MAX - 1);
            refuse(info, lineno, why);
            continue;
        }
        line[--len] = '\0';
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (!have_header) {
            if (parse_header(line, pos, &nfields, why, sizeof why) != 0) {
                snprintf(errbuf, errlen, "%s:%lu: %s", path, lineno, why);
                rc = -EPROTO;
                goto out;
            }
            have_header = 1;
            continue;
        }
        if (strspn(line, " \t") == len)
            continue; /* blank line */
        if (parse_row(line, pos, nfields, max_ranks, &ck, s, &unknown, why, sizeof why) != 0) {
            refuse(info, lineno, why);
            continue;
        }
        long earlier = seen_add(&seen, s->step, s->rank, lineno);
        if (earlier < 0) {
            snprintf(errbuf, errlen, "%s:%lu: out of memory", path, lineno);
            rc = -ENOMEM;
            goto out;
        }
        if (earlier > 0 && info->dups++ == 0) {
            info->dup_line = lineno;
            info->dup_of = (unsigned long)earlier;
        }
        if (unknown && info->phase_unknown++ == 0)
            info->phase_unknown_line = lineno;
        if (s->rank + 1 > info->max_rank)
            info->max_rank = s->rank + 1;
        info->rows++;
        if (sink && sink->summary)
            sink->summary(sink->ctx, s);
    }
    info->lines = lineno;
    if (!gzeof(gz)) {
        snprintf(errbuf, errlen, "%s:%lu: read error (damaged gzip?)", path, lineno);
        rc = -EIO;
    } else if (!have_header) {
        snprintf(errbuf, errlen, "%s: no header line", path);
        rc = -ENODATA;
    } else if (info->rows == 0) {
        if (info->refused)
            snprintf(errbuf, errlen, "%s:%lu: expected step,rank,start_ns,end_ns or "
                     "duration_ms and millisecond figures: %s (no row could be used)", path,
                     info->refused_line, info->refused_why);
        else
            snprintf(errbuf, errlen, "%s: no rows", path);
        rc = info->refused ? -EPROTO : -ENODATA;
    }
out:
    if (gz)
        gzclose(gz);
    free(seen.step), free(seen.rank), free(seen.line);
    free(ck.at);
    free(s);
    free(line);
    return rc;
}
