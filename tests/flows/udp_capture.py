#!/usr/bin/env python3
"""udp_capture.py OUT.pcap PORTFILE [IDLE_S] -- receive UDP datagrams on 127.0.0.1 (a free
port, written to PORTFILE once bound) until none came for IDLE_S seconds (default 2), and
write them into a pcap (raw IPv4 link type; each datagram wrapped in an IPv4 + UDP header
to port 2055) for tshark. Standard library only."""
import os
import socket
import struct
import sys
import time


def main():
    out, portfile = sys.argv[1], sys.argv[2]
    idle = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    with open(portfile + ".tmp", "w") as fh:
        fh.write("%d\n" % s.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    s.settimeout(idle)
    with open(out, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
        while True:
            try:
                d, a = s.recvfrom(65535)
            except socket.timeout:
                break
            udp = struct.pack("!HHHH", a[1], 2055, 8 + len(d), 0) + d
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                             socket.inet_aton(a[0]), socket.inet_aton("127.0.0.1"))
            t = time.time()
            fh.write(struct.pack("<IIII", int(t), int(t % 1 * 1e6), len(ip) + len(udp),
                                 len(ip) + len(udp)) + ip + udp)


if __name__ == "__main__":
    main()
