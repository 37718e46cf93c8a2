/* fuzz_flows.c — libFuzzer harness of flows/: the IPFIX / NetFlow v9 decoder, the flow CSV
 * and topology lines, and the analysis over whatever records come out. The first byte
 * picks the reading: 0 export packets back to back (argus_flow_packet_len framing), 1
 * packets each after a 2-byte length (any length, so the decoder sees every cut), 2 text
 * lines (a line starting with '@' is a topology line, '%' a switch port-counter line,
 * others flow CSV). Bit 0x40 of the first byte sets a window of 1 s of flow time. Then
 * the records (at most 4096) and the port samples (at most 4096) are analysed. Nothing
 * may crash, leak or read out of bounds. Build and run: tests/fuzz/run.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flows/export.h"
#include "flows/flowcsv.h"
#include "flows/flows.h"
#include "flows/ports.h"
#include "flows/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct argus_flow_decoder *d = NULL;
    struct argus_flows *f = NULL;
    struct argus_flows_opts o;
    struct argus_topo t;
    struct argus_ports ps;
    char err[512];

    if (size < 1)
        return 0;
    argus_flows_opts_default(&o);
    o.max_records = 4096;
    o.port = data[0] & 0x80 ? 0 : 4791;
    o.window_ns = data[0] & 0x40 ? 1000000000u : 0;
    argus_topo_init(&t);
    fl_ports_init(&ps, 4096);
    if (argus_flow_decoder_create(&d) != 0 || argus_flows_create(&o, &f, err, sizeof err) != 0)
        goto out;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] & 3) {
    case 0:
        while (n) {
            size_t len = argus_flow_packet_len(p, n);
            if (!len)
                break;
            (void)argus_flow_decode(d, 1, p, len, argus_flows_add, f, err, sizeof err);
            p += len, n -= len;
        }
        break;
    case 1:
        while (n >= 2) {
            size_t len = (size_t)(p[0] << 8 | p[1]);
            p += 2, n -= 2;
            if (len > n)
                len = n;
            (void)argus_flow_decode(d, len & 1, p, len, argus_flows_add, f, err, sizeof err);
            p += len, n -= len;
        }
        break;
    default:
        while (n) {
            const uint8_t *nl = memchr(p, '\n', n);
            size_t len = nl ? (size_t)(nl - p) : n;
            struct argus_flow_rec r;
            if (len && p[0] == '@')
                (void)argus_topo_add_line(&t, (const char *)p + 1, len - 1, err, sizeof err);
            else if (len && p[0] == '%')
                (void)fl_ports_add_line(&ps, (const char *)p + 1, len - 1, err, sizeof err);
            else if (argus_flow_csv_line((const char *)p, len, &r, err, sizeof err) == 1)
                (void)argus_flows_add(f, &r);
            p += len, n -= len;
            if (n)
                p++, n--;
        }
        break;
    }
    argus_flows_set_topology(f, &t);
    argus_flows_set_ports(f, &ps);
    (void)argus_flows_analyse(f, err, sizeof err);
    argus_flows_summary(f, err, sizeof err);
out:
    argus_flows_free(f);
    argus_flow_decoder_free(d);
    argus_topo_free(&t);
    fl_ports_free(&ps);
    return 0;
}
