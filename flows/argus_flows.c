/* argus_flows.c — `argus-flows [options] [FILE...]`: jobs, parallel groups, step timelines,
 * slow steps and degraded links from network flow records (flows/flows.h), for jobs Argus
 * was not injected into. Inputs: files of IPFIX / NetFlow v9 export packets (back to back,
 * or a pcap), flow CSVs, the UDP collector on loopback (--listen), a topology CSV (-t),
 * switch port counters (-P), an in-band Argus run to compare with (-A).
 * Writes flows.json, timeline.csv and flows.md (and with --records every record read as
 * records.csv) into -o's directory, else a new ./argus-flows(.N).
 *
 * Bad inputs: one line on stderr per bad packet, line or file (flows/inputs.h), the rest is
 * used. Exit 0 when something was analysed, 1 when nothing could be, 2 on usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/outdir.h"
#include "flows/flowcsv.h"
#include "flows/flows.h"
#include "flows/inputs.h"
#include "flows/xcheck.h"

#define PROG "argus-flows"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [-o OUTDIR] [-t TOPOLOGY] [--listen PORT [--duration S]\n"
            "                   [--packets N]] [-P PORTS]... [-w S] [-A REPORT] [FILE...]\n"
            "Find training jobs, their data- and pipeline-parallel groups, each GPU's step\n"
            "timeline, slow steps and degraded links in network flow records. A FILE holds\n"
            "IPFIX or NetFlow v9 export packets (back to back, or a pcap) or flow CSV lines\n"
            "(t_start_ns,t_end_ns,src_ip,dst_ip,proto,src_port,dst_port,bytes,packets\n"
            "[,obs_point,in_if,out_if]); the format is told by the first bytes.\n"
            "Writes flows.json, timeline.csv and flows.md into OUTDIR (default: a new\n"
            "./argus-flows, .1, .2, ... when taken) and prints a summary.\n"
            "  -o, --outdir DIR      write there (an existing directory of yours is used)\n"
            "  -t, --topology CSV    ip,host,nic,gpu,leaf,port[,rank] per NIC: hosts merge\n"
            "                        jobs, links are judged, rank maps --argus-report's\n"
            "  -P, --ports CSV       switch port counters, time,device,port,in_octets,\n"
            "                        out_octets: each port's utilisation and peak rate\n"
            "                        against its tier (NIC-facing or not); repeated\n"
            "  -l, --listen PORT     collect export packets on UDP 127.0.0.1:PORT (0: a free\n"
            "                        port, said on stderr) before reading the FILEs\n"
            "  -d, --duration S      stop collecting after S seconds (default 10)\n"
            "  -n, --packets N       stop collecting after N datagrams\n"
            "  -p, --port N          keep UDP records to port N only (default 4791, RoCEv2;\n"
            "                        0: every record)\n"
            "  -g, --merge-gap US    records of one direction of a pair closer than US\n"
            "                        microseconds are one flowlet (default 100)\n"
            "  -k, --k-slow K        slow step: K robust sigmas above the median (default 3)\n"
            "  -K, --k-link K        degraded link: K robust sigmas below its tier (default 3)\n"
            "  -M, --max-records N   records kept in memory (default 2000000; more are\n"
            "                        counted as dropped)\n"
            "  -A, --argus-report P  compare with an in-band Argus run of the job (its\n"
            "                        report.json, or its directory with steps.csv): the\n"
            "                        topology's 7th column maps ranks to NICs\n"
            "  -w, --window S        analyse the last S seconds of flow time only: older\n"
            "                        records expire from memory (counted) instead of newer\n"
            "                        ones being dropped\n"
            "  -r, --records         also write every record read as records.csv\n"
            "  -N, --nodes H1,H2,... the hosts (topology names) of one job; repeated, one\n"
            "                        per job: no job spans two lists\n"
            "  -h, --help            this help\n"
            "  -V, --version         print the version\n"
            "Exit status: 0 analysed (some inputs may have been skipped), 1 nothing could be\n"
            "analysed, 2 usage error.\n");
}

static int num_arg(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, PROG ": %s %s: not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* every record read goes to records.csv (--records), then to the analysis */
struct tee {
    struct argus_flows *f;
    int fd, failed;
    char buf[1 << 16];
    size_t n;
};

