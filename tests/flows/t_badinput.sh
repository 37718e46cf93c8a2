#!/bin/sh
# t_badinput.sh — bad inputs beside good ones, each said in one line naming the file and
# where, counted, and nothing else lost: an IPFIX file cut inside a message (the messages
# before it are used), NetFlow v9 without its template packet (one line per data set of the
# unknown template, then the template arrives and the rest is decoded), a flow CSV with a
# bad line among good ones, an empty file, a pcapng, a file that is not there. A bounded
# store (--max-records) counts what it drops. Exit 1 when nothing could be analysed, 2 on
# a usage error.
. "$(dirname "$0")/lib.sh"
"$PY" "$HERE/emit.py" --out "$WORK" --steps 8 --tenant 0 --storage 0 --slow 1 --degrade 0
B="$WORK/bad"; mkdir "$B"
size=$(wc -c <"$WORK/flows.ipfix")
head -c $((size - 100)) "$WORK/flows.ipfix" >"$B/cut.ipfix"
# NetFlow v9 from its second packet on: the template comes again in packet 20
"$PY" - "$WORK/flows.v9" "$B/late.v9" <<'PYEOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
off, pk = 20, []
start = 0
while off < len(d):
    if d[off:off + 2] == b"\x00\x09":
        pk.append(d[start:off]); start = off; off += 20; continue
    off += struct.unpack(">H", d[off + 2:off + 4])[0]
pk.append(d[start:])
open(sys.argv[2], "wb").write(b"".join(pk[1:]))
PYEOF
{ head -5 "$WORK/flows.csv"; echo "1,2,10.0.0.1,10.0.0.2,17,1,4791,x,1"; tail -n +6 "$WORK/flows.csv"; } \
    >"$B/one-bad.csv"
: >"$B/empty.csv"
printf '\n\r\r\n\032\n' | cat - /dev/zero | head -c 64 >"$B/dump.pcapng"
"$FLOWS" -o "$WORK/out" "$B/cut.ipfix" "$B/late.v9" "$B/one-bad.csv" "$B/empty.csv" \
    "$B/dump.pcapng" "$B/missing.csv" >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stderr" >&2; fail "good inputs not analysed"; }
one() {  # one FILE PATTERN: exactly one line on FILE matching PATTERN
    n=$(grep -c "^argus-flows: $B/$1: $2" "$WORK/stderr" || true)
    [ "$n" = 1 ] || { cat "$WORK/stderr" >&2; fail "$1: $n lines matching '$2', want 1"; }
}
one cut.ipfix "packet at byte [0-9]*: no NetFlow v9 or IPFIX header that fits"
one one-bad.csv "line 6: bytes: \"x\" is not an integer"
one empty.csv "empty file"
one dump.pcapng "pcapng is not read"
one missing.csv "No such file or directory"
unk=$(grep -c "^argus-flows: $B/late.v9: packet at byte [0-9]*: data set of unknown template 256" \
      "$WORK/stderr" || true)
[ "$unk" = 19 ] || { cat "$WORK/stderr" >&2; fail "late.v9: $unk unknown-template lines, want 19"; }
[ "$(wc -l <"$WORK/stderr")" = $((5 + unk)) ] || { cat "$WORK/stderr" >&2; fail "other lines"; }
[ "$(jget "$WORK/out" "d['inputs']['export']['sets_unknown_template']")" = 19 ] ||
    fail "unknown-template sets not counted"
[ "$(jget "$WORK/out" "d['inputs']['csv_lines_bad']")" = 1 ] || fail "bad CSV line not counted"
[ "$(jget "$WORK/out" "d['inputs']['files_skipped']")" = 3 ] || fail "skipped files not counted"
# every good record is there: the CSV's all but one, the cut IPFIX's and the late v9's
total=$(($(wc -l <"$WORK/flows.csv") - 1))
kept=$(jget "$WORK/out" "d['inputs']['records_kept']")
[ "$kept" -gt $((2 * total)) ] && [ "$kept" -lt $((3 * total)) ] ||
    fail "$kept records kept from three copies of $total"
# the store is bounded: past --max-records, records are counted as dropped, not kept
"$FLOWS" -M 1000 -o "$WORK/out-small" "$WORK/flows.csv" >/dev/null 2>&1 ||
    fail "--max-records 1000: exit $?"
[ "$(jget "$WORK/out-small" "d['inputs']['records_kept']")" = 1000 ] || fail "kept past -M"
[ "$(jget "$WORK/out-small" "d['inputs']['records_dropped']")" = $((total - 1000)) ] ||
    fail "dropped records not counted"
# nothing to analyse: exit 1; usage: exit 2
rc=0; "$FLOWS" -o "$WORK/out2" "$B/empty.csv" 2>/dev/null || rc=$?
[ $rc = 1 ] || fail "nothing analysable: exit $rc, want 1"
rc=0; "$FLOWS" 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "no input: exit $rc, want 2"
rc=0; "$FLOWS" --port 70000 "$WORK/flows.csv" 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "--port 70000: exit $rc, want 2"
echo "ok: $((5 + unk)) lines for the bad inputs, $kept records kept"
