/* flowrec.c — address helpers of the flow record (flows/flowrec.h). No allocation, no
 * state. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "flows/flowrec.h"

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void argus_flow_addr_v4(struct argus_flow_addr *a, const uint8_t v4[4])
{
    memcpy(a->b, v4_prefix, 12);
    memcpy(a->b + 12, v4, 4);
}

int argus_flow_addr_is_v4(const struct argus_flow_addr *a)
{
    return memcmp(a->b, v4_prefix, 12) == 0;
}

void argus_flow_addr_str(const struct argus_flow_addr *a, char *out, size_t outlen)
{
    const char *r;

    if (argus_flow_addr_is_v4(a))
        r = inet_ntop(AF_INET, a->b + 12, out, (socklen_t)outlen);
    else
        r = inet_ntop(AF_INET6, a->b, out, (socklen_t)outlen);
    if (!r && outlen)
        out[0] = '\0';
}

int argus_flow_addr_parse(struct argus_flow_addr *a, const char *s)
{
    uint8_t v4[4];

    if (inet_pton(AF_INET, s, v4) == 1) {
        argus_flow_addr_v4(a, v4);
        return 0;
    }
    if (inet_pton(AF_INET6, s, a->b) == 1)
        return 0;
    return -EINVAL;
}
