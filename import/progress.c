/* progress.c — the progress line of import/progress.h. */
#include "import/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EVERY_NS 100000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void argus_progress_init(struct argus_progress *p, int fd, int want)
{
    memset(p, 0, sizeof *p);
    p->fd = fd;
    p->on = want && fd >= 0 && isatty(fd);
}

static void human(uint64_t b, char *buf, size_t len)
{
    static const char *const u[] = {"B", "KB", "MB", "GB", "TB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1000 && i < 4) {
        v /= 1000;
        i++;
    }
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* One line: "argus-analyze: N files, X read, R ranks; TAIL" cut to 120 columns. */
static void line(struct argus_progress *p, const char *tail, int force)
{
    const uint64_t t = now_ns();
    if (!force && p->shown && t - p->last_ns < EVERY_NS)
        return;
    char b[32], out[160];
    human(p->bytes, b, sizeof b);
    int n = snprintf(out, sizeof out, "\r\033[Kargus-analyze: %zu file%s, %s read, %u rank%s; %s",
                     p->files, p->files == 1 ? "" : "s", b, p->ranks, p->ranks == 1 ? "" : "s",
                     tail);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof out ? (size_t)n : sizeof out - 1;
    if (len > 124) /* "\r\033[K" and 120 columns */
        len = 124;
    if (write(p->fd, out, len) == (ssize_t)len) {
        p->shown = 1;
        p->last_ns = t;
    }
}

void argus_progress_file(struct argus_progress *p, const char *name, uint64_t size)
{
    if (!p || !p->on)
        return;
    char tail[96], sz[32] = "";
    const size_t nl = strlen(name);
    const char *shown = nl > 40 ? name + nl - 37 : name;
    if (size)
        human(size, sz, sizeof sz);
    snprintf(tail, sizeof tail, "reading %s%s%s%s%s", nl > 40 ? "..." : "", shown,
             size ? " (" : "", sz, size ? ")" : "");
    line(p, tail, size >= 64u << 20); /* a large file: say so at once */
}

void argus_progress_done(struct argus_progress *p, uint64_t size, uint32_t ranks)
{
    if (!p || !p->on)
        return;
    p->bytes += size;
    p->files++;
    p->ranks = ranks > p->ranks ? ranks : p->ranks;
    line(p, "read", 0);
}

void argus_progress_stage(struct argus_progress *p, const char *what)
{
    if (p && p->on)
        line(p, what, 1);
}

void argus_progress_clear(struct argus_progress *p)
{
    if (!p || !p->on || !p->shown)
        return;
    if (write(p->fd, "\r\033[K", 4) == 4)
        p->shown = 0;
}
