/* condense.c — a reduction-tree node's condensing step (condense.h): fold, select
 * exemplars, write what goes up. */
#include "common/condense.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

#define SUMMARY_ROOM(n) (argus_summary_encoded_max(n))

int argus_condense_init(struct argus_condense *c, uint32_t world)
{
    memset(c, 0, sizeof *c);
    c->world = world ? world : 1;
    argus_agg_init(&c->agg);
    argus_agg_init(&c->tmp);
    c->s = malloc(sizeof *c->s);
    return c->s ? 0 : -ENOMEM;
}

void argus_condense_free(struct argus_condense *c)
{
    argus_agg_free(&c->agg);
    argus_agg_free(&c->tmp);
    free(c->s);
    free(c->sel);
    free(c->sent);
    free(c->cand);
    free(c->names);
    free(c->enc);
    free(c->out);
    memset(c, 0, sizeof *c);
}

/* ---- open-addressed sets of u64 keys (stored + 1; 0 is empty) --------------------------- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int set_has(const uint64_t *t, size_t cap, uint64_t key)
{
    if (!cap)
        return 0;
    key++;
    for (size_t i = mix64(key) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (t[i] == key)
            return 1;
        if (!t[i])
            return 0;
    }
}

/* 1 added, 0 already there, -ENOMEM. */
static int set_add(uint64_t **t, size_t *cap, size_t *n, uint64_t key)
{
    if (set_has(*t, *cap, key))
        return 0;
    if (2 * (*n + 1) > *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        uint64_t *nt = calloc(nc, sizeof *nt);
        if (!nt)
            return -ENOMEM;
        for (size_t i = 0; i < *cap; i++) {
            if (!(*t)[i])
                continue;
            size_t j = mix64((*t)[i]) & (nc - 1);
            while (nt[j])
                j = (j + 1) & (nc - 1);
            nt[j] = (*t)[i];
        }
        free(*t);
        *t = nt;
        *cap = nc;
    }
    key++;
    size_t i = mix64(key) & (*cap - 1);
    while ((*t)[i])
        i = (i + 1) & (*cap - 1);
    (*t)[i] = key;
    (*n)++;
    return 1;
}

static void set_clear(uint64_t *t, size_t cap, size_t *n)
{
    if (t)
        memset(t, 0, cap * sizeof *t);
    *n = 0;
}

static uint64_t cell_key(uint32_t rank, uint64_t step)
{
    return (uint64_t)rank << 32 | (uint32_t)step;
}

/* ---- output buffer ---------------------------------------------------------------- */

static uint8_t *out_room(struct argus_condense *c, size_t n)
{
    if (c->outlen + n > c->outcap) {
        size_t cap = c->outcap ? c->outcap : 65536;
        while (cap < c->outlen + n)
            cap *= 2;
        uint8_t *p = realloc(c->out, cap);
        if (!p)
            return NULL;
        c->out = p;
        c->outcap = cap;
    }
    return c->out + c->outlen;
}

static int out_copy(struct argus_condense *c, const uint8_t *rec, size_t n)
{
    uint8_t *p = out_room(c, n);
    if (!p)
        return -ENOMEM;
    memcpy(p, rec, n);
    c->outlen += n;
    return 0;
}

static int out_summary(struct argus_condense *c, const struct argus_step_summary *s)
{
    const size_t room = SUMMARY_ROOM(s->n_kmodes);
    uint8_t *p = out_room(c, room);
    if (!p)
        return -ENOMEM;
    long n = argus_summary_encode(s, p, room);
    if (n < 0)
        return (int)n;
    c->outlen += (size_t)n;
    return 0;
}

/* ---- the rules ---------------------------------------------------------------------- */

int argus_condense_reference(const struct argus_step_summary *s, uint32_t world)
{
    const struct argus_coords *k = &s->coords;
    if (k->tp_size && k->pp_size && k->dp_size)
        return k->dp < ARGUS_CONDENSE_REF_DP;
    if (world <= ARGUS_CONDENSE_REF_MAX)
        return 1;
    return mix64(s->rank) % world < ARGUS_CONDENSE_REF_MAX;
}

