#!/bin/sh
# t_softflowd.sh — the decoders against an exporter and a decoder nobody here wrote:
# Debian's softflowd turns a pcap of synthetic RoCEv2 packets (tests/flows/roce_pcap.py:
# four queue pairs, UDP to 4791) into NetFlow v9 and into IPFIX (-A nano: NTP-format ns
# timestamps) sent to argus-flows' UDP collector on 127.0.0.1; every record must match the
# packets (5-tuple, bytes as IP lengths, packets, duration within 1 ms). The same IPFIX
# export, captured by tests/flows/udp_capture.py into a pcap, is decoded by tshark and by
# argus-flows reading that pcap: the same records, start times within 1 us. (softflowd's
# v9 header counts data records only, so tshark stops after the templates: RFC 3954 counts
# every record; argus-flows walks flowsets by their lengths and reads them.) Exit 77
# without softflowd or tshark (scripts/install-deps.sh installs both).
for p in softflowd tshark; do
    command -v $p >/dev/null 2>&1 || { echo "SKIP: no $p (scripts/install-deps.sh)"; exit 77; }
done
. "$(dirname "$0")/lib.sh"
"$PY" "$HERE/roce_pcap.py" "$WORK/roce.pcap" "$WORK/roce.json"
# softflowd SRC_PORT_TARGET VERSION NAME: export the pcap to 127.0.0.1:PORT
sfd() {
    mkdir -p "$WORK/sf-$3"
    extra=
    [ "$2" = 10 ] && extra="-A nano"
    # softflowd 1.1.0 blocks in accept() on its control socket, before reading the pcap,
    # when that socket's path is longer than 12 bytes: a short one in a private directory
    # of /tmp (mktemp -d: mode 0700, so no other user can take the name), removed after
    ctld=$(mktemp -d /tmp/XXXX) && ctl="$ctld/c"
    rc=0
    timeout 30 softflowd -r "$WORK/roce.pcap" -n "127.0.0.1:$1" -v "$2" $extra -d \
        -c "$ctl" -p "$WORK/sf-$3/pid" >"$WORK/sf-$3/log" 2>&1 || rc=$?
    rm -rf "$ctld"
    [ $rc = 0 ] && grep -q "after pcap EOF" "$WORK/sf-$3/log" ||
        { cat "$WORK/sf-$3/log" >&2; fail "softflowd -v $2 exit $rc"; }
}
waitfor() {  # waitfor FILE PATTERN: up to 10 s
    i=0
    until grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1)); [ $i -le 100 ] || fail "$1: no '$2' after 10 s"; sleep 0.1
    done
}
for v in 9 10; do
    "$FLOWS" --listen 0 --duration 60 --port 4791 --records -o "$WORK/out$v" \
        >"$WORK/c$v.out" 2>"$WORK/c$v.err" &
    pid=$!
    waitfor "$WORK/c$v.err" "listening on 127.0.0.1:"
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/c$v.err")
    sfd "$port" $v collect$v
    sleep 0.5
    kill -TERM $pid
    wait $pid || { cat "$WORK/c$v.err" >&2; fail "collector (v$v) exit $?"; }
    [ "$(wc -l <"$WORK/c$v.err")" = 1 ] || { cat "$WORK/c$v.err" >&2; fail "v$v: problems said"; }
    "$PY" - "$WORK/out$v/records.csv" "$WORK/roce.json" "$v" <<'PYEOF' || fail "v$v records"
import csv, json, sys
truth = json.load(open(sys.argv[2]))["flows"]
got = {}
for r in csv.DictReader(open(sys.argv[1])):
    k = ",".join((r["src_ip"], r["dst_ip"], r["proto"], r["src_port"], r["dst_port"]))
    got[k] = r
assert set(got) == set(truth), ("5-tuples", sorted(got), sorted(truth))
for k, t in truth.items():
    r = got[k]
    assert int(r["bytes"]) == t["bytes"] and int(r["packets"]) == t["packets"], (k, r, t)
    dur = (int(r["t_end_ns"]) - int(r["t_start_ns"])) / 1e3
    want = t["last_us"] - t["first_us"]
    assert abs(dur - want) <= 1000, (k, dur, want)
print("v%s: %d records match the packets" % (sys.argv[3], len(got)))
PYEOF
done
[ "$(grep -o '"udp_datagrams": [0-9]*' "$WORK/out10/flows.json" | grep -o '[0-9]*$')" -ge 1 ] ||
    fail "no datagram counted"
# IPFIX captured into a pcap: tshark and argus-flows (the pcap reader) on the same bytes
"$PY" "$HERE/udp_capture.py" "$WORK/ipfix.pcap" "$WORK/port" 2 &
cpid=$!
waitfor "$WORK/port" "[0-9]"
sfd "$(cat "$WORK/port")" 10 capture
wait $cpid || fail "udp_capture.py exit $?"
tshark -r "$WORK/ipfix.pcap" -d udp.port==2055,cflow -T fields -E separator=';' -E aggregator='|' \
    -e cflow.srcaddr -e cflow.dstaddr -e cflow.srcport -e cflow.dstport -e cflow.octets \
    -e cflow.packets -e cflow.abstimestart >"$WORK/tshark.txt" 2>"$WORK/tshark.err" ||
    { cat "$WORK/tshark.err" >&2; fail "tshark exit $?"; }
"$FLOWS" --port 0 --records -o "$WORK/outpcap" "$WORK/ipfix.pcap" >/dev/null 2>"$WORK/p.err" ||
    { cat "$WORK/p.err" >&2; fail "argus-flows on the pcap exit $?"; }
[ ! -s "$WORK/p.err" ] || { cat "$WORK/p.err" >&2; fail "pcap: problems said"; }
"$PY" - "$WORK/tshark.txt" "$WORK/outpcap/records.csv" <<'PYEOF' || fail "tshark disagrees"
import calendar, csv, sys, time
ts = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split(";")
    if len(f) < 7 or not f[0]:
        continue
    cols = [c.split("|") for c in f]
    for i in range(len(cols[0])):
        ts.append(tuple(c[i] for c in cols))
def ns(s):   # "Jan  1, 2026 00:00:00.001000999 UTC"
    s = s.replace(" UTC", "").strip()
    base, frac = s.rsplit(".", 1)
    t = calendar.timegm(time.strptime(" ".join(base.split()), "%b %d, %Y %H:%M:%S"))
    return t * 10**9 + int(frac.ljust(9, "0")[:9])
want = sorted((s, d, int(sp), int(dp), int(o), int(p), ns(t)) for s, d, sp, dp, o, p, t in ts)
got = sorted((r["src_ip"], r["dst_ip"], int(r["src_port"]), int(r["dst_port"]), int(r["bytes"]),
              int(r["packets"]), int(r["t_start_ns"])) for r in csv.DictReader(open(sys.argv[2])))
assert len(want) == len(got) == 4, (want, got)
for w, g in zip(want, got):
    assert w[:6] == g[:6], (w, g)
    assert abs(w[6] - g[6]) <= 1000, ("start time", w, g)
print("ipfix: tshark and argus-flows agree on %d records" % len(got))
PYEOF
echo "ok: softflowd v9 and IPFIX through the collector, tshark cross-check"
