#!/bin/bash
# check_cupti.sh — the tracer's GPU check, one prepared run of a few minutes on a machine
# with a CUDA GPU (NOT part of `make check`; it needs a build of Argus with CUPTI, and nvcc
# and/or PyTorch with CUDA). It checks, and prints as one JSON line:
#   injection       libargus.so injected through CUDA_INJECTION64_PATH holds CUPTI (no
#                   "CUPTI unavailable" line) and writes a report whose source is cupti;
#   kernel_records  the report's kernels_seen against what two_kernels.cu launched;
#   by_launch       two_kernels.cu run "behind" (the host up to 16 steps ahead): every
#                   step was assigned by launch, each step holding exactly its 17 kernels
#                   (the collector's exit line: "GPU steps: N by launch, 0 by start time;
#                   17 to 17 activities a step");
#   nccl_plugin     a 1-rank NCCL all-reduce under NCCL_PROFILER_PLUGIN=libargus_nccl.so:
#                   NCCL says it loaded the plugin (skipped when the plugin was not built or
#                   no NCCL is found: the system's libnccl, else PyTorch's);
#   overhead_pct    step time of two_kernels.cu (and of a small PyTorch training loop when
#                   torch has CUDA) with and without Argus, interleaved, medians of 3.
# Usage: tests/gpu/check_cupti.sh [builddir]   (default: the current directory)
# Exit 0 = pass, 1 = fail, 77 = skipped (no GPU); the JSON line is printed in every case.
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-.}" && pwd)
lib="$b/.libs/libargus.so"
plugin="$b/.libs/libargus_nccl.so"
out=$(mktemp -d "${TMPDIR:-/tmp}/argus-gpu-check.XXXXXX")
declare -A R=([ok]=false)
fails=()

