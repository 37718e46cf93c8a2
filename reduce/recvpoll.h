/* recvpoll.h — receive whole messages of unknown size from one peer without ever
 * blocking (the Argus thread's pattern: MPI_Improbe, then MPI_Imrecv into a buffer of
 * the probed size, then MPI_Test on later calls). Used for the tree's window messages
 * (agent.c) and for the pull's asks and answers (pull.c). Not thread-safe.
 */
#ifndef ARGUS_REDUCE_RECVPOLL_H
#define ARGUS_REDUCE_RECVPOLL_H

#include <mpi.h>

#include "reduce/bytebuf.h"

struct argus_recv {
    int posted;               /* a receive is in flight */
    MPI_Request req;
    struct argus_bytebuf buf; /* the message once complete: buf.len bytes */
};

/* Progress the receive of the next message from src with tag. 1: a whole message is in
 * r->buf (the next call starts on the following one); 0: not yet; -1: a message came that
 * could not be taken (out of memory: it was received into nothing, so it never stays
 * matched). */
int argus_recv_poll(struct argus_recv *r, int src, int tag, MPI_Comm comm);
/* Leave a posted receive to MPI (cancelled, freed): for abandoning the exchange. */
void argus_recv_abandon(struct argus_recv *r);

#endif /* ARGUS_REDUCE_RECVPOLL_H */
