#!/bin/sh
# Host call stacks from Kineto traces (import/pystacks.c): a real PyTorch program on CPU
# (tests/stacks/kineto_app.py) under torch.profiler(with_stack=True) writes the traces of
# 2 ranks; rank 1 spends 450 ms in stall_here at steps 3, 7 and 11. argus-analyze over them
# must name stall_here (kineto_app.py, its line) as the top source stack of rank 1's
# host_stall, beside rank 0's stack of the same steps; with ARGUS_STACKS=off, no stacks.
# Skipped (77) when /usr/bin/python3's torch has no Kineto (Debian's python3-torch 1.13 is
# built without it: its profiler writes no python_function events).
PY=/usr/bin/python3
"$PY" -c "import torch, sys; sys.exit(0 if torch.autograd.kineto_available() else 1)" \
    2>/dev/null || { echo "SKIP: $PY has no torch with Kineto (torch.profiler python_function events)"; exit 77; }
. "$(dirname "$0")/../integration/lib.sh"
ANALYZE="$top_builddir/argus-analyze"
APP="$top_srcdir/tests/stacks/kineto_app.py"
line=$(grep -n "^def stall_here" "$APP" | cut -d: -f1)
[ -n "$line" ] || fail "no stall_here in $APP"
mkdir -p "$WORK/tr"
OMP_NUM_THREADS=1 timeout 300 "$PY" "$APP" "$WORK/tr/rank-0.json" 0 2 14 "" 0 >"$WORK/app0" 2>&1 &
p0=$!
OMP_NUM_THREADS=1 timeout 300 "$PY" "$APP" "$WORK/tr/rank-1.json" 1 2 14 3,7,11 450 >"$WORK/app1" 2>&1 ||
    { cat "$WORK/app1" >&2; fail "rank 1's PyTorch program failed"; }
wait $p0 || { cat "$WORK/app0" >&2; fail "rank 0's PyTorch program failed"; }
grep -q '"python_function"' "$WORK/tr/rank-1.json" || fail "the trace has no python_function events"
"$ANALYZE" -o "$WORK/out" "$WORK/tr/rank-0.json" "$WORK/tr/rank-1.json" >"$WORK/stdout" 2>&1 ||
    { cat "$WORK/stdout" >&2; fail "argus-analyze failed"; }
"$PY" "$top_srcdir/tests/stacks/check_stacks.py" "$WORK/out" stall python 1 stall_here \
    kineto_app.py "$line" || fail "rank 1's host_stall does not carry stall_here"
ARGUS_STACKS=off "$ANALYZE" -o "$WORK/off" "$WORK/tr/rank-0.json" "$WORK/tr/rank-1.json" \
    >"$WORK/stdout.off" 2>&1 || { cat "$WORK/stdout.off" >&2; fail "argus-analyze (off) failed"; }
"$PY" "$top_srcdir/tests/stacks/check_stacks.py" "$WORK/off" healthy ||
    fail "ARGUS_STACKS=off still gave stacks"
echo "PASS: stall_here named from the Kineto traces"
