/* clocksync.c — ping-pong offsets along the tree and collective-end refinement
 * (clocksync.h). Runs on the Argus thread (or the MPI_Init thread without
 * MPI_THREAD_MULTIPLE); only small messages, every wait bounded. */
#include "reduce/clocksync.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "reduce/testknob.h"

#define TAG_PING 0x4150
#define TAG_PONG 0x4151
#define TAG_OFF 0x4152
#define SPIN_NS 200000ull

static int64_t skew = INT64_MIN;
static double drift; /* test knob: extra ns per ns of wall time */

/* Test knobs (test builds only, testknob.h): rank r's clock reads r x CLOCK_SKEW_NS
 * ahead and runs r x CLOCK_DRIFT_PPM fast. */
static void skew_init(MPI_Comm comm)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    skew = (int64_t)argus_testknob(ARGUS_KNOB_CLOCK_SKEW_NS) * rank;
    drift = argus_testknob(ARGUS_KNOB_CLOCK_DRIFT_PPM) * 1e-6 * rank;
}

uint64_t argus_clocksync_now_at(uint64_t real_ns)
{
    int64_t k = skew == INT64_MIN ? 0 : skew;
    if (drift != 0)
        k += (int64_t)llround((double)real_ns * drift);
    return real_ns + (uint64_t)k;
}

static uint64_t now_ns(void)
{
    return argus_clocksync_now_at(argus_clock_realtime_ns());
}

uint64_t argus_clocksync_now(void)
{
    return now_ns();
}

int64_t argus_clock_offset_sample(uint64_t t_send, uint64_t t_server, uint64_t t_recv)
{
    int64_t rtt = (int64_t)(t_recv - t_send);
    return (int64_t)(t_server - t_send) - rtt / 2;
}

int argus_clocksync_run(MPI_Comm comm, int parent, const int *kids, int nkids, int rounds,
                        long timeout_ms, int64_t *off_to_root)
{
    uint64_t until = argus_clock_monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;
    int round = 0, ping_out = 0, have_total = parent < 0, sent_down = 0, served = 0;
    int64_t best_off = 0, parent_total = 0;
    uint64_t best_rtt = UINT64_MAX, t1 = 0, t_srv = 0, t1_mono = 0, last_serve = 0;
    int64_t min_up = INT64_MAX, max_lo = INT64_MIN;
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, oreq = MPI_REQUEST_NULL;
    uint64_t ping_buf = 0;

    skew_init(comm);
    if (!have_total)
        MPI_Irecv(&parent_total, 1, MPI_INT64_T, parent, TAG_OFF, comm, &oreq);
    for (;;) {
        int progressed = 0;
        /* serve children's pings */
        int flag = 0;
        MPI_Status st;
        if (served < nkids * rounds &&
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_PING, comm, &flag, &st) == MPI_SUCCESS && flag) {
            uint64_t in;
            MPI_Recv(&in, 1, MPI_UINT64_T, st.MPI_SOURCE, TAG_PING, comm, MPI_STATUS_IGNORE);
            uint64_t ts = now_ns();
            MPI_Send(&ts, 1, MPI_UINT64_T, st.MPI_SOURCE, TAG_PONG, comm);
            served++;
            progressed = 1;
            last_serve = argus_clock_monotonic_ns();
        }
        /* own rounds with the parent */
        if (parent >= 0 && round < rounds) {
            if (!ping_out) {
                t1 = now_ns();
                t1_mono = argus_clock_monotonic_ns();
                ping_buf = t1;
                MPI_Irecv(&t_srv, 1, MPI_UINT64_T, parent, TAG_PONG, comm, &rq[1]);
                MPI_Isend(&ping_buf, 1, MPI_UINT64_T, parent, TAG_PING, comm, &rq[0]);
                ping_out = 1;
            }
            int done = 0;
            MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
            if (done) {
                uint64_t t2 = now_ns();
                if (t2 - t1 < best_rtt) {
                    best_rtt = t2 - t1;
                    best_off = argus_clock_offset_sample(t1, t_srv, t2);
                }
                /* every round bounds the offset: t_srv - t2 <= offset <= t_srv - t1 */
                int64_t up = (int64_t)(t_srv - t1), lo = (int64_t)(t_srv - t2);
                min_up = up < min_up ? up : min_up;
                max_lo = lo > max_lo ? lo : max_lo;
                ping_out = 0;
                round++;
                progressed = 1;
            }
        }
        if (!have_total) {
            int done = 0;
            MPI_Test(&oreq, &done, MPI_STATUS_IGNORE);
            have_total = done;
        }
        int own_done = parent < 0 || round >= rounds;
        if (own_done && have_total && !sent_down) {
            /* the middle of what every round allows (each round's own midpoint is off by
             * half its delay asymmetry); the minimum-RTT one if they disagree */
            if (parent >= 0 && max_lo <= min_up)
                best_off = max_lo + (min_up - max_lo) / 2;
            *off_to_root = parent < 0 ? 0 : best_off + parent_total;
            for (int i = 0; i < nkids; i++)
                MPI_Send(off_to_root, 1, MPI_INT64_T, kids[i], TAG_OFF, comm);
            sent_down = 1;
        }
        if (sent_down && served >= nkids * rounds)
            return 0;
        if (argus_clock_monotonic_ns() > until)
            break;
        /* no sleep while a pong or a child's next ping is due within SPIN_NS: a sleep
         * would land on one leg of every round alike */
        const uint64_t mono = argus_clock_monotonic_ns();
        if (!progressed && !(ping_out && mono < t1_mono + SPIN_NS) &&
            !(served < nkids * rounds && mono < last_serve + SPIN_NS)) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
    }
    /* timed out: give up the outstanding requests, tell the children what we have */
    for (int i = 0; i < 2; i++)
        if (rq[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&rq[i]);
            MPI_Request_free(&rq[i]);
        }
    if (oreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&oreq);
        MPI_Request_free(&oreq);
    }
    if (max_lo <= min_up)
        best_off = max_lo + (min_up - max_lo) / 2;
    *off_to_root = best_rtt != UINT64_MAX ? best_off : 0;
    if (!sent_down)
        for (int i = 0; i < nkids; i++)
            MPI_Send(off_to_root, 1, MPI_INT64_T, kids[i], TAG_OFF, comm);
    return -ETIMEDOUT;
}

