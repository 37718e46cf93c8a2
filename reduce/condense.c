/* condense.c — a reduction-tree node's condensing step (reduce/condense.h): fold, select
 * exemplars, write what goes up. */
#include "reduce/condense.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/wire.h"
#include "common/wire_rows.h"

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
    for (int i = 0; i < 2; i++) {
        free(c->held[i].p);
        free(c->held[i].ix);
    }
    free(c->have);
    free(c->want);
    free(c->rep);
    free(c->thin);
    memset(c, 0, sizeof *c);
}

/* ---- open-addressed sets of u64 keys (stored + 1; 0 is empty) --------------------------- */

static int set_has(const uint64_t *t, size_t cap, uint64_t key)
{
    if (!cap)
        return 0;
    key++;
    for (size_t i = argus_mix64(key) & (cap - 1);; i = (i + 1) & (cap - 1)) {
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
            size_t j = argus_mix64((*t)[i]) & (nc - 1);
            while (nt[j])
                j = (j + 1) & (nc - 1);
            nt[j] = (*t)[i];
        }
        free(*t);
        *t = nt;
        *cap = nc;
    }
    key++;
    size_t i = argus_mix64(key) & (*cap - 1);
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

uint64_t argus_condense_key(uint32_t rank, uint64_t step)
{
    return cell_key(rank, step);
}

/* ---- output buffers ---------------------------------------------------------------- */

static uint8_t *buf_room(uint8_t **b, size_t len, size_t *cap, size_t n)
{
    if (argus_grow(b, cap, len + n, 1, 65536) != 0)
        return NULL;
    return *b + len;
}

static int buf_copy(uint8_t **b, size_t *len, size_t *cap, const uint8_t *rec, size_t n)
{
    uint8_t *p = buf_room(b, *len, cap, n);
    if (!p)
        return -ENOMEM;
    memcpy(p, rec, n);
    *len += n;
    return 0;
}

static int buf_summary(uint8_t **b, size_t *len, size_t *cap,
                       const struct argus_step_summary *s)
{
    const size_t room = SUMMARY_ROOM(s->n_kmodes);
    uint8_t *p = buf_room(b, *len, cap, room);
    if (!p)
        return -ENOMEM;
    long n = argus_summary_encode(s, p, room);
    if (n < 0)
        return (int)n;
    *len += (size_t)n;
    return 0;
}

static int out_copy(struct argus_condense *c, const uint8_t *rec, size_t n)
{
    return buf_copy(&c->out, &c->outlen, &c->outcap, rec, n);
}

static int out_summary(struct argus_condense *c, const struct argus_step_summary *s)
{
    return buf_summary(&c->out, &c->outlen, &c->outcap, s);
}

/* Hold mode: an extreme cell (key) into the current batch's held records: s encoded, or
 * (s NULL) its record rec[0..n) as it came. */
static int hold_cell(struct argus_condense *c, uint64_t key, const struct argus_step_summary *s,
                     const uint8_t *rec, size_t n)
{
    struct argus_condense_held *h = &c->held[c->heldcur];
    if (argus_grow(&h->ix, &h->capix, h->nix + 1, sizeof *h->ix, 64) != 0)
        return -ENOMEM;
    const size_t off = h->len;
    int rc = s ? buf_summary(&h->p, &h->len, &h->cap, s) : buf_copy(&h->p, &h->len, &h->cap,
                                                                        rec, n);
    if (rc)
        return rc;
    h->ix[h->nix++] = (struct argus_condense_heldix){ key, off, h->len - off };
    return 0;
}

/* ---- the rules ---------------------------------------------------------------------- */

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

/* The version of a framed record (wire.h: u32 magic, then u16 version, little-endian). */
static unsigned record_version(const uint8_t *rec)
{
    return (unsigned)rec[4] | (unsigned)rec[5] << 8;
}

/* Pass 1: fold raw summaries of in[from..len), forward names and rank info. answers: the
 * range holds pulled cells (exemplars only; nothing else from it counts). */
