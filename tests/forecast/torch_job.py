#!/usr/bin/env python3
"""torch_job.py - a real PyTorch DDP training job on CPU (gloo) for the forecast's data.

Recorded by tests/forecast/record_torch.sh into tests/data/torch/ (the spools that
bench/forecast.py and tests/forecast/t_predict_torch.sh read). One process per rank
under mpirun (rank and size from OMPI_COMM_WORLD_RANK/SIZE, the rendezvous on
MASTER_ADDR:MASTER_PORT). An MLP on random data with momentum SGD, one thread per rank;
each step is `argus.step(n)` with the phases forward, backward (DDP's gloo all-reduce runs
inside it) and optimizer. Imports nothing of Argus but python/argus.py.

What the forecast must handle, each an option (none given: a plain run):
  --ckpt-every K --ckpt-dir D   rank 0 writes a checkpoint (torch.save of the model's and
      the optimizer's state, then fsync) at the end of every K-th step, inside the step
      (phase "checkpoint"); the other ranks wait for it at the next step's all-reduce
  --regime-from S --regime-batch B   from step S on, batches of B samples (a new regime)
  --total-steps N   argus.set_total_steps(N): the planned steps, recorded in the spool
  --progress FILE   rank 0 writes the number of steps done to FILE every 5 steps (the
      recorder starts and stops its CPU-hog neighbour by it)
  --walls PREFIX    each rank R writes PREFIX.R at the end: its own wall time of every
      step (ms, time.perf_counter around argus.step), one a line (the recorder keeps the
      slowest rank's per step: a truth measured without Argus)
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
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--master-port", type=int, default=29500)
    p.add_argument("--ckpt-every", type=int, default=0)
    p.add_argument("--ckpt-dir", default="")
    p.add_argument("--regime-from", type=int, default=-1)
    p.add_argument("--regime-batch", type=int, default=0)
    p.add_argument("--total-steps", type=int, default=0)
    p.add_argument("--progress", default="")
    p.add_argument("--walls", default="")
    a = p.parse_args()
    if a.ckpt_every and not a.ckpt_dir:
        p.error("--ckpt-every needs --ckpt-dir")
    if a.regime_from >= 0 and a.regime_batch <= 0:
        p.error("--regime-from needs --regime-batch")
    return a


def progress(path, done):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % done)
    os.replace(tmp, path)


def checkpoint(model, opt, path):
    with open(path, "wb") as f:
        torch.save({"model": model.module.state_dict(), "opt": opt.state_dict()}, f)
        f.flush()
        os.fsync(f.fileno())


def main():
    a = parse()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(a.master_port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    torch.manual_seed(a.seed + rank)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=size)
    if a.total_steps:
        argus.set_total_steps(a.total_steps)

    layers = []
    for _ in range(a.layers):
        layers += [nn.Linear(a.width, a.width), nn.ReLU()]
    model = DDP(nn.Sequential(*layers, nn.Linear(a.width, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.MSELoss()

    walls = []
    for it in range(a.steps):
        b = a.regime_batch if 0 <= a.regime_from <= it else a.batch
        x = torch.randn(b, a.width)
        y = torch.randn(b, 1)
        t0 = time.perf_counter()
        with argus.step(it):
            with argus.phase("forward"):
                loss = loss_fn(model(x), y)
            with argus.phase("backward"):
                opt.zero_grad(set_to_none=True)
                loss.backward()
            with argus.phase("optimizer"):
                opt.step()
            if rank == 0 and a.ckpt_every and (it + 1) % a.ckpt_every == 0:
                with argus.phase("checkpoint"):
                    checkpoint(model, opt, os.path.join(a.ckpt_dir, "ckpt.pt"))
        walls.append((time.perf_counter() - t0) * 1000.0)
        if rank == 0 and a.progress and (it + 1) % 5 == 0:
            progress(a.progress, it + 1)

    if a.walls:
        with open("%s.%d" % (a.walls, rank), "w") as f:
            f.write("".join("%.3f\n" % w for w in walls))
    dist.barrier()
    dist.destroy_process_group()
    print("rank %d: done %d steps, median step %.1f ms, argus %s"
          % (rank, a.steps, statistics.median(walls), "active" if argus.active() else "off"),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
