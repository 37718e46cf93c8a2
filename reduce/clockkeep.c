/* clockkeep.c — the running clock offset to rank 0 (clockkeep.h). */
#include "reduce/clockkeep.h"

#include <errno.h>
#include <string.h>

#include "common/clock.h"
#include "reduce/clockfit.h"
#include "reduce/clocksync.h"

#define TAG_KPING 0x4170
#define TAG_KPONG 0x4171
#define SLOTS 8
/* How long either side waits for the other during a burst instead of returning to its
 * caller's loop (which may sleep): the pings of a burst then see the bare message
 * latency, and neither leg picks up the loops' sleeps. At most a few per ms. */
#define SPIN_NS 200000ull

struct pong {
    uint64_t seq, t_server;
    int64_t server_offset; /* the server's own offset to rank 0 */
    int64_t server_err;    /* its uncertainty (0 for rank 0); -1: not yet settled */
};

static struct {
    int on;
    MPI_Comm comm;
    int parent;
    uint64_t period_ns;
    struct argus_clockfit fit; /* the line through the pings' bounds (clockfit.h) */
    int64_t offset;          /* published estimate */
    /* answering */
    struct pong out[SLOTS];
    MPI_Request oreq[SLOTS];
    /* own burst */
    uint64_t next_burst;     /* monotonic */
    uint64_t burst_until;    /* monotonic; 0: no burst running */
    int pings;               /* completed in this burst */
    int taken;               /* of which gave a bound */
    uint64_t seq, ping_buf, t1, burst_clock;
    struct pong in;
    MPI_Request preq[2];     /* ping send, pong receive */
    int ping_out;
    uint64_t bursts;
} clockkeep;

int argus_clockkeep_init(MPI_Comm comm, int parent, int64_t start_offset, long period_ms)
{
    memset(&clockkeep, 0, sizeof clockkeep);
    clockkeep.comm = comm;
    clockkeep.parent = parent;
    clockkeep.period_ns = period_ms > 0 ? (uint64_t)period_ms * 1000000ull : 0;
    clockkeep.offset = start_offset;
    argus_clockfit_init(&clockkeep.fit, (int64_t)argus_clocksync_now(), start_offset);
    for (int i = 0; i < SLOTS; i++)
        clockkeep.oreq[i] = MPI_REQUEST_NULL;
    clockkeep.preq[0] = clockkeep.preq[1] = MPI_REQUEST_NULL;
    clockkeep.next_burst = argus_clock_monotonic_ns() + clockkeep.period_ns;
    clockkeep.on = 1;
    return 0;
}

/* Answer the pings that have arrived (as long as a reply slot is free). */
static int answer(void)
{
    int any = 0;
    uint64_t last = 0;

    for (;;) {
        int slot = -1, flag = 0, done = 0;
        for (int i = 0; i < SLOTS && slot < 0; i++) {
            if (clockkeep.oreq[i] != MPI_REQUEST_NULL)
                MPI_Test(&clockkeep.oreq[i], &done, MPI_STATUS_IGNORE);
            if (clockkeep.oreq[i] == MPI_REQUEST_NULL)
                slot = i;
        }
        if (slot < 0)
            return any;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, TAG_KPING, clockkeep.comm, &flag, &msg, &st) != MPI_SUCCESS)
            return any;
        if (!flag) {
            /* after an answer, stay a moment for the burst's next ping */
            if (any && argus_clock_monotonic_ns() < last + SPIN_NS)
                continue;
            return any;
        }
        uint64_t seq = 0;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MPI_Mrecv(&seq, count == (int)sizeof seq ? count : 0, MPI_BYTE, &msg,
                  MPI_STATUS_IGNORE);
        clockkeep.out[slot] =
            (struct pong){seq, argus_clocksync_now(), clockkeep.offset,
                          clockkeep.parent < 0  ? 0
                          : clockkeep.fit.rated ? argus_clockfit_uncertainty(&clockkeep.fit)
                                                : -1};
        MPI_Isend(&clockkeep.out[slot], (int)sizeof clockkeep.out[slot], MPI_BYTE, st.MPI_SOURCE,
                  TAG_KPONG, clockkeep.comm, &clockkeep.oreq[slot]);
        any = 1;
        last = argus_clock_monotonic_ns();
    }
}

