/* clockkeep.c — the running clock offset to rank 0 (clockkeep.h). */
#include "reduce/clockkeep.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/clock.h"
#include "reduce/clocksync.h"

#define TAG_KPING 0x4170
#define TAG_KPONG 0x4171
#define SLOTS 8
#define FIT 16 /* samples in the drift fit */

struct pong {
    uint64_t seq, t_server;
    int64_t server_offset; /* the server's own offset to rank 0 */
};

static struct {
    int on;
    MPI_Comm comm;
    int parent;
    uint64_t period_ns;
    double ft[FIT], fy[FIT], fw[FIT]; /* the last FIT samples: time, offset, weight */
    int fn, fhead, measured;
    double level, slope, tmean; /* fit: offset(t) = level + slope (t - tmean) */
    int64_t offset;          /* published estimate */
    /* answering */
    struct pong out[SLOTS];
    MPI_Request oreq[SLOTS];
    /* own burst */
    uint64_t next_burst;     /* monotonic */
    uint64_t burst_until;    /* monotonic; 0: no burst running */
    int pings;               /* completed in this burst */
    uint64_t seq, ping_buf, t1, burst_clock;
    struct pong in;
    MPI_Request preq[2];     /* ping send, pong receive */
    int ping_out;
    uint64_t best_rtt, best_t;
    int64_t best_total;
    uint64_t bursts;
} ck;

/* Add a sample (rtt: its round trip, which bounds its error by rtt / 2) and refit the
 * line: weighted least squares, weight 1 / (rtt / 2 + 20 us)^2, so that a sample taken
 * while a core was busy (long RTT, asymmetric delays) hardly moves it. The start-up
 * estimate (rtt 0: unknown) counts only until two bursts have been measured. Times are
 * taken relative to their weighted mean, so the large clock values cancel. */
static void fit_add(double t, double y, double rtt)
{
    const double e = rtt / 2 + 20000.0;
    ck.ft[ck.fhead] = t;
    ck.fy[ck.fhead] = y;
    ck.fw[ck.fhead] = 1.0 / (e * e);
    ck.fhead = (ck.fhead + 1) % FIT;
    if (ck.fn < FIT)
        ck.fn++;
    if (rtt > 0 && ++ck.measured == 2)
        ck.fw[0] = 0; /* the start-up sample is slot 0: from now on the bursts speak */
    double sw = 0, tm = 0, ym = 0;
    for (int i = 0; i < ck.fn; i++)
        sw += ck.fw[i];
    for (int i = 0; i < ck.fn; i++) {
        tm += ck.fw[i] / sw * ck.ft[i];
        ym += ck.fw[i] / sw * ck.fy[i];
    }
    double sxx = 0, sxy = 0;
    for (int i = 0; i < ck.fn; i++) {
        sxx += ck.fw[i] * (ck.ft[i] - tm) * (ck.ft[i] - tm);
        sxy += ck.fw[i] * (ck.ft[i] - tm) * (ck.fy[i] - ym);
    }
    ck.tmean = tm;
    ck.level = ym;
    ck.slope = sxx > 0 ? sxy / sxx : 0;
}

int argus_clockkeep_init(MPI_Comm comm, int parent, int64_t start_offset, long period_ms)
{
    memset(&ck, 0, sizeof ck);
    ck.comm = comm;
    ck.parent = parent;
    ck.period_ns = period_ms > 0 ? (uint64_t)period_ms * 1000000ull : 0;
    ck.offset = start_offset;
    fit_add((double)argus_clocksync_now(), (double)start_offset, 0);
    for (int i = 0; i < SLOTS; i++)
        ck.oreq[i] = MPI_REQUEST_NULL;
    ck.preq[0] = ck.preq[1] = MPI_REQUEST_NULL;
    ck.next_burst = argus_clock_monotonic_ns() + ck.period_ns;
    ck.on = 1;
    return 0;
}

