/* export.h — the decoder of flow export packets: IPFIX (RFC 7011) messages and NetFlow v9
 * (RFC 3954) packets, with their templates and options templates, into flow records
 * (flows/flowrec.h).
 *
 * A decoder keeps, per exporter (a 64-bit id the caller chooses: a file's index, a UDP
 * source address and port) and observation domain / source id: the templates seen (at
 * most ARGUS_FLOW_TMPL_MAX in all, ARGUS_FLOW_TMPL_FIELDS fields each), the next sequence
 * number, and what options records said (sampling interval, IPFIX systemInitTime).
 * Everything is allocated by _create; argus_flow_decode allocates nothing and never reads
 * past p + n: every set, template and field length is checked against what is left.
 *
 * Times: IPFIX flowStart/End Seconds (150/151), Milliseconds (152/153), Microseconds and
 * Nanoseconds in the NTP format (154-157; for µs the low 11 fraction bits are ignored,
 * RFC 7011 6.1.9), Delta Microseconds (158/159, before the export time) and SysUpTime
 * (21/22, after systemInitTimeMilliseconds 160 from an options record); NetFlow v9
 * FIRST/LAST_SWITCHED (22/21) against the header's sysUptime and unix_secs. A record
 * without a usable time is not emitted and counted (untimed).
 *
 * Export loss: IPFIX sequence numbers count data records, NetFlow v9's count packets; a
 * jump forward adds to lost_records / lost_packets, a step back to reordered. A message
 * that held a set of an unknown template cannot be counted, and the next one resynchronises.
 *
 * Problems inside a packet (a set too short, an unknown template, a sequence gap, a bad
 * template) are counted in the stats, the rest of the packet is still decoded, and the
 * first one is described in errbuf (one line, no packet prefix: the caller adds where).
 * Not thread-safe: one decoder per thread.
 */
#ifndef ARGUS_FLOWS_EXPORT_H
#define ARGUS_FLOWS_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "flows/flowrec.h"

#define ARGUS_FLOW_TMPL_MAX 512
#define ARGUS_FLOW_TMPL_FIELDS 64
#define ARGUS_FLOW_SRC_MAX 256

struct argus_flow_decode_stats {
    uint64_t packets;          /* packets given to argus_flow_decode */
    uint64_t packets_bad;      /* refused whole: header, version, length */
    uint64_t records;          /* flow records emitted */
    uint64_t options_records;  /* options data records read */
    uint64_t templates;        /* template and options template records stored */
    uint64_t withdrawn;        /* IPFIX template withdrawals */
    uint64_t sets_unknown;     /* data sets of a template not (yet) seen */
    uint64_t sets_bad;         /* sets or templates refused (lengths, field counts) */
    uint64_t untimed;          /* records without a usable time */
    uint64_t table_full;       /* templates or sources that did not fit */
    uint64_t seq_gaps;         /* sequence jumps forward */
    uint64_t lost_records;     /* IPFIX: data records missing by the sequence numbers */
    uint64_t lost_packets;     /* NetFlow v9: packets missing by the sequence numbers */
    uint64_t reordered;        /* sequence steps back (duplicates, reordering, restarts) */
};

struct argus_flow_decoder;

/* 0 and *out, or -ENOMEM. */
int argus_flow_decoder_create(struct argus_flow_decoder **out);
void argus_flow_decoder_free(struct argus_flow_decoder *d);
const struct argus_flow_decode_stats *argus_flow_decoder_stats(const struct argus_flow_decoder *d);

/* Decode one IPFIX message or NetFlow v9 packet of n bytes (the version field decides).
 * Records go to sink. Returns the number of problems found in it (0: clean), errbuf
 * naming the first; -EINVAL when the packet is refused whole (errbuf says why); or what
 * the sink returned when it stopped. */
int argus_flow_decode(struct argus_flow_decoder *d, uint64_t exporter, const uint8_t *p,
                      size_t n, argus_flow_sink sink, void *ctx, char *errbuf, size_t errlen);

/* Framing of a file of back-to-back export packets: the length of the packet that starts at
 * p (IPFIX: its length field; NetFlow v9: its header and flowsets up to the next v9 header
 * or the end, flowset id 9 being reserved). 0 when no packet can start there (not version
 * 9 or 10, or a length that does not fit n). No allocation. */
size_t argus_flow_packet_len(const uint8_t *p, size_t n);

#endif /* ARGUS_FLOWS_EXPORT_H */
