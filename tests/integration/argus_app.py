"""argus_app.py — what idle_app.py and step_app.py share: python/argus.py found through
the source tree, the step loop they mark (two phases of sleep), the wait until Argus is
active, and a snapshot of their own process's threads (/proc/self/task/*)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import argus  # noqa: E402  (python/argus.py)


def threads(cpu=False):
    """{tid: (comm, voluntary switches)} for every thread of this process, with the CPU
    time (schedstat, ns) as a third member when cpu is true; a thread that cannot be read
    (it ended meanwhile) is left out."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                comm = f.read().strip()
            with open("/proc/self/task/%s/status" % tid) as f:
                vol = next(int(x.split()[1]) for x in f if x.startswith("voluntary_ctxt"))
            if cpu:
                with open("/proc/self/task/%s/schedstat" % tid) as f:
                    ns = int(f.read().split()[0])
        except (OSError, StopIteration, ValueError):
            continue
        out[int(tid)] = (comm, vol, ns) if cpu else (comm, vol)
    return out


def steps(first, n, ms):
    """Steps first .. first+n-1 of ms milliseconds each (forward, then backward); the next
    step id."""
    for it in range(first, first + n):
        with argus.step(it):
            with argus.phase("forward"):
                time.sleep(ms / 2000.0)
            with argus.phase("backward"):
                time.sleep(ms / 2000.0)
    return first + n


def warm_up(warm, ms):
    """warm steps, one more at a time until Argus is active (at most 30 s), then warm more
    (its threads are up and have seen steps); the next step id."""
    it = steps(0, warm, ms)
    t_end = time.monotonic() + 30
    while not argus.active() and time.monotonic() < t_end:
        it = steps(it, 1, ms)
    return steps(it, warm, ms)
