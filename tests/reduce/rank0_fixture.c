/* rank0_fixture.c — a rank 0 without MPI for tests/reduce (rank0_fixture.h). */
#include "tests/reduce/rank0_fixture.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/config.h"
#include "common/wire.h"
#include "tests/common/tmpdir.h"

#define SLURP_MAX (1 << 20)

int r0fx_open(struct r0fx *fx, const char *tag, uint32_t nranks, int traces)
{
    struct argus_config cfg;
    char err[256];

    if (!argus_test_tmpdir(fx->base, sizeof fx->base, tag))
        return -1;
    argus_config_defaults(&cfg);
    snprintf(cfg.outdir, sizeof cfg.outdir, "%s", fx->base);
    cfg.spool = 0;
    if (traces > 0) {
        cfg.traces = traces; /* room for plans (none are made: l4_on stays 0) */
        cfg.ring_events = 1 << 16;
    }
    if (argus_rank0_open(&fx->r0, &cfg, nranks, "t", "0", err, sizeof err) != 0)
        return -1;
    return 0;
}

int r0fx_ingest(struct argus_rank0 *r0, uint32_t nranks, uint64_t first, uint64_t n,
                uint32_t short_rank, uint64_t stop)
{
    struct argus_step_summary *s = calloc(1, sizeof *s);
    size_t cap = (size_t)nranks * n * argus_summary_encoded_max(0), len = 0;
    uint8_t *buf = malloc(cap);
    int rc = -1;

    if (!s || !buf)
        goto out;
    for (uint32_t r = 0; r < nranks; r++) {
        for (uint64_t st = first; st < first + n && (r != short_rank || st < stop); st++) {
            s->rank = r;
            s->step = st;
            s->start_ns = 1000000000ull * (st + 1);
            s->end_ns = s->start_ns + 900000000ull + 1000ull * r;
            s->compute_ns = 700000000ull;
            long k = argus_summary_encode(s, buf + len, cap - len);
            if (k <= 0)
                goto out;
            len += (size_t)k;
        }
    }
    argus_rank0_ingest(r0, buf, len);
    rc = 0;
out:
    free(buf);
    free(s);
    return rc;
}

int r0fx_teardown(void **state)
{
    struct r0fx *fx = *state;
    char cmd[300];

    argus_rank0_close(&fx->r0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fx->base);
    free(fx);
    return 0;
}

char *r0fx_slurp(const struct argus_rank0 *r0, const char *name)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", r0->pl.dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *b = calloc(1, SLURP_MAX);
    if (b)
        b[fread(b, 1, SLURP_MAX - 1, f)] = '\0';
    fclose(f);
    return b;
}

yajl_val r0fx_json(const struct argus_rank0 *r0, const char *name)
{
    char err[256];
    char *text = r0fx_slurp(r0, name);
    if (!text) {
        fprintf(stderr, "%s: could not be read\n", name);
        return NULL;
    }
    yajl_val v = yajl_tree_parse(text, err, sizeof err);
    if (!v)
        fprintf(stderr, "%s: %s\n%s\n", name, err, text);
    free(text);
    return v;
}