static int fold(struct argus_condense *c, const uint8_t *in, size_t from, size_t len,
                int answers, uint64_t *bad)
{
    char err[256];
    for (size_t off = from; off < len;) {
        int type = 0;
        long n = argus_record_peek(in + off, len - off, off, &type, err, sizeof err);
        if (n < 0) {
            (*bad)++;
            return 0; /* the rest of the stream cannot be framed */
        }
        const uint8_t *rec = in + off;
        off += (size_t)n;
        if (answers && type != ARGUS_REC_SUMMARY)
            continue;
        if (type == ARGUS_REC_SUMMARY) {
            if (argus_summary_decode(rec, (size_t)n, c->s, err, sizeof err) != 0) {
                (*bad)++;
                continue;
            }
            if (answers && !(c->s->flags & ARGUS_SF_EXEMPLAR))
                continue; /* an answer carries exemplars only */
            if (!(c->s->flags & ARGUS_SF_EXEMPLAR) && argus_agg_add_summary(&c->agg, c->s))
                return -ENOMEM;
            if (argus_grow(&c->cand, &c->capcand, c->ncand + 1, sizeof *c->cand, 256) != 0)
                return -ENOMEM;
            c->cand[c->ncand++] = (struct argus_condense_cand){
                .off = (size_t)(rec - in), .len = (size_t)n,
                .key = cell_key(c->s->rank, c->s->step),
                .ref = argus_condense_reference(c->s, c->world),
                .verbatim = (c->s->flags & ARGUS_SF_EXEMPLAR) &&
                            record_version(rec) == ARGUS_WIRE_VERSION};
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

/* Pass 2: the exemplars, in input order. A cell that came as an exemplar in this
 * build's encoding goes on as the bytes it came in (the encoding is canonical: decoding and
 * encoding it again gives the same bytes, tests/common/test_wire_summary.c); the others (raw
 * summaries) are decoded again, flagged and encoded. */
static int pick(struct argus_condense *c, const uint8_t *in, int mode)
{
    const int root = mode == ARGUS_CONDENSE_ROOT;
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
            const uint32_t bit = (uint32_t)(k->key >> 32) % ARGUS_CONDENSE_SENT_BITS;
            c->sent_ranks[bit / 64] |= 1ull << bit % 64;
        }
        const struct argus_step_summary *s = NULL;
        if (!k->verbatim) {
            if (argus_summary_decode(in + k->off, k->len, c->s, err, sizeof err) != 0)
                continue; /* decoded once already: cannot happen */
            c->s->flags |= ARGUS_SF_EXEMPLAR;
            s = c->s;
        }
        if (mode == ARGUS_CONDENSE_HOLD && !k->ref) {
            if (hold_cell(c, k->key, s, in + k->off, k->len))
                return -ENOMEM;
            c->st.held++;
            continue;
        }
        if (s ? out_summary(c, s) : out_copy(c, in + k->off, k->len))
            return -ENOMEM;
        c->st.exemplars++;
    }
    return 0;
}

/* Root: rows[0..n) as one rows record. */
static int out_rows(struct argus_condense *c, const struct argus_agg_row *rows, size_t n)
{
    const size_t room = argus_rows_encoded_max(n);
    uint8_t *p = n ? buf_room(&c->out, c->outlen, &c->outcap, room) : NULL;
    if (!n)
        return 0;
    if (!p)
        return -ENOMEM;
    long k = argus_rows_encode(rows, n, p, room);
    if (k < 0)
        return (int)k;
    c->outlen += (size_t)k;
    c->st.thin += n;
    return 0;
}

/* Root: every row not written in full goes into c->thin, then into rows records
 * (wire_rows.h), in order. */
static int thin_rest(struct argus_condense *c)
{
    if (argus_agg_sort_rows(&c->agg))
        return -ENOMEM;
    if (c->agg.nrows > c->thincap) {
        struct argus_agg_row *v = realloc(c->thin, c->agg.nrows * sizeof *v);
        if (!v)
            return -ENOMEM;
        c->thin = v;
        c->thincap = c->agg.nrows;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->agg.nrows; i++) {
        const struct argus_agg_row *r = &c->agg.rows[i];
        const uint32_t bit = r->rank % ARGUS_CONDENSE_SENT_BITS;
        if ((c->sent_ranks[bit / 64] >> bit % 64 & 1) &&
            set_has(c->sent, c->sentcap, cell_key(r->rank, r->step)))
            continue; /* the filter spares the lookup of nearly every row */
        c->thin[n++] = *r;
    }
    for (size_t i = 0; i < n; i += ARGUS_ROWS_PER_RECORD) {
        const size_t k = n - i < ARGUS_ROWS_PER_RECORD ? n - i : ARGUS_ROWS_PER_RECORD;
        if (out_rows(c, c->thin + i, k))
            return -ENOMEM;
    }
    c->nthin = n;
    return 0;
}

size_t argus_condense_thin_rows(const struct argus_condense *c,
                                const struct argus_agg_row **rows)
{
    *rows = c->thin;
    return c->nthin;
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

/* The end of a batch: counters, or on failure forget what went up (every name is
 * forwarded again with a later batch). Starts the next batch. */
static int batch_done(struct argus_condense *c, int rc, uint64_t nbad, uint64_t *bad)
{
    if (bad)
        *bad += nbad;
    if (rc) {
        set_clear(c->names, c->namecap, &c->namen);
        argus_agg_reset(&c->agg);
        c->outlen = c->enclen = c->nthin = 0;
        return rc;
    }
    c->st.batches++;
    c->st.rows += c->agg.nrows;
    argus_agg_reset(&c->agg);
    return 0;
}

static void batch_start(struct argus_condense *c)
{
    c->outlen = c->enclen = 0;
    c->nthin = 0;
    c->ncand = 0;
    c->nwant = 0;
    set_clear(c->sent, c->sentcap, &c->sentn);
    memset(c->sent_ranks, 0, sizeof c->sent_ranks);
}

int argus_condense_run(struct argus_condense *c, const uint8_t *in, size_t len, int mode,
                       uint64_t *bad)
{
    uint64_t nbad = 0;
    batch_start(c);
    if (mode == ARGUS_CONDENSE_HOLD) { /* a new generation replaces the oldest */
        c->heldcur ^= 1;
        c->held[c->heldcur].len = c->held[c->heldcur].nix = 0;
    }
    int rc = fold(c, in, 0, len, 0, &nbad);
    if (!rc)
        rc = select_extremes(c);
    if (!rc)
        rc = pick(c, in, mode);
    if (!rc)
        rc = mode == ARGUS_CONDENSE_ROOT ? thin_rest(c) : encode_agg(c);
    return batch_done(c, rc, nbad, bad);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* c->want: the selected cells no candidate of the input holds, ascending. */
static int list_wanted(struct argus_condense *c)
{
    set_clear(c->have, c->havecap, &c->haven);
    for (size_t i = 0; i < c->ncand; i++)
        if (set_add(&c->have, &c->havecap, &c->haven, c->cand[i].key) < 0)
            return -ENOMEM;
    c->nwant = 0;
    for (size_t i = 0; i < c->selcap; i++) {
        if (!c->sel[i] || set_has(c->have, c->havecap, c->sel[i] - 1))
            continue;
        if (argus_grow(&c->want, &c->capwant, c->nwant + 1, sizeof *c->want, 256) != 0)
            return -ENOMEM;
        c->want[c->nwant++] = c->sel[i] - 1;
    }
    qsort(c->want, c->nwant, sizeof *c->want, cmp_u64);
    c->st.wanted += c->nwant;
    return 0;
}

int argus_condense_root_begin(struct argus_condense *c, const uint8_t *in, size_t len,
                              uint64_t *bad)
{
    uint64_t nbad = 0;
    batch_start(c);
    int rc = fold(c, in, 0, len, 0, &nbad);
    if (!rc)
        rc = select_extremes(c);
    if (!rc)
        rc = list_wanted(c);
    if (bad)
        *bad += nbad;
    return rc ? batch_done(c, rc, 0, NULL) : 0;
}

int argus_condense_root_end(struct argus_condense *c, const uint8_t *in, size_t from,
                            size_t len, uint64_t *bad)
{
    uint64_t nbad = 0;
    int rc = fold(c, in, from, len, 1, &nbad);
    if (!rc)
        rc = pick(c, in, ARGUS_CONDENSE_ROOT);
    if (!rc)
        rc = thin_rest(c);
    return batch_done(c, rc, nbad, bad);
}

int argus_condense_answer(struct argus_condense *c, const uint64_t *keys, size_t n)
{
    c->replen = 0;
    for (int g = 0; g < 2 && n; g++) {
        const struct argus_condense_held *h = &c->held[g];
        for (size_t i = 0; i < h->nix; i++) {
            const uint64_t k = h->ix[i].key;
            if (!bsearch(&k, keys, n, sizeof *keys, cmp_u64))
                continue;
            if (buf_copy(&c->rep, &c->replen, &c->repcap, h->p + h->ix[i].off, h->ix[i].len))
                return -ENOMEM;
            c->st.answered++;
        }
    }
    return 0;
}
