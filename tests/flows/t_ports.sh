#!/bin/sh
# t_ports.sh — switch port counters (argus-flows --ports): the emitter's job with every
# port's octet counters in 200 us bins (tests/flows/emit.py --counters-us), a NIC link 30 %
# slower at another GPU per seed: exactly that port found degraded and ranked first
# (tests/flows/score.py --check), the flows' own verdicts unchanged; no link degraded: no
# port flagged; the counters alone (no flow record) still judged; a bad line and a counter
# that went down: one line on stderr, counted, the rest used.
. "$(dirname "$0")/lib.sh"
for s in 1 2; do
    mkdir "$WORK/s$s"
    "$PY" "$HERE/emit.py" --out "$WORK/s$s" --steps 12 --slow-steps 5,8 --seed $s --degrade-rank $((s * 23 % 64)) \
        --counters-us 200 --formats ipfix || fail "emit.py exit $?"
    "$FLOWS" -o "$WORK/out$s" -t "$WORK/s$s/topology.csv" -P "$WORK/s$s/ports.csv" \
        "$WORK/s$s/flows.ipfix" >/dev/null 2>"$WORK/s$s.err" ||
        { cat "$WORK/s$s.err" >&2; fail "seed $s: argus-flows exit $?"; }
    [ ! -s "$WORK/s$s.err" ] || { cat "$WORK/s$s.err" >&2; fail "seed $s: said something"; }
    "$PY" "$HERE/score.py" "$WORK/out$s" "$WORK/s$s/truth.json" --check ||
        fail "seed $s: goals missed (above)"
    grep -q "^## Switch ports" "$WORK/out$s/flows.md" || fail "seed $s: no port table"
done
# nothing degraded: no NIC-facing port flagged
mkdir "$WORK/ok"
"$PY" "$HERE/emit.py" --out "$WORK/ok" --steps 12 --slow-steps 5,8 --degrade 0 --counters-us 200 --formats ipfix
"$FLOWS" -o "$WORK/out-ok" -t "$WORK/ok/topology.csv" -P "$WORK/ok/ports.csv" \
    "$WORK/ok/flows.ipfix" >/dev/null || fail "healthy: argus-flows exit $?"
[ "$(jget "$WORK/out-ok" "sum(p['degraded'] for p in d['ports']['list'])")" = 0 ] ||
    fail "healthy: a port flagged"
# the counters alone, with a bad line and a counter reset (leaf0:p0 down to 0 once)
{ cat "$WORK/s1/ports.csv"; echo "12x,leaf0,p0,1,2"
  t=$(tail -1 "$WORK/s1/ports.csv" | cut -d, -f1); echo "$((t + 1000)),leaf0,p0,0,0"; } \
    >"$WORK/ports-bad.csv"
"$FLOWS" -o "$WORK/out-alone" -t "$WORK/s1/topology.csv" -P "$WORK/ports-bad.csv" \
    >/dev/null 2>"$WORK/alone.err" || { cat "$WORK/alone.err" >&2; fail "alone: exit $?"; }
[ "$(wc -l <"$WORK/alone.err")" = 1 ] && grep -q "line .*: time:" "$WORK/alone.err" ||
    { cat "$WORK/alone.err" >&2; fail "alone: not one line for the bad line"; }
[ "$(jget "$WORK/out-alone" "d['inputs']['port_lines_bad'], d['ports']['counter_resets'], len(d['jobs'])")" = "1 1 0" ] ||
    fail "alone: bad line, reset or jobs miscounted"
want=$("$PY" -c "import json; print(json.load(open('$WORK/s1/truth.json'))['degraded_links'][0])")
[ "$(jget "$WORK/out-alone" "[p['port'] for p in d['ports']['list'] if p['degraded']]")" = "['$want']" ] ||
    fail "alone: the degraded port $want not found alone"
echo "ok: degraded ports found from counters (2 seeds), none when healthy, counters alone"
