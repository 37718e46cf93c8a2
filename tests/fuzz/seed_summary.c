/* seed_summary.c — writes seed inputs for fuzz_summary (tests/fuzz/run.sh builds it):
 * valid wire records (a summary with kernel modes, a name, a rank info) encoded by
 * common/wire.c, so the fuzzer starts past the magic and the CRC. Not installed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

static int put(const char *dir, const char *name, const uint8_t *b, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) {
        if (f)
            fclose(f);
        return 1;
    }
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    static struct argus_step_summary s;
    static uint8_t buf[1 << 16];
    struct argus_rank_info ri;
    long a, b, c;

    if (argc != 2) {
        fprintf(stderr, "usage: seed_summary DIR\n");
        return 2;
    }
    s.step = 7;
    s.rank = 1;
    s.start_ns = 1000;
    s.end_ns = 90000;
    s.compute_ns = 50000;
    s.kernel_count = 12;
    s.n_kmodes = 3;
    for (uint32_t i = 0; i < s.n_kmodes; i++) {
        s.kmodes[i].name_hash = 0x1234 + i;
        s.kmodes[i].mode = (uint8_t)i;
        s.kmodes[i].count = 4;
        s.kmodes[i].sum_ns = 4000;
        s.kmodes[i].min_ns = 900;
        s.kmodes[i].max_ns = 1100;
    }
    memset(&ri, 0, sizeof ri);
    ri.rank = 1;
    ri.world_size = 2;
    snprintf(ri.host, sizeof ri.host, "node1");
    /* with a placement (tracer/placement.h), so the fuzzer starts inside that block too */
    ri.place.flags = ARGUS_PLACE_KNOWN | ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS;
    ri.place.gpu_numa = 1;
    ri.place.cpu_numa = 0;
    snprintf(ri.place.gpu_bus, sizeof ri.place.gpu_bus, "0000:b1:00.0");
    snprintf(ri.place.nic, sizeof ri.place.nic, "mlx5_1");
    snprintf(ri.place.cpuset, sizeof ri.place.cpuset, "0-3");
    a = argus_summary_encode(&s, buf, sizeof buf);
    if (a <= 0)
        return 1;
    b = argus_name_encode(0x1234, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", buf + a,
                          sizeof buf - (size_t)a);
    if (b <= 0)
        return 1;
    c = argus_rankinfo_encode(&ri, buf + a + b, sizeof buf - (size_t)(a + b));
    if (c <= 0)
        return 1;
    return put(argv[1], "seed-summary", buf, (size_t)a) ||
           put(argv[1], "seed-records", buf, (size_t)(a + b + c));
}
