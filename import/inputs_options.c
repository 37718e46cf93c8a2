/* inputs_options.c — the input side's command-line options, shared by argus-analyze and
 * argus-predict (import/analyze_run.h: argus_analyze_input_option): -m/--max-mem (a size
 * with K, M or G), -R/--max-ranks, -r/--rank-from (a POSIX ERE with a capture group).
 * Must not exit: a bad value is one line on stderr and -1, the caller exits 2.
 */
#include "config.h"

#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "import/analyze_run.h"

/* Whether pattern is a POSIX extended regular expression with a capture group
 * (import/steplog.h: the first capture is the rank). */
static int rank_from_ok(const char *pattern)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED) != 0)
        return 0;
    const int ok = re.re_nsub >= 1;
    regfree(&re);
    return ok;
}

/* A size in bytes, or N with K, M or G. 0 or -1. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int sh = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
           : *end == 'G' || *end == 'g' ? 30 : 0;
    if (sh)
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> sh))
        return -1;
    *out = (size_t)v << sh;
    return 0;
}

int argus_analyze_input_option(struct run *r, int opt, const char *arg)
{
    switch (opt) {
    case 'm':
        if (parse_size(arg, &r->kopts.max_mem) != 0 || r->kopts.max_mem < (32 << 10)) {
            fprintf(stderr, PROG ": --max-mem %s: not a size of at least 32K (bytes, or N "
                    "with K, M or G)\n", arg);
            return -1;
        }
        return 1;
    case 'R': { /* import/import.h: rank ids at or past it cost their file or row */
        char *e;
        unsigned long v = strtoul(arg, &e, 10);
        if (*arg < '0' || *arg > '9' || *e || v == 0 || v > ARGUS_MAX_RANKS_LIMIT) {
            fprintf(stderr, PROG ": --max-ranks %s: not an integer in [1, %u]\n", arg,
                    ARGUS_MAX_RANKS_LIMIT);
            return -1;
        }
        r->max_ranks = (uint32_t)v;
        return 1;
    }
    case 'r':
        if (!rank_from_ok(arg)) {
            fprintf(stderr, PROG ": --rank-from %s: not a POSIX extended regular "
                    "expression with a capture group\n", arg);
            return -1;
        }
        r->rank_from = arg;
        return 1;
    default:
        return 0;
    }
}