void argus_condense_thin(const struct argus_agg_row *r, struct argus_step_summary *out)
{
    memset(out, 0, offsetof(struct argus_step_summary, kmodes));
    out->step = r->step;
    out->rank = r->rank;
    out->flags = (r->flags & ~(uint32_t)ARGUS_SF_EXEMPLAR) | ARGUS_SF_THIN;
    out->start_ns = r->start_ns;
    out->end_ns = r->start_ns + 1000ull * r->us[0];
    out->phase_wall_ns[ARGUS_PH_FORWARD] = 1000ull * r->us[1];
    out->phase_wall_ns[ARGUS_PH_BACKWARD] = 1000ull * r->us[2];
    out->phase_wall_ns[ARGUS_PH_OPTIMIZER] = 1000ull * r->us[3];
    out->phase_wall_ns[ARGUS_PH_COMM] = 1000ull * r->us[4];
    out->phase_wall_ns[ARGUS_PH_HOST] = 1000ull * r->us[5];
    out->host_gap_ns = 1000ull * r->us[5];
    out->compute_ns = 1000ull * r->us[6];
    out->collective_ns = 1000ull * r->us[7];
    out->busy_ns = r->us[0] > r->us[5] ? 1000ull * (r->us[0] - r->us[5]) : 0;
}

/* The extreme cells of the merged aggregate into c->sel. */
static int select_extremes(struct argus_condense *c)
{
    set_clear(c->sel, c->selcap, &c->seln);
    for (size_t i = 0; i < c->agg.nkm; i++) {
        const struct argus_agg_kmode *k = &c->agg.km[i];
        for (int t = 0; t < k->ntop && t < ARGUS_CONDENSE_EXTREMES; t++)
            if (set_add(&c->sel, &c->selcap, &c->seln, cell_key(k->top[t].rank,
                                                                 k->top[t].step)) < 0)
                return -ENOMEM;
        for (int t = 0; t < k->nbot && t < ARGUS_CONDENSE_EXTREMES; t++)
            if (set_add(&c->sel, &c->selcap, &c->seln, cell_key(k->bot[t].rank,
                                                                 k->bot[t].step)) < 0)
                return -ENOMEM;
    }
    return 0;
}

int argus_condense_merge(struct argus_condense *c, const uint8_t *agg, size_t len,
                         char *errbuf, size_t errlen)
{
    int rc = argus_agg_decode(&c->tmp, agg, len, errbuf, errlen);
    if (rc)
        return rc;
    return argus_agg_merge(&c->agg, &c->tmp);
}

/* Pass 1: fold raw summaries, forward names and rank info. */
static int fold(struct argus_condense *c, const uint8_t *in, size_t len, uint64_t *bad)
{
    char err[256];
    for (size_t off = 0; off < len;) {
        int type = 0;
        long n = argus_record_peek(in + off, len - off, off, &type, err, sizeof err);
        if (n < 0) {
            (*bad)++;
            return 0; /* the rest of the stream cannot be framed */
        }
        const uint8_t *rec = in + off;
        off += (size_t)n;
        if (type == ARGUS_REC_SUMMARY) {
            if (argus_summary_decode(rec, (size_t)n, c->s, err, sizeof err) != 0) {
                (*bad)++;
                continue;
            }
            if (!(c->s->flags & ARGUS_SF_EXEMPLAR) && argus_agg_add_summary(&c->agg, c->s))
                return -ENOMEM;
            if (c->ncand == c->capcand) {
                size_t cap = c->capcand ? 2 * c->capcand : 256;
                struct argus_condense_cand *v = realloc(c->cand, cap * sizeof *v);
                if (!v)
                    return -ENOMEM;
                c->cand = v;
                c->capcand = cap;
            }
            c->cand[c->ncand++] = (struct argus_condense_cand){
                .off = (size_t)(rec - in), .len = (size_t)n,
                .key = cell_key(c->s->rank, c->s->step),
                .ref = argus_condense_reference(c->s, c->world)};
        } else if (type == ARGUS_REC_NAME) {
            uint64_t h;
            char name[ARGUS_NAME_MAX + 1];
            if (argus_name_decode(rec, (size_t)n, &h, name, err, sizeof err) != 0) {
                (*bad)++;
                continue;
            }
            int fresh = set_add(&c->names, &c->namecap, &c->namen, h);
            if (fresh < 0 || (fresh && out_copy(c, rec, (size_t)n)))
                return -ENOMEM;
            c->st.names += (uint64_t)fresh;
        } else if (out_copy(c, rec, (size_t)n)) {
            return -ENOMEM;
        }
    }
    return 0;
}

