#!/usr/bin/env python3
"""roce_pcap.py OUT.pcap TRUTH.json -- a pcap (Ethernet, microsecond timestamps) of synthetic
RoCEv2 packets: UDP to port 4791 carrying an InfiniBand base transport header (RDMA WRITE,
the destination QP in it) and a payload, for softflowd to turn into flow records. Four
queue pairs (5-tuples) between four hosts, both directions, each sending bursts of
packets. TRUTH.json: per 5-tuple the packets, the bytes as softflowd counts them (IP
length) and the first and last packet times (us). Standard library only."""
import json
import struct
import sys

T0 = 1_767_225_600  # 2026-01-01 00:00:00 UTC


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def packet(src, dst, sport, payload_len, psn, qp):
    bth = struct.pack("!BBHII", 0x0a, 0x40, 0xffff, qp & 0xffffff, psn & 0xffffff)
    payload = bth + bytes(payload_len) + b"\0\0\0\0"   # + ICRC
    udp = struct.pack("!HHHH", sport, 4791, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), psn & 0xffff, 0x4000, 64, 17, 0,
                     bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + ip + udp, 20 + len(udp)


def main():
    out, truth_path = sys.argv[1], sys.argv[2]
    hosts = [(10, 9, 0, i + 1) for i in range(4)]
    qps = [(0, 1, 50001), (1, 0, 50002), (2, 3, 50003), (3, 2, 50004)]
    frames, truth = [], {}
    for k, (a, b, sport) in enumerate(qps):
        t = 1_000 + 137 * k                    # us after T0
        psn = 0
        key = "%s,%s,17,%d,4791" % (".".join(map(str, hosts[a])), ".".join(map(str, hosts[b])),
                                    sport)
        rec = truth.setdefault(key, dict(packets=0, bytes=0, first_us=None, last_us=None))
        for burst in range(5):
            for i in range(40 + 10 * k):
                fr, iplen = packet(hosts[a], hosts[b], sport, 1024, psn, 0x100 + k)
                frames.append((t, fr))
                rec["packets"] += 1
                rec["bytes"] += iplen
                rec["first_us"] = t if rec["first_us"] is None else rec["first_us"]
                rec["last_us"] = t
                psn += 1
                t += 3
            t += 20_000 + 1_000 * k            # 20 ms between bursts
    frames.sort(key=lambda x: x[0])
    with open(out, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for t, fr in frames:
            fh.write(struct.pack("<IIII", T0 + t // 1_000_000, t % 1_000_000, len(fr), len(fr)))
            fh.write(fr)
    with open(truth_path, "w") as fh:
        json.dump(dict(t0_s=T0, flows=truth), fh, indent=1)


if __name__ == "__main__":
    main()