json() { # the result line: every R key, strings quoted unless numbers/true/false/null
    local k v sep="" line="{\"check\":\"gpu_cupti\""
    for k in $(printf '%s\n' "${!R[@]}" | sort); do
        v=${R[$k]}
        if [[ $v =~ ^(-?[0-9]+(\.[0-9]+)?|true|false|null)$ ]]; then
            line+=",\"$k\":$v"
        else
            v=${v//\\/\\\\}; v=${v//\"/\\\"}; line+=",\"$k\":\"$v\""
        fi
    done
    sep=$(IFS=';'; echo "${fails[*]:-}"); sep=${sep//\"/\\\"}
    echo "$line,\"failures\":\"$sep\",\"outputs\":\"$out\"}"
}
fail() { fails+=("$1"); }
finish() { [ ${#fails[@]} -eq 0 ] && R[ok]=true; json; [ ${#fails[@]} -eq 0 ]; exit $?; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$out/gpus.txt" 2>&1; then
    R[skipped]="no GPU (nvidia-smi -L failed or missing)"; fail "no GPU"; json; exit 77
fi
R[gpu]=$(head -1 "$out/gpus.txt" | cut -c1-80)
[ -f "$lib" ] || { fail "$lib missing: build Argus with CUPTI first"; finish; }
cupti=$(ldd "$lib" | awk '/libcupti/{print $3; exit}')
[ -n "$cupti" ] || { fail "libargus.so is not linked with libcupti (a build without CUPTI)"; finish; }
have_torch=0
python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && have_torch=1
R[torch]=$([ $have_torch = 1 ] && echo true || echo false)

with_argus() { # $1: job id; the rest: the command, in the environment argus-run gives
    local id=$1; shift
    ARGUS_MODE=on ARGUS_LOG=info ARGUS_OUTDIR="$out" ARGUS_JOBID="gpucheck-$id" \
        ARGUS_MPI_SELF_INIT_MS=0 CUDA_INJECTION64_PATH="$lib" \
        NVTX_INJECTION64_PATH="$cupti" LD_PRELOAD="$lib" "$@"
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "null")}'; }
pct() { # (a - p) / p in %, null unless both are numbers
    awk -v p="$1" -v a="$2" 'BEGIN { if (p ~ /^[0-9.]+$/ && a ~ /^[0-9.]+$/ && p > 0)
        printf "%.2f", (a - p) / p * 100; else print "null" }'
}

# ---- two_kernels.cu: injection, kernel records, steps by launch, overhead ----------------
if command -v nvcc >/dev/null 2>&1 && nvcc -O2 -o "$out/two_kernels" "$here/two_kernels.cu" \
        >"$out/nvcc.txt" 2>&1; then
    : >"$out/plain.ms"; : >"$out/argus.ms"
    if ! "$out/two_kernels" 2 >"$out/probe.txt" 2>&1; then
        fail "two_kernels does not run (no usable CUDA device?): $(head -c 200 "$out/probe.txt")"
        finish
    fi
    for i in 1 2 3; do
        "$out/two_kernels" 200 2>/dev/null | sed -n 's/.*step_ms=//p' >>"$out/plain.ms"
        with_argus "$i" "$out/two_kernels" 200 >"$out/argus$i.txt" 2>"$out/argus$i.err"
        sed -n 's/.*step_ms=//p' "$out/argus$i.txt" >>"$out/argus.ms"
    done
    p=$(median <"$out/plain.ms"); a=$(median <"$out/argus.ms")
    R[two_kernels_step_ms]=$p; R[two_kernels_step_ms_argus]=$a; R[overhead_pct]=$(pct "$p" "$a")
    awk -v o="${R[overhead_pct]}" 'BEGIN { exit !(o != "null" && o < 1.0) }' ||
        fail "two_kernels overhead ${R[overhead_pct]} % (goal < 1 %)"
    grep -q "kernels=3400" "$out/argus3.txt" || fail "two_kernels output changed under Argus"
    R[injection]=false
    rep="$out/argus-gpucheck-3/report.json"
    if grep -q "CUPTI unavailable" "$out"/argus*.err; then
        fail "$(grep -h -m1 'CUPTI unavailable' "$out"/argus*.err)"
    elif [ -f "$rep" ]; then
        R[source]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["job"]["source"])' "$rep")
        [ "${R[source]}" = cupti ] && R[injection]=true
        R[kernel_records]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["collection"]["kernels_seen"])' "$rep")
        [ "${R[source]}" = cupti ] || fail "report source ${R[source]}, not cupti"
        # 17 kernels a step; steps before MPI was up are not summarised.
        k=${R[kernel_records]}
        if ! [ "$k" -ge 17 ] || ! [ "$k" -le 3400 ] || [ $((k % 17)) -ne 0 ]; then
            fail "kernels_seen $k"
        fi
    else
        fail "no report.json from the injected run"
    fi
    # The GPU behind the host: every step by launch, 17 kernels each.
    with_argus behind "$out/two_kernels" 200 behind >"$out/behind.txt" 2>"$out/behind.err"
    line=$(grep -m1 "GPU steps:" "$out/behind.err")
    R[behind_line]=${line#argus: }
    if [[ $line =~ ([0-9]+)\ by\ launch,\ ([0-9]+)\ by\ start\ time\;\ ([0-9]+)\ to\ ([0-9]+) ]]; then
        R[steps_by_launch]=${BASH_REMATCH[1]}; R[steps_by_time]=${BASH_REMATCH[2]}
        R[by_launch]=$([ "${BASH_REMATCH[1]}" -ge 190 ] && [ "${BASH_REMATCH[2]}" = 0 ] &&
            [ "${BASH_REMATCH[3]}" = 17 ] && [ "${BASH_REMATCH[4]}" = 17 ] && echo true || echo false)
    else
        R[by_launch]=false
    fi
    [ "${R[by_launch]}" = true ] || fail "steps not assigned by launch: ${line:-no GPU steps line}"
else
    [ $have_torch = 1 ] || fail "neither nvcc nor PyTorch with CUDA: nothing to run"
    R[two_kernels]="skipped: no nvcc"
fi

# ---- a small PyTorch training loop: overhead --------------------------------------------
if [ $have_torch = 1 ]; then
    cat >"$out/loop.py" <<'PY'
import time, torch
m = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(64, 1024, device="cuda")
for i in range(320):
    if i == 20:
        torch.cuda.synchronize(); t0 = time.time()
    torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
    loss = m(x).sum(); loss.backward(); opt.step(); opt.zero_grad()
    loss.item()
    torch.cuda.nvtx.range_pop()
print("step_ms=%.4f" % ((time.time() - t0) * 1000 / 300))
PY
    : >"$out/tplain.ms"; : >"$out/targus.ms"
    for i in 1 2 3; do
        python3 "$out/loop.py" 2>/dev/null | sed -n 's/.*step_ms=//p' >>"$out/tplain.ms"
        with_argus "torch$i" python3 "$out/loop.py" 2>>"$out/torch.err" |
            sed -n 's/.*step_ms=//p' >>"$out/targus.ms"
    done
    p=$(median <"$out/tplain.ms"); a=$(median <"$out/targus.ms")
    R[torch_step_ms]=$p; R[torch_step_ms_argus]=$a; R[torch_overhead_pct]=$(pct "$p" "$a")
    awk -v o="${R[torch_overhead_pct]}" 'BEGIN { exit !(o != "null" && o < 1.0) }' ||
        fail "PyTorch loop overhead ${R[torch_overhead_pct]} % (goal < 1 %)"
fi

# ---- NCCL's profiler plugin ---------------------------------------------------------------
nccl=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so/{print $NF; exit}')
if [ ! -f "$plugin" ]; then
    R[nccl_plugin]="skipped: $plugin not built"
elif [ $have_torch = 0 ]; then
    R[nccl_plugin]="skipped: no PyTorch with CUDA to drive NCCL"
else
    cat >"$out/nccl.py" <<'PY'
import os, torch, torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(1 << 20, device="cuda")
for _ in range(20):
    dist.all_reduce(t)
torch.cuda.synchronize()
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libnccl" in l]
print("nccl=%s version=%s ok=%d" % (maps[0] if maps else "static",
      ".".join(map(str, torch.cuda.nccl.version())), int(t[0].item() == 1.0)))
dist.destroy_process_group()
PY
    nccl_try() { # $1: a libnccl to preload, or ""; 0 when the all-reduce ran right
        env NCCL_PROFILER_PLUGIN="$plugin" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV \
            ${1:+LD_PRELOAD="$1"} python3 "$out/nccl.py" >"$out/nccl.txt" 2>&1 &&
            grep -q "ok=1" "$out/nccl.txt"
    }
    # The system's NCCL when there is one (else, or when it does not fit, PyTorch's own).
    { [ -n "$nccl" ] && nccl_try "$nccl"; } || nccl_try ""
    R[nccl]=$(sed -n 's/^nccl=\([^ ]*\) version=\([^ ]*\).*/\1 \2/p' "$out/nccl.txt")
    if ! grep -q "ok=1" "$out/nccl.txt"; then
        R[nccl_plugin]=failed; fail "NCCL all-reduce under the plugin failed (see $out/nccl.txt)"
    elif grep -i "profiler" "$out/nccl.txt" | grep -iq "loaded\|argus" &&
         ! grep -i "profiler" "$out/nccl.txt" | grep -iq "fail\|could not\|not found"; then
        R[nccl_plugin]=loaded
    else
        R[nccl_plugin]=failed; fail "NCCL did not load $plugin (see $out/nccl.txt)"
    fi
fi
finish
