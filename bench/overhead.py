#!/usr/bin/env python3
"""overhead.py — Argus's cost on a real job: the PyTorch DDP job of the tests
(tests/integration/torch_ddp.py: CPU, gloo, one thread per rank) run with and without
argus-run, interleaved (with, without, with, ... so that the machine's load falls on both
alike), PAIRS pairs; prints one JSON line:

  per_step_ratio  median over pairs of (median step with / median step without), each
                  job's median step the mean of its ranks' own medians (torch_ddp.py's
                  last line); goal <= 1.01
  fixed_s         median over pairs of the job's extra wall time that is not per step:
                  (wall with - wall without) - steps x (step with - step without); the
                  start-up (preload, MPI's self-initialisation, the Argus threads) and the
                  finish (the last exchange, rank 0's report); goal <= 1 s
  finalize_s      median of the longest rank's last exchange, from Argus's own line
                  "last exchange took N ms" (ARGUS_LOG=info, reduce/agent.c)
  startup_s       fixed_s - finalize_s
and the goal flags. Run from the build directory: make bench-overhead, or
  /usr/bin/python3 SRC/bench/overhead.py --build . [--pairs 5] [--steps 60] [--np 2]
The job needs /usr/bin/python3 with torch (python3-torch); without it one line says so and
the exit status is 77.
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def env():
    e = dict(os.environ)
    e.update({"OMPI_MCA_btl": "self,vader", "OMPI_MCA_rmaps_base_oversubscribe": "1",
              "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_btl_tcp_if_include": "lo",
              "OMPI_MCA_oob_tcp_if_include": "lo", "MASTER_ADDR": "127.0.0.1",
              "GLOO_SOCKET_IFNAME": "lo", "ARGUS_LOG": "info"})
    if os.getuid() == 0:
        e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return e


def run(a, with_argus, out, n):
    job = ["mpirun", "-np", str(a.np), PY, os.path.join(SRC, "tests/integration/torch_ddp.py"),
           "--steps", str(a.steps), "--master-port", str(free_port())]
    e = env()
    if with_argus:
        job = [os.path.join(a.build, "tests/argus-run-build"), "--outdir", out, "--"] + job
        e["ARGUS_JOBID"] = "overhead-%d-%d" % (os.getpid(), n)
    t0 = time.monotonic()
    p = subprocess.run(job, env=e, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    # mpirun may interleave the ranks' lines (one's newline after another's text)
    got = re.findall(r"median step ([0-9.]+) ms, argus (active|off)", p.stdout)
    steps = [float(m[0]) for m in got]
    active = [m[1] for m in got]
    if p.returncode != 0 or len(steps) != a.np:
        sys.exit("overhead: the job failed (%s argus): %s" % ("with" if with_argus else "without",
                                                             (p.stdout + p.stderr)[-2000:]))
    want = "active" if with_argus else "off"
    if any(x != want for x in active):
        sys.exit("overhead: Argus was %s in a job %s argus-run" % (active, "under" if with_argus
                                                                    else "outside"))
    fin = [float(x) for x in re.findall(r"last exchange took ([0-9.]+) ms", p.stderr)]
    return {"wall": wall, "step_ms": statistics.mean(steps),
            "finalize_s": max(fin) / 1000.0 if fin else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=".")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--np", type=int, default=2)
    a = ap.parse_args()
    if subprocess.run([PY, "-c", "import torch, torch.distributed"],
                      capture_output=True).returncode != 0:
        print(json.dumps({"bench": "overhead", "skipped": "%s cannot import torch" % PY}))
        return 77
    ratios, fixed, fins, pairs = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="argus-overhead.") as out:
        run(a, False, out, -1)  # warm the page cache (torch's import) for both alike
        for i in range(a.pairs):
            order = (True, False) if i % 2 == 0 else (False, True)
            r = {w: run(a, w, out, i) for w in order}
            w, wo = r[True], r[False]
            ratios.append(w["step_ms"] / wo["step_ms"])
            fixed.append((w["wall"] - wo["wall"]) - a.steps * (w["step_ms"] - wo["step_ms"]) / 1e3)
            if w["finalize_s"] is not None:
                fins.append(w["finalize_s"])
            pairs.append([round(w["step_ms"], 2), round(wo["step_ms"], 2),
                          round(w["wall"], 2), round(wo["wall"], 2)])
    ratio = statistics.median(ratios)
    fix = statistics.median(fixed)
    fin = statistics.median(fins) if fins else None
    print(json.dumps({
        "bench": "overhead", "job": "torch_ddp.py gloo CPU", "ranks": a.np, "steps": a.steps,
        "pairs": a.pairs, "per_step_ratio": round(ratio, 4),
        "per_step_ratios": [round(x, 4) for x in ratios],
        "fixed_s": round(fix, 3), "finalize_s": None if fin is None else round(fin, 3),
        "startup_s": None if fin is None else round(fix - fin, 3),
        "pairs_step_ms_wall_s": pairs,
        "goal_per_step_1pct": ratio <= 1.01, "goal_fixed_1s": fix <= 1.0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
