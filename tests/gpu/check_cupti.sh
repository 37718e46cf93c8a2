#!/bin/sh
# check_cupti.sh — the tracer's GPU check (needs a CUDA GPU, nvcc and a build of Argus
# with CUPTI; NOT part of `make check`). Builds tests/gpu/two_kernels.cu, runs it (and,
# when torch is importable, a short PyTorch loop) without and with Argus injected, and
# checks: (1) Argus saw the kernels and the 200 steps (argus: lines / report), (2) the
# step time overhead is under 1 %, (3) the program's own output is unchanged.
# Usage: tests/gpu/check_cupti.sh [builddir]   (default: the current directory)
# Exit 0 = pass, 1 = fail, 77 = skipped (no GPU / no nvcc).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
b=${1:-.}
b=$(cd "$b" && pwd)
lib="$b/.libs/libargus.so"
out=${TMPDIR:-/tmp}/argus-gpu-check.$$
mkdir -p "$out"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
command -v nvcc >/dev/null 2>&1 || { echo "SKIP: no nvcc"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib missing (build Argus with CUPTI first)"; exit 1; }
nvcc -O2 -o "$out/two_kernels" "$here/two_kernels.cu" || { echo "FAIL: nvcc"; exit 1; }

cupti_dir=$(dirname "$(ldd "$lib" | awk '/libcupti/{print $3}')")
run_plain() { "$out/two_kernels" 200; }
run_argus() { # a lone process: Argus starts MPI as a singleton and writes a report
    ARGUS_MODE=on ARGUS_LOG=info ARGUS_OUTDIR="$out" ARGUS_JOBID=gpucheck-$1 ARGUS_MPI_SELF_INIT_MS=0 \
    CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$cupti_dir/libcupti.so" \
    LD_PRELOAD="$lib" "$out/two_kernels" 200
}
fail=0
# Best of 3 each way (the GPU clocks settle), alternating.
best() { sort -t= -k4 -n | head -1 | sed 's/.*step_ms=//'; }
: >"$out/plain.txt"; : >"$out/argus.txt"
for i in 1 2 3; do
    run_plain >>"$out/plain.txt" 2>/dev/null
    run_argus $i >>"$out/argus.txt" 2>>"$out/argus.err"
done
p=$(best <"$out/plain.txt"); a=$(best <"$out/argus.txt")
echo "plain: $p ms/step  argus: $a ms/step"
awk -v p="$p" -v a="$a" 'BEGIN { o = (a - p) / p * 100; printf "overhead %.2f %%\n", o; exit !(o < 1.0) }' \
    || { echo "FAIL: overhead >= 1 %"; fail=1; }
grep -q "kernels=3400" "$out/argus.txt" || { echo "FAIL: program output changed"; fail=1; }
if grep -q "CUPTI is held\|tracing is off" "$out/argus.err"; then
    echo "FAIL: $(grep -m1 'tracing is off' "$out/argus.err")"; fail=1
fi
cat >"$out/check_report.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# docs/REPORT_SCHEMA.md: job.source, steps.count, collection.kernels_seen / dropped_events.
src = r["job"]["source"]
steps = r["steps"]["count"]
seen = r["collection"]["kernels_seen"]
dropped = r["collection"]["dropped_events"]
print("report: source=%s steps=%d kernels_seen=%d dropped=%d" % (src, steps, seen, dropped))
ok = True
if src != "cupti":
    print("FAIL source is %s, not cupti" % src); ok = False
# 200 ProfilerStep ranges (0..199); those that ran before MPI was up (Argus starts MPI
# itself for this program, which never calls MPI_Init) are not summarised.
if r["steps"]["last"] != 199 or not 1 <= steps <= 200:
    print("FAIL steps"); ok = False
# 17 kernels per step (8 forward, 8 backward, 1 optimizer).
if not (17 * steps - 17 <= seen <= 3400) or dropped != 0:
    print("FAIL kernel count"); ok = False
print("PASS report" if ok else "FAIL report")
sys.exit(0 if ok else 1)
PY
# The lone runs above (no launcher) and one under argus-run mpirun -np 1: each report
# counts the kernels and steps.
python3 "$out/check_report.py" "$out/argus-gpucheck-3/report.json" || fail=1
if command -v mpirun >/dev/null 2>&1 && [ -x "$b/wrapper/argus-run" ]; then
    ARGUS_OUTDIR="$out/mpi" ARGUS_MPI_SELF_INIT_MS=0 "$b/wrapper/argus-run" mpirun -np 1 "$out/two_kernels" 200 \
        >"$out/mpi.txt" 2>&1 || { echo "FAIL: argus-run"; fail=1; }
    rep=$(ls "$out"/mpi/argus-*/report.json 2>/dev/null | head -1)
    if [ -n "$rep" ]; then
        python3 "$out/check_report.py" "$rep" || fail=1
    else
        echo "FAIL: no report.json"; fail=1
    fi
fi
# A short PyTorch loop, when torch with CUDA is there.
if python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    cat >"$out/loop.py" <<'PY'
import sys, time, torch
sys.path.insert(0, sys.argv[1])
m = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(64, 1024, device="cuda")
t0 = time.time()
with torch.autograd.profiler.emit_nvtx():
    for i in range(200):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        loss = m(x).sum(); loss.backward(); opt.step(); opt.zero_grad()
        loss.item()
        torch.cuda.nvtx.range_pop()
print("torch_step_ms=%.4f" % ((time.time() - t0) * 1000 / 200))
PY
    python3 "$out/loop.py" "$top/python" | tee "$out/torch_plain.txt"
    ARGUS_MODE=on CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$cupti_dir/libcupti.so" \
        python3 "$out/loop.py" "$top/python" | tee "$out/torch_argus.txt"
fi
echo "outputs in $out"
[ $fail -eq 0 ] && echo PASS
exit $fail
