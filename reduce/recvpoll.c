/* recvpoll.c — non-blocking receive of whole messages of unknown size (recvpoll.h). */
#include "reduce/recvpoll.h"

int argus_recv_poll(struct argus_recv *r, int src, int tag, MPI_Comm comm)
{
    int fresh = 0;
    if (!r->posted) {
        int flag = 0, count = 0;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(src, tag, comm, &flag, &msg, &st) != MPI_SUCCESS || !flag)
            return 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        r->buf.len = 0;
        if (count < 0 || argus_bytebuf_reserve(&r->buf, (size_t)count + 1) != 0) {
            char dummy; /* cannot take it: receive into nothing, never leave it matched */
            MPI_Mrecv(&dummy, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            return -1;
        }
        if (MPI_Imrecv(r->buf.p, count, MPI_BYTE, &msg, &r->req) != MPI_SUCCESS)
            return 0;
        r->buf.len = (size_t)count;
        r->posted = 1;
        fresh = 1;
    }
    /* A message just matched is in MPI's hands already (eager) or on its way: a few
     * tests now usually complete it, which spares the caller a wake-up to poll again. */
    int done = 0;
    for (int i = 0; i < (fresh ? 4 : 1) && !done; i++)
        if (MPI_Test(&r->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return 0;
    if (!done)
        return 0;
    r->posted = 0;
    return 1;
}

void argus_recv_abandon(struct argus_recv *r)
{
    if (!r->posted)
        return;
    MPI_Cancel(&r->req);
    MPI_Request_free(&r->req);
    r->posted = 0;
}
