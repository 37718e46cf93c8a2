#!/bin/sh
# t_emit.sh — argus-flows on the emitter's job (tests/flows/emit.py: DP 4 x PP 4 x TP 4 on
# 16 hosts, a DP-only second tenant, storage traffic, a link 30 % slower, a host 1.5x slower
# over steps 12-15) read three ways: the flow CSV, IPFIX (ns, NTP format, an options record
# with the sampling interval) and NetFlow v9 (ms). Each is scored against truth.json
# (tests/flows/score.py --check: exact partition, pairs, degrees and stage order; step ends
# within 0.1 % (median) / 0.3 % (P95) of the step time, 0.4 % with v9's ms timestamps; the
# slow steps and the degraded link found, nothing else). Then the same IPFIX with 5 % of
# the export packets lost: the loss counted exactly (records by sequence number), the
# analysis still right; with 1-in-100 packet sampling; with duplicate observation points;
# with traffic between the tenants, split by node lists.
. "$(dirname "$0")/lib.sh"
"$PY" "$HERE/emit.py" --out "$WORK" --steps 24 || fail "emit.py exit $?"
for f in csv ipfix v9; do
    "$FLOWS" -o "$WORK/out-$f" -t "$WORK/topology.csv" "$WORK/flows.$f" >"$WORK/$f.stdout" \
        2>"$WORK/$f.stderr" || { cat "$WORK/$f.stderr" >&2; fail "$f: argus-flows exit $?"; }
    [ ! -s "$WORK/$f.stderr" ] || { cat "$WORK/$f.stderr" >&2; fail "$f: said something"; }
    extra=
    [ $f = v9 ] && extra="--no-links --ms"
    "$PY" "$HERE/score.py" "$WORK/out-$f" "$WORK/truth.json" --check $extra ||
        fail "$f: goals missed (above)"
    for o in flows.json timeline.csv flows.md; do
        [ -s "$WORK/out-$f/$o" ] || fail "$f: no $o"
    done
done
# the three inputs carry the same records
n_csv=$(jget "$WORK/out-csv" "d['inputs']['records_kept']")
n_ipfix=$(jget "$WORK/out-ipfix" "d['inputs']['records_kept']")
[ "$n_csv" = "$n_ipfix" ] || fail "csv kept $n_csv records, ipfix $n_ipfix"
[ "$(jget "$WORK/out-ipfix" "d['inputs']['export']['options_records']")" -ge 1 ] ||
    fail "ipfix: the options record (sampling interval) not read"
# export loss
mkdir "$WORK/loss"
"$PY" "$HERE/emit.py" --out "$WORK/loss" --steps 24 --loss 0.05 --seed 3 --formats ipfix,csv
"$FLOWS" -o "$WORK/out-loss" -t "$WORK/loss/topology.csv" "$WORK/loss/flows.ipfix" \
    >/dev/null 2>"$WORK/loss.stderr" || fail "loss: argus-flows exit $?"
want=$("$PY" -c "import json; t=json.load(open('$WORK/loss/truth.json'))['export']; print(t['lost_ipfix_data_records'], t['lost_packets'])")
got=$(jget "$WORK/out-loss" "d['inputs']['export']['lost_records'], d['inputs']['export']['sequence_gaps']")
set -- $want
wl=$1 wp=$2
[ "$wp" -ge 2 ] || fail "the emitter lost only $wp packets; the test needs some"
set -- $(echo "$got" | tr -d '(),')
# a run of lost packets is one gap; the records lost are counted exactly
[ "$1" = "$wl" ] || fail "lost records $1 counted, $wl lost"
[ "$2" -ge 1 ] && [ "$2" -le "$wp" ] || fail "sequence gaps $2 for $wp lost packets"
lines=$(grep -c "sequence gap" "$WORK/loss.stderr" || true)
[ "$lines" = "$2" ] || { cat "$WORK/loss.stderr" >&2; fail "$lines lines for $2 gaps"; }
"$PY" "$HERE/score.py" "$WORK/out-loss" "$WORK/loss/truth.json" --check ||
    fail "loss: goals missed (above)"
# 1-in-100 packet sampling, the interval in an IPFIX options record: sizes scaled back,
# PP flowlet sizes judged within the sampling noise
mkdir "$WORK/samp"
"$PY" "$HERE/emit.py" --out "$WORK/samp" --steps 16 --sampling 100 --seed 5 --formats ipfix
"$FLOWS" -o "$WORK/out-samp" -t "$WORK/samp/topology.csv" "$WORK/samp/flows.ipfix" \
    >/dev/null || fail "sampling: argus-flows exit $?"
"$PY" "$HERE/score.py" "$WORK/out-samp" "$WORK/samp/truth.json" --check ||
    fail "sampling 1:100: goals missed (above)"
# duplicate observation points: records crossing leaves exported by both leaves (IPFIX
# observationPointId, CSV obs_point): each second copy counted and skipped
mkdir "$WORK/dup"
"$PY" "$HERE/emit.py" --out "$WORK/dup" --steps 16 --dup-obs 1 --seed 6 --formats ipfix,csv
want=$("$PY" -c "import json; print(json.load(open('$WORK/dup/truth.json'))['export']['duplicates_roce'])")
[ "$want" -gt 1000 ] || fail "the emitter made only $want duplicates"
for f in ipfix csv; do
    "$FLOWS" -o "$WORK/out-dup-$f" -t "$WORK/dup/topology.csv" "$WORK/dup/flows.$f" \
        >/dev/null || fail "dup $f: argus-flows exit $?"
    got=$(jget "$WORK/out-dup-$f" "d['inputs']['records_duplicate']")
    [ "$got" = "$want" ] || fail "dup $f: $got duplicates found, $want made"
    "$PY" "$HERE/score.py" "$WORK/out-dup-$f" "$WORK/dup/truth.json" --check ||
        fail "dup $f: goals missed (above)"
done
# node lists: traffic between the two tenants joins them into one job, unless each
# tenant's hosts are given as a node list (--nodes)
mkdir "$WORK/cross"
"$PY" "$HERE/emit.py" --out "$WORK/cross" --steps 16 --cross 4 --seed 7 --formats ipfix
"$FLOWS" -o "$WORK/out-cross1" -t "$WORK/cross/topology.csv" "$WORK/cross/flows.ipfix" \
    >/dev/null || fail "cross: argus-flows exit $?"
[ "$(jget "$WORK/out-cross1" "len(d['jobs'])")" = 1 ] || fail "cross: the tenants not joined"
j0=$(seq -s, -f 'host%g' 0 15)
j1=$(seq -s, -f 'host%g' 16 19)
"$FLOWS" -N "$j0" --nodes "$j1" -o "$WORK/out-cross2" -t "$WORK/cross/topology.csv" \
    "$WORK/cross/flows.ipfix" >/dev/null || fail "cross -N: argus-flows exit $?"
[ "$(jget "$WORK/out-cross2" "d['pairs_across_node_lists']")" = 1 ] ||
    fail "cross -N: the pair across the lists not counted"
"$PY" "$HERE/score.py" "$WORK/out-cross2" "$WORK/cross/truth.json" --check ||
    fail "cross -N: goals missed (above)"
echo "ok: csv, ipfix, v9, 5 % export loss ($wl records in $wp packets), 1:100 sampling," \
     "$want duplicate observations scored"
