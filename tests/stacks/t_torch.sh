#!/bin/sh
# Host call stacks of a real PyTorch DDP job (tests/integration/torch_ddp.py: CPU, gloo, 4
# ranks, steps and phases marked with python/argus.py) under argus-run: rank 2 sleeps 0.5 s
# at the start of steps 14, 47 and 58. Its host_stall carries the Python stack of that
# sleep (main at the line of torch_ddp.py that sleeps) as the top source stack.
# Skipped (77) when /usr/bin/python3 cannot import torch.
PY=/usr/bin/python3
"$PY" -c "import torch, torch.distributed" 2>/dev/null ||
    { echo "SKIP: $PY cannot import torch (apt-get install python3-torch)"; exit 77; }
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/../integration/lib.sh"
APP="$top_srcdir/tests/integration/torch_ddp.py"
export ARGUS_SILENCE_MS=${ARGUS_SILENCE_MS:-30000}
export MASTER_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo
MASTER_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])') || fail "no free port"
export MASTER_PORT
line=$(grep -n "time.sleep(a.stall_ms" "$APP" | cut -d: -f1)
[ -n "$line" ] || fail "no stall line in $APP"
job="stacks-torch-$$"
ARGUS_JOBID=$job timeout 240 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 4 --oversubscribe "$PY" "$APP" --steps 70 --master-port "$MASTER_PORT" \
    --stall-rank 2 --stall-steps 14,47,58 --stall-ms 500 >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "the PyTorch job failed"; }
"$PY" "$top_srcdir/tests/stacks/check_stacks.py" "$WORK/out/argus-$job" stall python 2 main \
    torch_ddp.py "$line" || fail "rank 2's host_stall does not carry its sleep at torch_ddp.py:$line"
