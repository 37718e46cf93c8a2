#!/usr/bin/env python3
"""idle_app.py — how often Argus's threads wake while nothing is pending.

One process per rank under mpirun (the rank from OMPI_COMM_WORLD_RANK); it never calls
MPI_Init, so Argus initialises MPI on its own thread (reduce/selfinit.h), as in a PyTorch
job. It runs --warm steps of --step-ms each (steps and phases marked through
python/argus.py) until Argus is active, then sleeps --settle-s and --idle-s seconds,
between steps (--where between) or inside an open step (--where step: a stall, whose
host-stack samples are taken in its first second), then --warm more steps.
Over the --idle-s part it counts, per thread of its own process, the voluntary context
switches (/proc/self/task/*/status): each is one wake-up from a sleep. Prints one JSON
line per rank: {"rank", "where", "idle_s", "threads": {name: wake-ups per second}}; the
threads are named by their comm (the Argus thread is "argus-reduce", the host-stack
watcher "argus-stacks"; the program's own main thread is "main").
Used by tests/integration/t_idle_wakeups.sh.
"""
import argparse
import json
import os
import sys
import threading
import time

from argus_app import argus, steps, threads, warm_up  # beside this file


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--warm", type=int, default=20)
    p.add_argument("--step-ms", type=float, default=20.0)
    p.add_argument("--idle-s", type=float, default=5.0)
    p.add_argument("--where", choices=("between", "step"), default="between")
    p.add_argument("--settle-s", type=float, default=1.0)
    a = p.parse_args()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    it = warm_up(a.warm, a.step_ms)  # the Argus threads are up and have seen steps
    main_tid = threading.get_native_id()
    if a.where == "step":
        argus.step_begin(it)
    time.sleep(a.settle_s)  # a stall's host-stack samples (tracer/hoststack.h) come first
    before = threads()
    t0 = time.monotonic()
    time.sleep(a.idle_s)
    took = time.monotonic() - t0
    after = threads()
    if a.where == "step":
        argus.step_end(it)
        it += 1
    rates = {}
    for tid, (comm, vol) in after.items():
        if tid not in before:
            continue
        name = "main" if tid == main_tid else comm
        if name in rates:  # unnamed threads share the program's comm: keep each apart
            name = "%s-%d" % (name, tid)
        rates[name] = round((vol - before[tid][1]) / took, 1)
    steps(it, a.warm, a.step_ms)
    print(json.dumps({"rank": rank, "where": a.where, "idle_s": round(took, 2),
                      "active": bool(argus.active()), "threads": rates}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
