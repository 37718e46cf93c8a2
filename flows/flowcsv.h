/* flowcsv.h — one line of the flow CSV:
 *   t_start_ns,t_end_ns,src_ip,dst_ip,proto,src_port,dst_port,bytes,packets
 * optionally followed by obs_point,in_if,out_if (decimal, empty meaning 0). A header line
 * (starting with "t_start_ns"), an empty line or one starting with '#' is no record.
 * No allocation, no state; any thread.
 */
#ifndef ARGUS_FLOWS_FLOWCSV_H
#define ARGUS_FLOWS_FLOWCSV_H

#include <stddef.h>

#include "flows/flowrec.h"

/* Parse line[0..len) (no newline) into *r (sampling 1). 1: a record; 0: header, empty or
 * comment; -EINVAL with errbuf naming the column and what is wrong. */
int argus_flow_csv_line(const char *line, size_t len, struct argus_flow_rec *r, char *errbuf,
                        size_t errlen);

/* The CSV line of r (the nine columns and the three optional ones, a newline at the end)
 * into out; its length, or 0 when out is too small. */
size_t argus_flow_csv_format(const struct argus_flow_rec *r, char *out, size_t outlen);

#endif /* ARGUS_FLOWS_FLOWCSV_H */
