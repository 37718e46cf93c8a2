"""kineto_app.py — a real PyTorch training loop on CPU under torch.profiler with
with_stack=True, writing one Kineto Chrome trace per rank (tests/stacks/t_kineto.sh):

    kineto_app.py OUT RANK WORLD STEPS STALL_STEPS STALL_MS

Rank RANK of WORLD (distributedInfo is written by the profiler only under
torch.distributed, so the trace is named rank-N: argus-analyze takes the rank from the
name). In each step of STALL_STEPS (comma-separated) it spends STALL_MS in stall_here
before its training steps.
"""
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile


def stall_here(ms):
    end = time.monotonic() + ms / 1000.0
    while time.monotonic() < end:
        time.sleep(0.005)


def train_step(model, opt, x):
    opt.zero_grad()
    loss = model(x).sum()
    loss.backward()
    opt.step()


def main():
    out, rank, world, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    stall_steps = {int(s) for s in sys.argv[5].split(",") if s}
    stall_ms = int(sys.argv[6])
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        for step in range(steps):
            if step in stall_steps:
                stall_here(stall_ms)
            for _ in range(3):
                train_step(model, opt, x)
            prof.step()
    prof.export_chrome_trace(out)
    print("rank %d of %d: %d steps, stalls at %s" % (rank, world, steps, sorted(stall_steps)))


main()