void argus_clock_refiner_init(struct argus_clock_refiner *cr, int64_t start_offset,
                              double alpha, double beta)
{
    memset(cr, 0, sizeof *cr);
    cr->offset_ns = (double)start_offset;
    cr->alpha = alpha;
    cr->beta = beta;
}

double argus_clock_refiner_at(const struct argus_clock_refiner *cr, uint64_t t_ns)
{
    if (cr->n == 0)
        return cr->offset_ns;
    return cr->offset_ns + cr->rate * ((double)t_ns - (double)cr->t_ns);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double argus_clock_refine(struct argus_clock_refiner *cr, const uint64_t *ends_ref,
                          const uint64_t *ends_local, size_t n, int64_t *scratch)
{
    if (n == 0)
        return cr->offset_ns;
    uint64_t t = ends_local[n / 2];
    for (size_t i = 0; i < n; i++)
        scratch[i] = (int64_t)(ends_ref[i] - ends_local[i]);
    qsort(scratch, n, sizeof *scratch, cmp_i64);
    return argus_clock_refiner_update(cr, t, (double)scratch[n / 2]);
}

double argus_clock_refiner_update(struct argus_clock_refiner *cr, uint64_t t, double meas)
{
    if (cr->n == 0) {
        cr->offset_ns = meas;
    } else {
        double dt = (double)t - (double)cr->t_ns;
        double pred = cr->offset_ns + cr->rate * dt;
        double resid = meas - pred;
        if (cr->n == 1 && dt > 0) {          /* second point: the first slope */
            cr->rate = (meas - cr->offset_ns) / dt;
            cr->offset_ns = meas;
        } else {
            cr->offset_ns = pred + cr->alpha * resid;
            if (dt > 0)
                cr->rate += cr->beta * cr->alpha * resid / dt;
        }
    }
    cr->t_ns = t;
    cr->n++;
    return cr->offset_ns;
}