/* Pass 2: the exemplars, in input order (only they are decoded again). */
static int pick(struct argus_condense *c, const uint8_t *in, int root)
{
    char err[256];
    for (size_t i = 0; i < c->ncand; i++) {
        const struct argus_condense_cand *k = &c->cand[i];
        if (!k->ref && !set_has(c->sel, c->selcap, k->key)) {
            c->st.dropped++;
            continue;
        }
        if (root) {
            int fresh = set_add(&c->sent, &c->sentcap, &c->sentn, k->key);
            if (fresh < 0)
                return -ENOMEM;
            if (!fresh)
                continue;
        }
        if (argus_summary_decode(in + k->off, k->len, c->s, err, sizeof err) != 0)
            continue; /* decoded once already: cannot happen */
        c->s->flags |= ARGUS_SF_EXEMPLAR;
        if (out_summary(c, c->s))
            return -ENOMEM;
        c->st.exemplars++;
    }
    return 0;
}

/* Root: a thin summary for every row not written in full. */
static int thin_rest(struct argus_condense *c)
{
    if (argus_agg_sort_rows(&c->agg))
        return -ENOMEM;
    for (size_t i = 0; i < c->agg.nrows; i++) {
        const struct argus_agg_row *r = &c->agg.rows[i];
        if (set_has(c->sent, c->sentcap, cell_key(r->rank, r->step)))
            continue;
        argus_condense_thin(r, c->s);
        if (out_summary(c, c->s))
            return -ENOMEM;
        c->st.thin++;
    }
    return 0;
}

static int encode_agg(struct argus_condense *c)
{
    const size_t need = argus_agg_encoded_size(&c->agg);
    if (need > c->enccap) {
        uint8_t *p = realloc(c->enc, need);
        if (!p)
            return -ENOMEM;
        c->enc = p;
        c->enccap = need;
    }
    long n = argus_agg_encode(&c->agg, c->enc, c->enccap);
    if (n < 0)
        return (int)n;
    c->enclen = (size_t)n;
    return 0;
}

int argus_condense_run(struct argus_condense *c, const uint8_t *in, size_t len, int root,
                       uint64_t *bad)
{
    uint64_t nbad = 0;
    c->outlen = c->enclen = 0;
    c->ncand = 0;
    set_clear(c->sent, c->sentcap, &c->sentn);
    int rc = fold(c, in, len, &nbad);
    if (!rc)
        rc = select_extremes(c);
    if (!rc)
        rc = pick(c, in, root);
    if (!rc)
        rc = root ? thin_rest(c) : encode_agg(c);
    if (bad)
        *bad += nbad;
    if (rc) { /* the batch is lost: forward every name again with a later one */
        set_clear(c->names, c->namecap, &c->namen);
        argus_agg_reset(&c->agg);
        c->outlen = c->enclen = 0;
        return rc;
    }
    c->st.batches++;
    c->st.rows += c->agg.nrows;
    argus_agg_reset(&c->agg);
    return 0;
}
