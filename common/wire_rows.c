/* wire_rows.c — the rows record (wire_rows.h). */
#include "common/wire_rows.h"

#include <errno.h>

#include "common/errbuf.h"
#include "common/wire_io.h"

size_t argus_rows_encoded_max(size_t n)
{
    return ARGUS_WIRE_HDR + 4 + n * ARGUS_AGGROW_MAX + ARGUS_WIRE_TRAILER;
}

long argus_rows_encode(const struct argus_agg_row *r, size_t n, uint8_t *buf, size_t cap)
{
    if (!r || !buf || n == 0 || n > ARGUS_ROWS_PER_RECORD)
        return -EINVAL;
    if (cap < argus_rows_encoded_max(n))
        return -ENOSPC;
    struct wbuf w = {buf, 0, cap};
    struct argus_aggrow_coder c;
    argus_wire_rec_start(&w, ARGUS_REC_ROWS);
    put32(&w, (uint32_t)n);
    argus_aggrow_init(&c);
    w.pos = (size_t)(argus_aggrow_put(&c, r, n, buf + w.pos) - buf);
    return argus_wire_rec_finish(&w);
}

int argus_rows_open(const uint8_t *rec, size_t len, struct argus_rows_reader *rd,
                    char *errbuf, size_t errlen)
{
    struct rbuf r;
    int rc = argus_wire_rec_open(rec, len, ARGUS_REC_ROWS, "rows", &r, errbuf, errlen);
    if (rc < 0)
        return rc;
    uint32_t n = get32(&r);
    if (r.bad || n == 0 || n > ARGUS_ROWS_PER_RECORD) {
        argus_seterr(errbuf, errlen, "rows: bad row count %u at offset %d", n,
                     ARGUS_WIRE_HDR);
        return -EBADMSG;
    }
    rd->p = rec + r.pos;
    rd->end = rec + r.end;
    rd->left = n;
    argus_aggrow_init(&rd->c);
    return 0;
}

int argus_rows_next(struct argus_rows_reader *rd, struct argus_agg_row *row, char *errbuf,
                    size_t errlen)
{
    if (rd->left == 0) {
        if (rd->p == rd->end)
            return 0;
        argus_seterr(errbuf, errlen, "rows: %zu bytes after the last row",
                     (size_t)(rd->end - rd->p));
        return -EBADMSG;
    }
    if (argus_aggrow_get(&rd->c, &rd->p, rd->end, row, 1) != 0) {
        argus_seterr(errbuf, errlen, "rows: row %llu is truncated, malformed or out of order",
                     (unsigned long long)rd->c.n);
        return -EBADMSG;
    }
    rd->left--;
    return 1;
}
