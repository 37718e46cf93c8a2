/* wire_nccl.c — the NCCL block of a summary record (wire_nccl.h has the layout). */
#include "common/wire_nccl.h"

#include <errno.h>
#include <string.h>

#define KEY_LAST 0x1u  /* the last collective (seq, start, end) follows */
#define KEY_PXFER 0x2u /* peer_xfer_ns follows */
#define KEY_PEER_SHIFT 2

int argus_wire_nccl_present(const struct argus_nccl_sum *n)
{
    return n->n_comms || n->comms_dropped;
}

int argus_wire_nccl_check(const struct argus_nccl_sum *n)
{
    if (n->n_comms > ARGUS_NCCL_SUM_COMMS || n->comms_dropped > ARGUS_NCCL_DROPPED_MAX)
        return -EINVAL;
    for (uint32_t i = 0; i < n->n_comms; i++) {
        const struct argus_nccl_comm_sum *c = &n->comm[i];
        if (c->peer < -1 || c->peer >= ARGUS_NCCL_PEER_LIMIT ||
            (!c->last_start_ns && c->last_seq))
            return -EINVAL;
    }
    return 0;
}

void argus_wire_nccl_put(struct wbuf *w, const struct argus_nccl_sum *n, uint64_t start_ns)
{
    put_uv(w, n->n_comms);
    put_uv(w, n->comms_dropped);
    for (uint32_t i = 0; i < n->n_comms; i++) {
        const struct argus_nccl_comm_sum *c = &n->comm[i];
        const unsigned last = c->last_start_ns ? KEY_LAST : 0;
        const unsigned px = c->peer_xfer_ns ? KEY_PXFER : 0;
        put64(w, c->comm_hash);
        put_uv(w, c->colls);
        put_uv(w, (uint64_t)((int64_t)c->peer + 1) << KEY_PEER_SHIFT | px | last);
        put_uv(w, c->peer_wait_ns);
        put_uv(w, c->xfer_ns);
        put_uv(w, c->gpu_wait_ns);
        if (px)
            put_uv(w, c->peer_xfer_ns);
        if (last) {
            put_uv(w, c->last_seq);
            put_zz(w, c->last_start_ns - start_ns);
        }
    }
}

void argus_wire_nccl_get(struct rbuf *r, struct argus_nccl_sum *out, uint64_t start_ns,
                         size_t *range_at)
{
    memset(out, 0, sizeof *out);
    size_t at = r->pos;
    const uint64_t n = get_uv(r), dropped = get_uv(r);
    if (n > ARGUS_NCCL_SUM_COMMS || dropped > ARGUS_NCCL_DROPPED_MAX) {
        if (!*range_at)
            *range_at = at;
        return;
    }
    out->n_comms = (uint32_t)n;
    out->comms_dropped = (uint32_t)dropped;
    for (uint32_t i = 0; i < out->n_comms && !r->bad; i++) {
        struct argus_nccl_comm_sum *c = &out->comm[i];
        c->comm_hash = get64(r);
        at = r->pos;
        const uint64_t colls = get_uv(r);
        const size_t kat = r->pos;
        const uint64_t key = get_uv(r), peer1 = key >> KEY_PEER_SHIFT;
        if ((colls > UINT32_MAX || peer1 > ARGUS_NCCL_PEER_LIMIT) && !*range_at)
            *range_at = colls > UINT32_MAX ? at : kat;
        c->colls = (uint32_t)colls;
        c->peer = (int32_t)(peer1 > ARGUS_NCCL_PEER_LIMIT ? 0 : (int64_t)peer1 - 1);
        c->peer_wait_ns = get_uv(r);
        c->xfer_ns = get_uv(r);
        c->gpu_wait_ns = get_uv(r);
        if (key & KEY_PXFER)
            c->peer_xfer_ns = get_uv(r);
        if (key & KEY_LAST) {
            c->last_seq = get_uv(r);
            c->last_start_ns = start_ns + get_zz(r);
            if (!c->last_start_ns && !*range_at) /* 0 is "none": never written with the bit */
                *range_at = kat;
        }
    }
}
