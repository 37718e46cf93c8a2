#!/usr/bin/env python3
"""torch_ddp.py — a real PyTorch DDP job on CPU (gloo), steps and phases marked for Argus.

Run one process per rank under mpirun (rank and size from OMPI_COMM_WORLD_RANK/SIZE, the
rendezvous on MASTER_ADDR:MASTER_PORT, default 127.0.0.1 and --master-port). A tiny MLP on
random data, one thread per rank, so a step takes some tens of ms on an oversubscribed CPU.
Each step is `argus.step(n)` with the phases forward, backward (DDP's gloo all-reduce runs
inside it: the ranks wait for each other there) and optimizer.

Injections (tests/integration/t_torch_ddp.sh):
  --slow-rank R --slow-from S --slow-steps N   rank R's forward pass does its work twice
      (a second pass of the model under no_grad: real extra compute, no sleep) for steps
      S .. S+N-1, i.e. a forward 2x slower
  --stall-rank R --stall-steps A,B,C --stall-ms MS   rank R sleeps MS ms at the start of
      those steps, inside the step but before any phase (a host stall: GC, JIT, a loader)
Prints one line per rank at the end: "rank R: done N steps, median step X ms".
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import argus  # noqa: E402  (python/argus.py, found through the source tree)


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=70)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--master-port", type=int, default=29500)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-from", type=int, default=20)
    p.add_argument("--slow-steps", type=int, default=20)
    p.add_argument("--stall-rank", type=int, default=-1)
    p.add_argument("--stall-steps", default="")
    p.add_argument("--stall-ms", type=float, default=500.0)
    return p.parse_args()


def main():
    a = parse()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(a.master_port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    torch.manual_seed(1234 + rank)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=size)

    layers = []
    for _ in range(a.layers):
        layers += [nn.Linear(a.width, a.width), nn.ReLU()]
    model = DDP(nn.Sequential(*layers, nn.Linear(a.width, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    stalls = {int(s) for s in a.stall_steps.split(",") if s}
    slow = range(a.slow_from, a.slow_from + a.slow_steps) if rank == a.slow_rank else range(0)

    walls = []
    for it in range(a.steps):
        x = torch.randn(a.batch, a.width)
        y = torch.randn(a.batch, 1)
        t0 = time.perf_counter()
        with argus.step(it):
            if rank == a.stall_rank and it in stalls:
                time.sleep(a.stall_ms / 1000.0)
            with argus.phase("forward"):
                out = model(x)
                loss = loss_fn(out, y)
                if it in slow:
                    with torch.no_grad():  # the same work again: a forward 2x slower
                        loss_fn(model.module(x), y)
            with argus.phase("backward"):
                opt.zero_grad(set_to_none=True)
                loss.backward()
            with argus.phase("optimizer"):
                opt.step()
        walls.append((time.perf_counter() - t0) * 1000.0)

    dist.barrier()
    dist.destroy_process_group()
    print("rank %d: done %d steps, median step %.1f ms, argus %s"
          % (rank, a.steps, statistics.median(walls), "active" if argus.active() else "off"),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
