/* inputs.c — argus-flows' readers (flows/inputs.h): files of export packets (raw or pcap),
 * the flow CSV, the topology CSV, and the UDP collector on loopback. Prints one line per
 * problem (bounded per input); never exits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "flows/flowcsv.h"
#include "flows/inputs.h"

#define PROG "argus-flows"

static struct {
    volatile sig_atomic_t stop;
} collector;

struct say {
    const char *what;
    unsigned lines;
    uint64_t more;
};

static void say(struct say *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct say *s, const char *fmt, ...)
{
    va_list ap;
    if (s->lines >= ARGUS_FLOWS_MAX_LINES) {
        s->more++;
        return;
    }
    s->lines++;
    fprintf(stderr, PROG ": %s: ", s->what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void say_end(struct say *s)
{
    if (s->more)
        fprintf(stderr, PROG ": %s: %" PRIu64 " more problems (counted, not shown)\n", s->what,
                s->more);
}

/* Whole file mapped read-only; *len 0 for an empty file (map NULL). */
static const uint8_t *map_file(const char *path, size_t *len, struct say *s)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    void *m;

    if (fd < 0) {
        say(s, "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        say(s, "not a regular file");
        close(fd);
        return NULL;
    }
    *len = (size_t)st.st_size;
    if (*len == 0) {
        close(fd);
        say(s, "empty file");
        return NULL;
    }
    m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        say(s, "mmap: %s", strerror(errno));
        return NULL;
    }
    return m;
}

static int decode_one(struct fl_reader *r, uint64_t exporter, const uint8_t *p, size_t n,
                      struct say *s, const char *where, uint64_t at)
{
    char err[256];
    int rc = argus_flow_decode(r->dec, exporter, p, n, r->sink, r->ctx, err, sizeof err);
    if (rc != 0 && err[0])
        say(s, "%s %" PRIu64 ": %s", where, at, err);
    return rc < 0 && rc != -EINVAL ? rc : 0;
}

static int read_raw(struct fl_reader *r, const uint8_t *p, size_t n, struct say *s)
{
    size_t off = 0;
    while (off < n) {
        size_t len = argus_flow_packet_len(p + off, n - off);
        if (len == 0) {
            say(s, "packet at byte %zu: no NetFlow v9 or IPFIX header that fits (%zu bytes "
                "left); the rest of the file is skipped", off, n - off);
            r->in->packets_bad_framing++;
            return 0;
        }
        if (decode_one(r, r->file_index << 32, p + off, len, s, "packet at byte", off) < 0)
            return -1;
        off += len;
    }
    return 0;
}

static uint32_t rd32(const uint8_t *p, int swap)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return swap ? __builtin_bswap32(v) : v;
}

/* classic pcap: Ethernet (VLAN tags too), raw IP, Linux cooked v1/v2, BSD loopback */
static int read_pcap(struct fl_reader *r, const uint8_t *p, size_t n, struct say *s)
{
    if (n < 24) {
        say(s, "pcap header truncated");
        return -1;
    }
    uint32_t magic = rd32(p, 0);
    int swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
    uint32_t link = rd32(p + 20, swap);
    size_t off = 24;
    uint64_t frame = 0;
    while (n - off >= 16) {
        uint32_t incl = rd32(p + off + 8, swap);
        frame++;
        if (incl > n - off - 16) {
            say(s, "frame %" PRIu64 " at byte %zu: %u bytes, past the end of the file", frame,
                off, incl);
            r->in->packets_bad_framing++;
            return 0;
        }
        const uint8_t *f = p + off + 16;
        size_t fl = incl, l2;
        off += 16 + (size_t)incl;
        uint16_t et = 0x0800;
        if (link == 1) {
            if (fl < 14)
                continue;
            et = (uint16_t)(f[12] << 8 | f[13]), l2 = 14;
            while ((et == 0x8100 || et == 0x88a8) && fl >= l2 + 4)
                et = (uint16_t)(f[l2 + 2] << 8 | f[l2 + 3]), l2 += 4;
        } else if (link == 113) {
            if (fl < 16)
                continue;
            et = (uint16_t)(f[14] << 8 | f[15]), l2 = 16;
        } else if (link == 276) {
            if (fl < 20)
                continue;
            et = (uint16_t)(f[0] << 8 | f[1]), l2 = 20;
        } else if (link == 0) {
            l2 = 4;
            et = fl > 4 && (f[4] >> 4) == 6 ? 0x86dd : 0x0800;
        } else if (link == 101 || link == 12 || link == 228 || link == 229) {
            l2 = 0;
            et = fl && (f[0] >> 4) == 6 ? 0x86dd : 0x0800;
        } else {
            say(s, "pcap link type %u not read (Ethernet, raw IP, Linux cooked, loopback)",
                link);
            return -1;
        }
        if (fl < l2)
            continue;
        f += l2, fl -= l2;
        uint64_t exporter;
        size_t l3;
        if (et == 0x0800 && fl >= 20 && (f[0] >> 4) == 4 && f[9] == 17) {
            l3 = (size_t)(f[0] & 15) * 4;
            uint32_t a;
            memcpy(&a, f + 12, 4);
            exporter = a;
        } else if (et == 0x86dd && fl >= 40 && (f[0] >> 4) == 6 && f[6] == 17) {
            l3 = 40;
            uint64_t a, b;
            memcpy(&a, f + 8, 8);
            memcpy(&b, f + 16, 8);
            exporter = argus_mix64(a ^ argus_mix64(b));
        } else
            continue;  /* not UDP (fragments and the rest): not export traffic */
        if (l3 < 20 || fl < l3 + 8)
            continue;
        const uint8_t *u = f + l3;
        size_t ul = (size_t)(u[4] << 8 | u[5]);
        if (ul < 8 || ul > fl - l3)
            ul = fl - l3;
        exporter = argus_mix64(exporter ^ ((uint64_t)(u[0] << 8 | u[1]) << 48) ^
                               (r->file_index << 32));
        if (decode_one(r, exporter, u + 8, ul - 8, s, "frame", frame) < 0)
            return -1;
    }
    return 0;
}

