#!/usr/bin/env python3
"""step_app.py — what Argus's threads cost per window while a job steps.

One process per rank under mpirun (the rank from OMPI_COMM_WORLD_RANK); it never calls
MPI_Init (Argus initialises MPI on its own thread, as in a PyTorch job). It marks steps of
--step-ms (sleeps, with two phases; python/argus.py) until Argus is active, --warm more,
then --measure-s seconds of steps over which it counts, per thread of its own process
(/proc/self/task/*), the voluntary context switches (each one wake-up from a sleep) and
the CPU time (schedstat, ns). Prints one JSON line per rank: {"rank", "active", "steps",
"windows" (steps / --window), "threads": {comm: {"wakeups", "cpu_ms"}}}; Argus's threads
are named argus-reduce (reduce/agent.c), argus-stacks (tracer/hoststack.c) and
argus-selfinit (reduce/selfinit.c). Used by tests/integration/t_step_cost.sh.
"""
import argparse
import json
import os
import sys
import time

from argus_app import argus, steps, threads, warm_up  # beside this file


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--warm", type=int, default=30)
    p.add_argument("--step-ms", type=float, default=20.0)
    p.add_argument("--measure-s", type=float, default=4.0)
    p.add_argument("--window", type=int, default=10)
    a = p.parse_args()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    it = warm_up(a.warm, a.step_ms)  # the Argus threads are up, the clock burst is over
    it = steps(it, (a.window - it % a.window) % a.window, a.step_ms)  # at a window's start
    before = threads(cpu=True)
    first = it
    t0 = time.monotonic()
    while time.monotonic() - t0 < a.measure_s or (it - first) % a.window:
        it = steps(it, 1, a.step_ms)
    after = threads(cpu=True)
    rows = {}
    for tid, (comm, vol, ns) in after.items():
        if tid not in before or not comm.startswith("argus-"):
            continue
        r = rows.setdefault(comm, {"wakeups": 0, "cpu_ms": 0.0})
        r["wakeups"] += vol - before[tid][1]
        r["cpu_ms"] = round(r["cpu_ms"] + (ns - before[tid][2]) / 1e6, 3)
    steps(it, a.warm, a.step_ms)
    print(json.dumps({"rank": rank, "active": bool(argus.active()), "steps": it - first,
                      "windows": (it - first) // a.window, "threads": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
