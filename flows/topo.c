/* topo.c — the topology CSV table (flows/topo.h). Allocates only in add. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/grow.h"
#include "flows/topo.h"

void argus_topo_init(struct argus_topo *t) { memset(t, 0, sizeof *t); }

void argus_topo_free(struct argus_topo *t)
{
    free(t->e);
    argus_topo_init(t);
}

static const char *const tcols[] = {"ip", "host", "nic", "gpu", "leaf", "port"};

int argus_topo_add_line(struct argus_topo *t, const char *line, size_t len, char *errbuf,
                        size_t errlen)
{
    struct argus_topo_entry e;
    const char *f[8];
    size_t fl[8], start = 0;
    unsigned nf = 0;

    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#' || (len >= 3 && memcmp(line, "ip,", 3) == 0))
        return 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || line[i] == ',') {
            if (nf == 8)
                break;
            f[nf] = line + start, fl[nf] = i - start, nf++;
            start = i + 1;
        }
    if (nf != 6 && nf != 7) {
        argus_seterr(errbuf, errlen, "%s6 or 7 columns needed (ip,host,nic,gpu,leaf,port"
                     "[,rank])", nf > 7 ? "more than " : "");
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    char *dst[6] = {NULL, e.host, e.nic, NULL, e.leaf, e.port};
    for (unsigned i = 0; i < 6; i++) {
        if (fl[i] >= ARGUS_TOPO_NAME || (fl[i] == 0 && i != 3 && i != 2)) {
            argus_seterr(errbuf, errlen, "%s: %s", tcols[i],
                         fl[i] ? "longer than 63 bytes" : "empty");
            return -EINVAL;
        }
        for (size_t j = 0; j < fl[i]; j++)
            if ((unsigned char)f[i][j] < 0x20 || f[i][j] == '"') {
                argus_seterr(errbuf, errlen, "%s: control character or quote", tcols[i]);
                return -EINVAL;
            }
        if (dst[i]) {
            memcpy(dst[i], f[i], fl[i]);
            dst[i][fl[i]] = '\0';
        }
    }
    char ip[ARGUS_TOPO_NAME];
    memcpy(ip, f[0], fl[0]);
    ip[fl[0]] = '\0';
    if (argus_flow_addr_parse(&e.ip, ip) != 0) {
        argus_seterr(errbuf, errlen, "ip: \"%s\" is not an IP address", ip);
        return -EINVAL;
    }
    e.gpu = -1;
    if (fl[3]) {
        long g = 0;
        for (size_t j = 0; j < fl[3]; j++) {
            if (f[3][j] < '0' || f[3][j] > '9' || g > 1000000) {
                argus_seterr(errbuf, errlen, "gpu: \"%.*s\" is not an integer in [0, 1000000]",
                             (int)fl[3], f[3]);
                return -EINVAL;
            }
            g = g * 10 + (f[3][j] - '0');
        }
        e.gpu = (int)g;
    }
    e.rank = -1;
    if (nf == 7 && fl[6]) {
        long r = 0;
        for (size_t j = 0; j < fl[6]; j++) {
            if (f[6][j] < '0' || f[6][j] > '9' || r > 10000000) {
                argus_seterr(errbuf, errlen, "rank: \"%.*s\" is not an integer in [0, 10^7]",
                             (int)(fl[6] < 40 ? fl[6] : 40), f[6]);
                return -EINVAL;
            }
            r = r * 10 + (f[6][j] - '0');
        }
        e.rank = (int)r;
    }
    if (argus_topo_find(t, &e.ip)) {
        argus_seterr(errbuf, errlen, "ip %s listed twice", ip);
        return -EEXIST;
    }
    if (argus_grow(&t->e, &t->cap, t->n + 1, sizeof *t->e, 64) != 0)
        return -ENOMEM;
    t->e[t->n++] = e;
    return 1;
}

const struct argus_topo_entry *argus_topo_find(const struct argus_topo *t,
                                               const struct argus_flow_addr *ip)
{
    for (size_t i = 0; i < t->n; i++)
        if (memcmp(t->e[i].ip.b, ip->b, 16) == 0)
            return &t->e[i];
    return NULL;
}