static int read_csv(struct fl_reader *r, const uint8_t *p, size_t n, struct say *s)
{
    size_t off = 0, line = 0;
    char err[256];
    while (off < n) {
        const uint8_t *nl = memchr(p + off, '\n', n - off);
        size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
        struct argus_flow_rec rec;
        line++;
        int rc = argus_flow_csv_line((const char *)p + off, len, &rec, err, sizeof err);
        if (rc < 0) {
            say(s, "line %zu: %s", line, err);
            r->in->csv_lines_bad++;
        } else if (rc > 0 && (rc = r->sink(r->ctx, &rec)) < 0)
            return -1;
        off += len + 1;
    }
    return 0;
}

int fl_read_file(struct fl_reader *r, const char *path)
{
    struct say s = {path, 0, 0};
    size_t n = 0;
    const uint8_t *p = map_file(path, &n, &s);
    int rc;

    r->in->files++;
    r->file_index++;
    if (!p) {
        r->in->files_skipped++;
        return -1;
    }
    uint32_t m = n >= 4 ? rd32(p, 0) : 0;
    if (m == 0xa1b2c3d4u || m == 0xd4c3b2a1u || m == 0xa1b23c4du || m == 0x4d3cb2a1u)
        rc = read_pcap(r, p, n, &s);
    else if (m == 0x0a0d0d0au) {
        say(&s, "pcapng is not read; convert it with editcap -F pcap");
        rc = -1;
    } else if (n >= 2 && p[0] == 0 && (p[1] == 9 || p[1] == 10))
        rc = read_raw(r, p, n, &s);
    else
        rc = read_csv(r, p, n, &s);
    say_end(&s);
    munmap((void *)p, n);
    if (rc)
        r->in->files_skipped++;
    return rc;
}

int fl_read_topology(struct argus_topo *t, const char *path)
{
    struct say s = {path, 0, 0};
    size_t n = 0, off = 0, line = 0;
    const uint8_t *p = map_file(path, &n, &s);
    char err[256];

    if (!p)
        return -1;
    while (off < n) {
        const uint8_t *nl = memchr(p + off, '\n', n - off);
        size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
        line++;
        int rc = argus_topo_add_line(t, (const char *)p + off, len, err, sizeof err);
        if (rc == -ENOMEM) {
            say(&s, "out of memory");
            munmap((void *)p, n);
            return -1;
        }
        if (rc < 0)
            say(&s, "line %zu: %s", line, err);
        off += len + 1;
    }
    say_end(&s);
    munmap((void *)p, n);
    return 0;
}

int fl_read_ports(struct argus_ports *ps, const char *path, struct argus_flows_inputs *in)
{
    struct say s = {path, 0, 0};
    size_t n = 0, off = 0, line = 0;
    const uint8_t *p = map_file(path, &n, &s);
    char err[256];

    if (!p)
        return -1;
    while (off < n) {
        const uint8_t *nl = memchr(p + off, '\n', n - off);
        size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
        line++;
        int rc = fl_ports_add_line(ps, (const char *)p + off, len, err, sizeof err);
        if (rc == -ENOMEM) {
            say(&s, "out of memory");
            munmap((void *)p, n);
            return -1;
        }
        if (rc < 0) {
            say(&s, "line %zu: %s", line, err);
            in->port_lines_bad++;
        }
        off += len + 1;
    }
    if (ps->dropped)
        say(&s, "%" PRIu64 " samples past the table's %zu dropped", ps->dropped,
            ps->max_samples);
    say_end(&s);
    munmap((void *)p, n);
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    collector.stop = 1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int fl_collect(struct fl_reader *r, unsigned port, uint64_t duration_ms, uint64_t npackets)
{
    struct say s = {"udp", 0, 0};
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    static uint8_t buf[65536];
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = -1;

    if (fd < 0) {
        say(&s, "socket: %s", strerror(errno));
        return -1;
    }
    int big = 8 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        say(&s, "bind 127.0.0.1:%u: %s", port, strerror(errno));
        goto out;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, PROG ": listening on 127.0.0.1:%u\n", ntohs(a.sin_port));
    uint64_t end = duration_ms ? now_ms() + duration_ms : 0;
    while (!collector.stop && (!npackets || r->in->udp_datagrams < npackets)) {
        int wait = 200;
        if (end) {
            uint64_t t = now_ms();
            if (t >= end)
                break;
            wait = end - t < 200 ? (int)(end - t) : 200;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, wait);
        if (pr < 0 && errno != EINTR) {
            say(&s, "poll: %s", strerror(errno));
            goto out;
        }
        if (pr <= 0)
            continue;
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t k = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (k < 0)
            continue;
        r->in->udp_datagrams++;
        uint64_t ex = (uint64_t)ntohl(from.sin_addr.s_addr) << 16 | ntohs(from.sin_port);
        char where[64];
        snprintf(where, sizeof where, "datagram from %s:%u, number", inet_ntoa(from.sin_addr),
                 ntohs(from.sin_port));
        if (decode_one(r, ex, buf, (size_t)k, &s, where, r->in->udp_datagrams) < 0)
            goto out;
    }
    rc = 0;
out:
    say_end(&s);
    close(fd);
    return rc;
}