static void burst_end(void)
{
    if (clockkeep.taken) {
        argus_clockfit_solve(&clockkeep.fit);
        clockkeep.bursts++;
    }
    clockkeep.burst_until = 0;
    clockkeep.next_burst = argus_clock_monotonic_ns() + clockkeep.period_ns;
}

/* Advance the own burst of pings to the parent. */
static int measure(uint64_t mono)
{
    if (clockkeep.parent < 0 || clockkeep.period_ns == 0)
        return 0;
    if (!clockkeep.burst_until) {
        if (mono < clockkeep.next_burst)
            return 0;
        clockkeep.burst_until = mono + ARGUS_CLOCKKEEP_BURST_MS * 1000000ull;
        clockkeep.pings = clockkeep.taken = 0;
        clockkeep.burst_clock = argus_clocksync_now();
    }
    if (!clockkeep.ping_out) {
        clockkeep.ping_buf = ++clockkeep.seq;
        MPI_Irecv(&clockkeep.in, (int)sizeof clockkeep.in, MPI_BYTE, clockkeep.parent, TAG_KPONG,
                  clockkeep.comm, &clockkeep.preq[1]);
        clockkeep.t1 = argus_clocksync_now();
        MPI_Isend(&clockkeep.ping_buf, (int)sizeof clockkeep.ping_buf, MPI_BYTE, clockkeep.parent,
                  TAG_KPING, clockkeep.comm, &clockkeep.preq[0]);
        clockkeep.ping_out = 1;
    }
    /* wait for the pong a little: a pong noticed only at the next turn of the caller's
     * loop has a return leg as long as that loop's sleep, on every ping alike */
    int done = 0;
    const uint64_t spin_until = argus_clock_monotonic_ns() + SPIN_NS;
    do
        MPI_Testall(2, clockkeep.preq, &done, MPI_STATUSES_IGNORE);
    while (!done && argus_clock_monotonic_ns() < spin_until);
    if (!done) {
        if (mono > clockkeep.burst_until) /* the parent is busy or gone: try again later; the
                                    * receive stays posted and takes the late pong */
            burst_end();
        return 0;
    }
    uint64_t t2 = argus_clocksync_now();
    clockkeep.ping_out = 0;
    /* a pong that outlived an abandoned burst belongs to an older ping: not a bound;
     * nor is one from a parent whose own offset has not yet followed its drift (its
     * error would stay in our window for 16 bursts); the parent's uncertainty widens
     * the bound */
    if (clockkeep.in.seq == clockkeep.seq && clockkeep.t1 >= clockkeep.burst_clock
        && clockkeep.in.server_err >= 0) {
        argus_clockfit_add(&clockkeep.fit, (int64_t)clockkeep.t1, (int64_t)t2,
                           (int64_t)clockkeep.in.t_server + clockkeep.in.server_offset,
                           clockkeep.in.server_err);
        clockkeep.taken++;
    }
    if (++clockkeep.pings >= ARGUS_CLOCKKEEP_BURST)
        burst_end();
    return 1;
}

int argus_clockkeep_poll(void)
{
    if (!clockkeep.on)
        return 0;
    int any = answer();
    any |= measure(argus_clock_monotonic_ns());
    clockkeep.offset = argus_clockfit_at(&clockkeep.fit, (int64_t)argus_clocksync_now());
    return any;
}

int64_t argus_clockkeep_offset(void)
{
    return clockkeep.offset;
}

uint64_t argus_clockkeep_bursts(void)
{
    return clockkeep.bursts;
}

int64_t argus_clockkeep_band(void)
{
    return (int64_t)clockkeep.fit.width;
}

void argus_clockkeep_free(void)
{
    if (!clockkeep.on)
        return;
    for (int i = 0; i < SLOTS; i++)
        if (clockkeep.oreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&clockkeep.oreq[i]);
    for (int i = 0; i < 2; i++)
        if (clockkeep.preq[i] != MPI_REQUEST_NULL) {
            if (i == 1)
                MPI_Cancel(&clockkeep.preq[i]);
            MPI_Request_free(&clockkeep.preq[i]);
        }
    memset(&clockkeep, 0, sizeof clockkeep);
}
