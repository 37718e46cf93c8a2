/* window.c — collect a rank's wire records for one window and gather all ranks' records
 * up the k-ary tree to rank 0 (blocking first version; see window.h). */
#include "reduce/window.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "reduce/tree.h"

#define WINDOW_TAG 0x4157 /* "AW" */

static int window_reserve(struct argus_window *w, size_t extra)
{
    if (w->len + extra <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + extra)
        cap *= 2;
    uint8_t *nb = realloc(w->buf, cap);
    if (!nb)
        return -ENOMEM;
    w->buf = nb;
    w->cap = cap;
    return 0;
}

int argus_window_init(struct argus_window *w, size_t reserve)
{
    memset(w, 0, sizeof *w);
    return window_reserve(w, reserve);
}

void argus_window_free(struct argus_window *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

void argus_window_reset(struct argus_window *w)
{
    w->len = 0;
    w->n_summaries = 0;
}

int argus_window_add_summary(struct argus_window *w, const struct argus_step_summary *s)
{
    int rc = window_reserve(w, argus_summary_encoded_max(s->n_kmodes));
    if (rc)
        return rc;
    long n = argus_summary_encode(s, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    w->n_summaries++;
    w->n_summaries_total++;
    w->bytes_summaries += (uint64_t)n;
    return 0;
}

int argus_window_add_name(struct argus_window *w, uint64_t hash, const char *name)
{
    int rc = window_reserve(w, ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER + 10 + ARGUS_NAME_MAX);
    if (rc)
        return rc;
    long n = argus_name_encode(hash, name, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    return 0;
}

int argus_window_add_rankinfo(struct argus_window *w, const struct argus_rank_info *ri)
{
    int rc = window_reserve(w, ARGUS_WIRE_HDR + ARGUS_WIRE_TRAILER + sizeof *ri + 64);
    if (rc)
        return rc;
    long n = argus_rankinfo_encode(ri, w->buf + w->len, w->cap - w->len);
    if (n < 0)
        return (int)n;
    w->len += (size_t)n;
    return 0;
}

/* Receive one child's whole subtree payload, appending it to *acc. */
static int recv_child(MPI_Comm comm, int child, uint8_t **acc, size_t *acclen, size_t *acccap)
{
    MPI_Status st;
    int count = 0;

    if (MPI_Probe(child, WINDOW_TAG, comm, &st) != MPI_SUCCESS)
        return -EIO;
    if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0)
        return -EIO;
    if (*acclen + (size_t)count > *acccap) {
        size_t cap = *acccap ? *acccap : 4096;
        while (cap < *acclen + (size_t)count)
            cap *= 2;
        uint8_t *nb = realloc(*acc, cap);
        if (!nb)
            return -ENOMEM;
        *acc = nb;
        *acccap = cap;
    }
    if (MPI_Recv(*acc + *acclen, count, MPI_BYTE, child, WINDOW_TAG, comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return -EIO;
    *acclen += (size_t)count;
    return 0;
}

int argus_window_exchange(struct argus_window *w, MPI_Comm comm, int fanin, uint8_t **out,
                          size_t *outlen)
{
    int rank, size, rc = 0;
    uint8_t *acc = NULL;
    size_t acclen = 0, acccap = 0;

    *out = NULL;
    *outlen = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    acccap = w->len ? w->len : 1;
    acc = malloc(acccap);
    if (!acc)
        return -ENOMEM;
    memcpy(acc, w->buf, w->len);
    acclen = w->len;

    /* Children always send, even on error (then an empty payload), so nobody waits. */
    int first = argus_tree_first_child(rank, fanin);
    int nchild = argus_tree_nchildren(rank, size, fanin);
    for (int i = 0; i < nchild; i++) {
        int crc = recv_child(comm, first + i, &acc, &acclen, &acccap);
        if (crc && !rc)
            rc = crc;
    }
    if (acclen > (size_t)INT_MAX) { /* issue 7 chunks large windows */
        acclen = 0;
        if (!rc)
            rc = -E2BIG;
    }
    int parent = argus_tree_parent(rank, fanin);
    if (parent >= 0) {
        if (MPI_Send(acc, (int)acclen, MPI_BYTE, parent, WINDOW_TAG, comm) != MPI_SUCCESS && !rc)
            rc = -EIO;
        free(acc);
    } else {
        *out = acc;
        *outlen = acclen;
    }
    argus_window_reset(w);
    return rc;
}
