/* flowrec.h — the flow record every reader of flows/ produces and the analysis reads: one
 * unidirectional flow (or flowlet) as an exporter or a CSV line reports it. Addresses are
 * kept as 16 bytes (IPv4 as ::ffff:a.b.c.d), times as ns since the Unix epoch. Plain data:
 * no allocation, no state; any thread.
 */
#ifndef ARGUS_FLOWS_FLOWREC_H
#define ARGUS_FLOWS_FLOWREC_H

#include <stddef.h>
#include <stdint.h>

struct argus_flow_addr {
    uint8_t b[16];
};

struct argus_flow_rec {
    uint64_t t_start_ns, t_end_ns;  /* first and last packet; end >= start */
    struct argus_flow_addr src, dst;
    uint64_t bytes, packets;        /* as counted (before the sampling interval is applied) */
    uint32_t obs_point;             /* observation point (0: none given) */
    uint32_t in_if, out_if;         /* interfaces (0: none given) */
    uint32_t sampling;              /* 1 in N packets counted; 1 when unsampled */
    uint16_t src_port, dst_port;
    uint8_t proto;
};

/* The record sink every reader calls once per record: 0 to go on, negative errno to stop
 * (the reader returns it). rec is valid during the call only. */
typedef int (*argus_flow_sink)(void *ctx, const struct argus_flow_rec *rec);

/* IPv4 in network byte order (a[0] the first octet) into the mapped form. */
void argus_flow_addr_v4(struct argus_flow_addr *a, const uint8_t v4[4]);
/* 1 when a is an IPv4-mapped address. */
int argus_flow_addr_is_v4(const struct argus_flow_addr *a);
/* Text form (dotted quad for mapped IPv4, else RFC 5952) into out (at least 46 bytes). */
void argus_flow_addr_str(const struct argus_flow_addr *a, char *out, size_t outlen);
/* Parse text (IPv4 or IPv6); 0, or -EINVAL. */
int argus_flow_addr_parse(struct argus_flow_addr *a, const char *s);

#endif /* ARGUS_FLOWS_FLOWREC_H */
