"""stall_app.py — a CPython program for the host-stack tests (tests/stacks/t_python.sh):
steps and phases marked with python/argus.py; rank STALL_RANK spends 0.5 s in
load_batch_slowly() (outside any phase, the host's time) at the steps listed; every other
step is 2 x 15 ms of busy work. With --own-signal the program owns the sampler's signal
first (Argus must stand down). Run one process per rank under mpirun (Argus initialises MPI
itself)."""
import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import argus  # noqa: E402


def busy(ms):
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def load_batch_slowly(ms):
    time.sleep(ms / 1e3)  # STALL-LINE: the line the report must name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--stall-rank", type=int, default=-1)
    ap.add_argument("--stall-steps", default="")
    ap.add_argument("--stall-ms", type=float, default=500)
    ap.add_argument("--own-signal", action="store_true",
                    help="install a handler of SIGRTMAX-3 first (the sampler's signal)")
    a = ap.parse_args()
    if a.own_signal:
        signal.signal(signal.SIGRTMAX - 3, lambda *_: None)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
    stalls = {int(x) for x in a.stall_steps.split(",") if x}
    for it in range(a.steps):
        with argus.step(it):
            if rank == a.stall_rank and it in stalls:
                load_batch_slowly(a.stall_ms)
            with argus.phase("forward"):
                busy(15)
            with argus.phase("backward"):
                busy(15)
    print("rank %d: done %d steps, argus %s" % (rank, a.steps,
                                                "active" if argus.active() else "off"))


if __name__ == "__main__":
    main()
