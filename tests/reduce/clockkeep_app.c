/* clockkeep_app.c — driver for t_clockkeep.sh: every rank's clock is skewed and drifts
 * (ARGUS_TEST_CLOCK_SKEW_NS, ARGUS_TEST_CLOCK_DRIFT_PPM: rank r by r times each), the
 * ranks measure their offsets once (clocksync.h) and then keep them current for a few
 * seconds (clockkeep.h, re-measuring every 300 ms over a binary tree). At the end each
 * rank compares both estimates with the truth it can compute from the knobs; rank 0
 * prints the errors and the width of the band the last fit's pings allowed, and fails
 * unless the kept offset stays within 2 ms (ranks sharing 2 cores with other tests) while
 * the start-up one has drifted away. Usage: mpirun -np N clockkeep_app SECONDS */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "reduce/clockkeep.h"
#include "reduce/clocksync.h"

int main(int argc, char **argv)
{
    int rank, size, kids[2], nk = 0, bad = 0;
    double secs = argc > 1 ? atof(argv[1]) : 6.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int c = 2 * rank + 1; c <= 2 * rank + 2 && c < size; c++)
        kids[nk++] = c;
    int parent = rank ? (rank - 1) / 2 : -1;
    int64_t start = 0;
    if (argus_clocksync_run(MPI_COMM_WORLD, parent, kids, nk, 16, 10000, &start) != 0)
        fprintf(stderr, "rank %d: start-up sync timed out\n", rank);
    argus_clockkeep_init(MPI_COMM_WORLD, parent, start, 300);
    uint64_t until = argus_clock_monotonic_ns() + (uint64_t)(secs * 1e9);
    while (argus_clock_monotonic_ns() < until) {
        if (!argus_clockkeep_poll()) {
            struct timespec ts = {0, 500000};
            nanosleep(&ts, NULL);
        }
    }
    argus_clockkeep_poll();
    uint64_t real = argus_clock_realtime_ns();
    double truth = (double)real - (double)argus_clocksync_now_at(real); /* rank 0: none */
    double kept = (double)argus_clockkeep_offset();
    double err[4] = {kept - truth, (double)start - truth, (double)argus_clockkeep_bursts(),
                     (double)argus_clockkeep_band()};
    double all[4 * 64];
    MPI_Gather(err, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r < size && r < 64; r++) {
            double ke = all[4 * r] < 0 ? -all[4 * r] : all[4 * r];
            double se = all[4 * r + 1] < 0 ? -all[4 * r + 1] : all[4 * r + 1];
            printf("rank %d: kept offset error %.1f us, start-up only %.1f us, %d bursts, "
                   "band %.1f us\n", r, ke / 1e3, se / 1e3, (int)all[4 * r + 2],
                   all[4 * r + 3] / 1e3);
            if (ke > 2e6 || all[4 * r + 2] < 5)
                bad = 1;
            if (r == size - 1 && se < 2 * ke)
                bad = 1; /* the drift must have mattered for the test to mean anything */
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    argus_clockkeep_free();
    MPI_Finalize();
    return bad;
}