static int tee_flush(struct tee *t)
{
    if (t->n && !t->failed && argus_write_all(t->fd, t->buf, t->n) != 0)
        t->failed = 1;
    t->n = 0;
    return t->failed ? -EIO : 0;
}

static int tee_sink(void *ctx, const struct argus_flow_rec *r)
{
    struct tee *t = ctx;
    if (t->fd >= 0) {
        if (sizeof t->buf - t->n < 256)
            tee_flush(t);
        t->n += argus_flow_csv_format(r, t->buf + t->n, sizeof t->buf - t->n);
    }
    return argus_flows_add(t->f, r);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"outdir", required_argument, NULL, 'o'},   {"topology", required_argument, NULL, 't'},
        {"listen", required_argument, NULL, 'l'},   {"duration", required_argument, NULL, 'd'},
        {"packets", required_argument, NULL, 'n'},  {"port", required_argument, NULL, 'p'},
        {"merge-gap", required_argument, NULL, 'g'}, {"k-slow", required_argument, NULL, 'k'},
        {"k-link", required_argument, NULL, 'K'},   {"max-records", required_argument, NULL, 'M'},
        {"records", no_argument, NULL, 'r'},        {"nodes", required_argument, NULL, 'N'},
        {"ports", required_argument, NULL, 'P'},    {"window", required_argument, NULL, 'w'},
        {"argus-report", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},        {NULL, 0, NULL, 0}};
    struct argus_flows_opts o;
    struct argus_flows_inputs in;
    struct argus_outdir od;
    struct argus_topo topo;
    struct argus_flows *f = NULL;
    struct argus_flow_decoder *dec = NULL;
    struct tee *tee = NULL;
    const char *outdir = NULL, *topo_path = NULL, *xpath = NULL;
    struct fl_xcheck xc;
    memset(&xc, 0, sizeof xc);
    double listen = -1, duration = 10, packets = 0, v;
    int records = 0, c, rc = 1;
    char err[512];

    argus_flows_opts_default(&o);
    const char *nodes[64], *ports[16];
    int nnodes = 0, nports = 0;
    struct argus_ports ps;
    fl_ports_init(&ps, 8u << 20);
    while ((c = getopt_long(argc, argv, "o:t:l:d:n:p:g:k:K:M:rN:P:w:A:hV", lo, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 't': topo_path = optarg; break;
        case 'l': if (num_arg("--listen", optarg, 0, 65535, &listen)) return 2; break;
        case 'd': if (num_arg("--duration", optarg, 0.001, 86400, &duration)) return 2; break;
        case 'n': if (num_arg("--packets", optarg, 1, 1e12, &packets)) return 2; break;
        case 'p': if (num_arg("--port", optarg, 0, 65535, &v)) return 2;
                  o.port = (uint16_t)v; break;
        case 'g': if (num_arg("--merge-gap", optarg, 0, 1e9, &v)) return 2;
                  o.merge_gap_ns = (uint64_t)(v * 1000); break;
        case 'k': if (num_arg("--k-slow", optarg, 0.1, 100, &o.k_slow)) return 2; break;
        case 'K': if (num_arg("--k-link", optarg, 0.1, 100, &o.k_link)) return 2; break;
        case 'M': if (num_arg("--max-records", optarg, 1, 4294967296.0, &v)) return 2;
                  o.max_records = (size_t)v; break;
        case 'r': records = 1; break;
        case 'A': xpath = optarg; break;
        case 'w': if (num_arg("--window", optarg, 0.001, 1e7, &v)) return 2;
                  o.window_ns = (uint64_t)(v * 1e9); break;
        case 'N':
            if (nnodes == 64) {
                fprintf(stderr, PROG ": --nodes: at most 64 lists\n");
                return 2;
            }
            nodes[nnodes++] = optarg;
            break;
        case 'P':
            if (nports == 16) {
                fprintf(stderr, PROG ": --ports: at most 16 files\n");
                return 2;
            }
            ports[nports++] = optarg;
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf(PROG " (Argus) %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind == argc && listen < 0 && nports == 0) {
        usage(stderr);
        return 2;
    }
    memset(&in, 0, sizeof in);
    argus_topo_init(&topo);
    argus_outdir_init(&od);
    if (argus_flows_create(&o, &f, err, sizeof err) != 0 ||
        argus_flow_decoder_create(&dec) != 0 || !(tee = malloc(sizeof *tee))) {
        fprintf(stderr, PROG ": %s\n", f ? "out of memory" : err);
        goto out;
    }
    for (int i = 0; i < nnodes; i++)
        if (argus_flows_add_nodes(f, nodes[i], err, sizeof err) != 0) {
            fprintf(stderr, PROG ": --nodes: %s\n", err);
            rc = 2;
            goto out;
        }
    int orc = outdir ? argus_outdir_adopt(&od, outdir, err, sizeof err)
                     : argus_outdir_fresh(&od, ".", "argus-flows", err, sizeof err);
    if (orc != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto out;
    }
    tee->f = f, tee->fd = -1, tee->failed = 0, tee->n = 0;
    if (records &&
        (tee->fd = argus_file_partial_open(od.fd, od.path, "records.csv", err, sizeof err)) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto out;
    }
    if (tee->fd >= 0) {
        static const char hdr[] = "t_start_ns,t_end_ns,src_ip,dst_ip,proto,src_port,dst_port,"
                                  "bytes,packets,obs_point,in_if,out_if\n";
        memcpy(tee->buf, hdr, sizeof hdr - 1);
        tee->n = sizeof hdr - 1;
    }
    if (topo_path) {
        if (fl_read_topology(&topo, topo_path) != 0)
            goto out;
        argus_flows_set_topology(f, &topo);
    }
    for (int i = 0; i < nports; i++)
        if (fl_read_ports(&ps, ports[i], &in) != 0)
            goto out;
    if (xpath) {
        if (fl_xcheck_load(&xc, xpath, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": --argus-report: %s\n", err);
            goto out;
        }
        argus_flows_set_xcheck(f, &xc);
    }
    if (nports)
        argus_flows_set_ports(f, &ps);
    struct fl_reader rd = {dec, tee_sink, tee, &in, 0};
    if (listen >= 0 && fl_collect(&rd, (unsigned)listen, (uint64_t)(duration * 1000),
                                  (uint64_t)packets) != 0)
        goto out;
    for (int i = optind; i < argc; i++)
        (void)fl_read_file(&rd, argv[i]);
    const struct argus_flow_decode_stats *ds = argus_flow_decoder_stats(dec);
    in.decode = ds->packets ? ds : NULL;
    if (tee->fd >= 0) {
        int ok = tee_flush(tee) == 0;
        int crc = argus_file_partial_commit(od.fd, od.path, "records.csv", tee->fd, ok, err,
                                            sizeof err);
        tee->fd = -1;
        if (!ok || crc) {
            fprintf(stderr, PROG ": %s\n", crc ? err : "records.csv: write failed");
            goto out;
        }
    }
    int arc = argus_flows_analyse(f, err, sizeof err);
    if (arc != 0) {
        fprintf(stderr, PROG ": nothing to analyse: %s\n", err);
        goto out;
    }
    if (argus_flows_write(f, &od, &in, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        goto out;
    }
    argus_flows_summary(f, err, sizeof err);
    printf("%s\nreport: %s/flows.md\n", err, od.path);
    rc = 0;
out:
    if (tee && tee->fd >= 0)
        (void)argus_file_partial_commit(od.fd, od.path, "records.csv", tee->fd, 0, NULL, 0);
    free(tee);
    argus_flows_free(f);
    argus_flow_decoder_free(dec);
    argus_topo_free(&topo);
    fl_ports_free(&ps);
    fl_xcheck_free(&xc);
    argus_outdir_close(&od);
    return rc;
}