/* Answer the pings that have arrived (as long as a reply slot is free). */
static int answer(void)
{
    int any = 0;

    for (;;) {
        int slot = -1, flag = 0, done = 0;
        for (int i = 0; i < SLOTS && slot < 0; i++) {
            if (ck.oreq[i] != MPI_REQUEST_NULL)
                MPI_Test(&ck.oreq[i], &done, MPI_STATUS_IGNORE);
            if (ck.oreq[i] == MPI_REQUEST_NULL)
                slot = i;
        }
        if (slot < 0)
            return any;
        MPI_Message msg;
        MPI_Status st;
        if (MPI_Improbe(MPI_ANY_SOURCE, TAG_KPING, ck.comm, &flag, &msg, &st) != MPI_SUCCESS ||
            !flag)
            return any;
        uint64_t seq = 0;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MPI_Mrecv(&seq, count == (int)sizeof seq ? count : 0, MPI_BYTE, &msg,
                  MPI_STATUS_IGNORE);
        ck.out[slot] = (struct pong){seq, argus_clocksync_now(), ck.offset};
        MPI_Isend(&ck.out[slot], (int)sizeof ck.out[slot], MPI_BYTE, st.MPI_SOURCE, TAG_KPONG,
                  ck.comm, &ck.oreq[slot]);
        any = 1;
    }
}

static void burst_end(void)
{
    if (ck.best_rtt != UINT64_MAX) {
        fit_add((double)ck.best_t, (double)ck.best_total, (double)ck.best_rtt);
        ck.bursts++;
    }
    ck.burst_until = 0;
    ck.next_burst = argus_clock_monotonic_ns() + ck.period_ns;
}

/* Advance the own burst of pings to the parent. */
static int measure(uint64_t mono)
{
    if (ck.parent < 0 || ck.period_ns == 0)
        return 0;
    if (!ck.burst_until) {
        if (mono < ck.next_burst)
            return 0;
        ck.burst_until = mono + ARGUS_CLOCKKEEP_BURST_MS * 1000000ull;
        ck.pings = 0;
        ck.best_rtt = UINT64_MAX;
        ck.burst_clock = argus_clocksync_now();
    }
    if (!ck.ping_out) {
        ck.ping_buf = ++ck.seq;
        MPI_Irecv(&ck.in, (int)sizeof ck.in, MPI_BYTE, ck.parent, TAG_KPONG, ck.comm,
                  &ck.preq[1]);
        ck.t1 = argus_clocksync_now();
        MPI_Isend(&ck.ping_buf, (int)sizeof ck.ping_buf, MPI_BYTE, ck.parent, TAG_KPING,
                  ck.comm, &ck.preq[0]);
        ck.ping_out = 1;
        return 1;
    }
    int done = 0;
    MPI_Testall(2, ck.preq, &done, MPI_STATUSES_IGNORE);
    if (!done) {
        if (mono > ck.burst_until) /* the parent is busy or gone: try again later; the
                                    * receive stays posted and takes the late pong */
            burst_end();
        return 0;
    }
    uint64_t t2 = argus_clocksync_now();
    ck.ping_out = 0;
    /* a pong that outlived an abandoned burst has a meaningless RTT: not a sample */
    if (ck.in.seq == ck.seq && ck.t1 >= ck.burst_clock && t2 - ck.t1 < ck.best_rtt) {
        ck.best_rtt = t2 - ck.t1;
        ck.best_t = t2;
        ck.best_total = argus_clock_offset_sample(ck.t1, ck.in.t_server, t2) +
                        ck.in.server_offset;
    }
    if (++ck.pings >= ARGUS_CLOCKKEEP_BURST)
        burst_end();
    return 1;
}

int argus_clockkeep_poll(void)
{
    if (!ck.on)
        return 0;
    int any = answer();
    any |= measure(argus_clock_monotonic_ns());
    ck.offset = (int64_t)llround(ck.level +
                                 ck.slope * ((double)argus_clocksync_now() - ck.tmean));
    return any;
}

int64_t argus_clockkeep_offset(void)
{
    return ck.offset;
}

uint64_t argus_clockkeep_bursts(void)
{
    return ck.bursts;
}

void argus_clockkeep_free(void)
{
    if (!ck.on)
        return;
    for (int i = 0; i < SLOTS; i++)
        if (ck.oreq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&ck.oreq[i]);
    for (int i = 0; i < 2; i++)
        if (ck.preq[i] != MPI_REQUEST_NULL) {
            if (i == 1)
                MPI_Cancel(&ck.preq[i]);
            MPI_Request_free(&ck.preq[i]);
        }
    memset(&ck, 0, sizeof ck);
}
