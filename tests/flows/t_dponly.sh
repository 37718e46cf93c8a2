#!/bin/sh
# t_dponly.sh — the links of a DP-only job from its own flowlets (flows/links.c): the
# second tenant (DP only, no PP pair to measure links by) with one NIC link 30 % slower.
# Records that end within a ring round (idle timeout 0.1 ms): that link found degraded,
# nothing else (tests/flows/score.py --check), three GPUs of the tenant in turn. Records
# that merge a ring's rounds (idle timeout 5 ms) carry the slow link's rate on the whole
# ring: no link is blamed.
. "$(dirname "$0")/lib.sh"
for k in 2 5 11; do
    mkdir "$WORK/k$k"
    "$PY" "$HERE/emit.py" --out "$WORK/k$k" --steps 16 --degrade-tenant $k --idle-ms 0.1 \
        --seed $k --formats ipfix || fail "emit.py exit $?"
    "$FLOWS" -o "$WORK/out$k" -t "$WORK/k$k/topology.csv" "$WORK/k$k/flows.ipfix" >/dev/null ||
        fail "tenant GPU $k: argus-flows exit $?"
    "$PY" "$HERE/score.py" "$WORK/out$k" "$WORK/k$k/truth.json" --check ||
        fail "tenant GPU $k: goals missed (above)"
done
mkdir "$WORK/coarse"
"$PY" "$HERE/emit.py" --out "$WORK/coarse" --steps 16 --degrade-tenant 5 --idle-ms 5 \
    --formats ipfix || fail "emit.py exit $?"
"$FLOWS" -o "$WORK/out-coarse" -t "$WORK/coarse/topology.csv" "$WORK/coarse/flows.ipfix" \
    >/dev/null || fail "coarse: argus-flows exit $?"
[ "$(jget "$WORK/out-coarse" "sum(l['degraded'] for l in d['links'])")" = 0 ] ||
    fail "coarse records: a link of the ring blamed"
echo "ok: a DP-only job's slow link from its flowlets (3 GPUs), none blamed on coarse records"
