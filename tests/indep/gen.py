#!/usr/bin/python3
"""gen.py - an independent scenario source for Argus: a small discrete-event model of
data-, tensor- and pipeline-parallel training that writes one Kineto (PyTorch profiler)
trace per rank plus truth.json. Standard library only; shares no code with argus-simtrain.

Model (tests/indep/README.md): every rank is a program (a Python generator) run by a
scheduler that resolves its communication requests when all parties have posted them.
A rank has a host thread (launch costs, data loader, stalls, blocking receives, a final
synchronise) and two GPU streams (compute 7, NCCL 20). Collectives end for every member
at the last member's arrival plus a transfer time; pipeline send/recv is a rendezvous
of the two kernels, and the receive is either host-blocking (the host waits until the
data is nearly there, then launches a short receive: gloo-like) or asynchronous (a long
SendRecv kernel, NCCL-like). Schedule: GPipe (all forwards, then all backwards).

Data levels (--level): kernels (the GPU job's full traces), phases (the same job run on the
CPU with gloo, as a CPU DDP job is: the host thread does the work, so its phase ranges
hold it; the traces keep only the user_annotation ranges), steps (one steps.csv of each
rank's own iteration time: its step wall without the time it waited for other ranks,
found by replaying the rank's program, same random draws, against peers that are never
late).

usage: gen.py -o DIR [--scenario S] [--seed N] [--ranks N] [--layout dp|pp|tp]
              [--steps N] [--severity X] [--p2p blocking|async] [--level L]
"""
import argparse
import json
import math
import os
import random
import sys

SCENARIOS = ("clean", "compute_straggler", "host_stall", "slow_stage", "chronic",
             "checkpoint", "group_slow", "speed_classes")
LEVELS = ("kernels", "phases", "steps")
P2P_MB = 32                         # every pipeline message (activations, gradients), MB
BASE_NS = 1_800_000_000_000_000_000
STREAM_COMPUTE, STREAM_COMM = 7, 20
GEMM_F = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"
GEMM_B = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt"
ELT_F = ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl"
         "(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}>(int, ...)")
ELT_B = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16>"
EMBED = "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long>"
LOSS = "void at::native::cunn_SoftMaxForward<4, float, float, float, at::native::LogSoftMax>"
ADAM = "void at::native::multi_tensor_apply_kernel<at::native::FusedAdamMathFunctor>"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
SENDRECV = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"


def lognorm(rng, median, sigma):
    return median * math.exp(rng.gauss(0.0, sigma))


class Layout:
    """tp fastest, then pipeline stage, then data-parallel replica: the stages of one
    replica are contiguous (DeepSpeed's pipe/data/model order read backwards), declared in
    every trace's pg_config, so nothing relies on a default rank order."""

    def __init__(self, name, ranks):
        self.tp, self.pp = {"dp": (1, 1), "pp": (1, 4), "tp": (2, 2)}[name]
        if ranks % (self.tp * self.pp):
            raise ValueError("--ranks %d is not a multiple of tp*pp = %d"
                             % (ranks, self.tp * self.pp))
        self.dp = ranks // (self.tp * self.pp)
        self.n = ranks

    def rank(self, d, s, t):
        return (d * self.pp + s) * self.tp + t

    def coords(self, r):
        return r // (self.pp * self.tp), (r // self.tp) % self.pp, r % self.tp

    def groups(self, r):
        d, s, t = self.coords(r)
        return {
            "tp": [self.rank(d, s, x) for x in range(self.tp)],
            "pp": [self.rank(d, x, t) for x in range(self.pp)],
            "dp": [self.rank(x, s, t) for x in range(self.dp)],
        }


class Rank:
    """One rank's clocks and its trace events."""

    def __init__(self, r, pid):
        self.r, self.pid = r, pid
        self.host = 0.0          # ns: when the host thread is next free
        self.gpu = 0.0           # ns: when the compute stream is next free
        self.comm = 0.0          # ns: when the NCCL stream is next free
        self.corr = 1
        self.ev = []
        self.walls = []          # (start, end) of every step, ns

    def annotate(self, name, t0, t1):
        self.ev.append(("user_annotation", name, t0, t1, None))

    def launch(self, cost):
        """A cudaLaunchKernel at the host's time; returns (correlation, launch time)."""
        c, t = self.corr, self.host
        self.corr += 1
        self.ev.append(("cuda_runtime", "cudaLaunchKernel", t, t + cost, c))
        self.host = t + cost
        return c, t

    def kernel(self, name, stream, t0, t1, c, cat="kernel"):
        self.ev.append((cat, name, t0, t1, (c, stream)))


class Job:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.lay = Layout(a.layout, a.ranks)
        self.ranks = [Rank(r, 1000 + r) for r in range(a.ranks)]
        self.mb = 1 if self.lay.pp == 1 else 8        # micro-batches per step
        self.layers = 4 if self.lay.pp == 1 else 1    # layers per stage
        self.cpu = a.level == "phases"     # the work runs on the host thread (gloo)
        self.truth = {"source": "indep", "scenario": a.scenario, "seed": a.seed,
                      "ranks": a.ranks, "steps": a.steps, "p2p": a.p2p, "level": a.level,
                      "exec": "cpu" if self.cpu else "gpu",
                      "layout": {"tp": self.lay.tp, "pp": self.lay.pp, "dp": self.lay.dp},
                      "faults": [], "chronic": []}
        self._plan()

    # ---- what goes wrong, drawn once ------------------------------------------------
    def _plan(self):
        a, rng, n = self.a, self.rng, self.a.ranks
        # static per-rank speed: GPUs of one model differ by about 1 %
        self.speed = [lognorm(rng, 1.0, 0.01) for _ in range(n)]
        self.slow = {}                      # rank -> (from step, factor)
        self.stall = {}                     # (rank, step) -> ns
        self.event = {}                     # rank -> (from step, factor), on top of slow
        self.ckpt_every = 0
        onset = a.steps // 3
        if a.scenario == "compute_straggler":
            r = rng.randrange(n)
            self.slow[r] = (onset, a.severity)
            self.truth["faults"].append({"kind": "compute_straggler", "ranks": [r],
                                         "steps": [onset, a.steps - 1],
                                         "severity": a.severity})
        elif a.scenario == "slow_stage":
            if self.lay.pp < 2:
                raise ValueError("slow_stage needs a pipeline layout (pp or tp)")
            s = rng.randrange(self.lay.pp)
            members = sorted(self.lay.rank(d, s, t) for d in range(self.lay.dp)
                             for t in range(self.lay.tp))
            for r in members:
                self.slow[r] = (onset, a.severity)
            self.truth["faults"].append({"kind": "pipeline_bubble", "ranks": members,
                                         "stage": s, "steps": [onset, a.steps - 1],
                                         "severity": a.severity})
        elif a.scenario == "host_stall":
            r = rng.randrange(n)
            steps, s = [], 8 + rng.randrange(4)
            while s < a.steps - 3 and len(steps) < 4:
                steps.append(s)
                s += 4 + rng.randrange(a.steps // 5 + 1)
            for s in steps:
                self.stall[(r, s)] = rng.uniform(0.3e9, 0.6e9)
            self.truth["faults"].append({"kind": "host_stall", "ranks": [r],
                                         "steps": steps,
                                         "stall_ms": [round(self.stall[(r, s)] / 1e6, 1)
                                                      for s in steps]})
        elif a.scenario == "chronic":
            for r in rng.sample(range(n), max(1, n // 8)):
                f = rng.uniform(1.05, 1.15)
                self.slow[r] = (0, f)
                self.truth["chronic"].append({"rank": r, "factor": round(f, 3)})
            self.truth["chronic"].sort(key=lambda c: c["rank"])
        elif a.scenario == "checkpoint":
            self.ckpt_every = a.period
            self.truth["faults"].append({"kind": "iteration_jitter", "ranks": [],
                                         "period_steps": a.period, "severity": 1.7,
                                         "steps": list(range(a.period - 1, a.steps,
                                                             a.period))})
        elif a.scenario == "group_slow":   # four ranks (n/4 when fewer) slow down together
            members = sorted(rng.sample(range(n), max(1, min(4, n // 4))))
            for r in members:
                self.slow[r] = (onset, a.severity)
            self.truth["faults"].append({"kind": "compute_straggler", "ranks": members,
                                         "steps": [onset, a.steps - 1],
                                         "severity": a.severity, "together": True})
        elif a.scenario == "speed_classes":
            # two classes of ranks, the slow one ~4x the fast one, and no declared groups
            # (write()): nothing but the step times says who is a peer of whom. Then two
            # ranks become --severity slower than their own past.
            if a.layout != "dp":
                raise ValueError("speed_classes is a job without layout: --layout dp")
            slow = sorted(rng.sample(range(n), n // 2))
            for r in slow:
                self.slow[r] = (0, lognorm(rng, 4.0, 0.03))
            fast = sorted(set(range(n)) - set(slow))
            self.truth["speed_classes"] = {"fast": fast, "slow": slow, "factor": 4.0}
            event = sorted(rng.sample(range(n), 2))
            for r in event:
                self.event[r] = (onset, a.severity)
            self.truth["faults"].append({"kind": "compute_straggler", "ranks": event,
                                         "steps": [onset, a.steps - 1],
                                         "severity": a.severity})
        # per-step, job-wide work (batch content: sequence lengths) and per-rank noise
        sig = a.variability or {"dp": 0.11, "pp": 0.13, "tp": 0.12}[a.layout]
        self.work = [lognorm(rng, 1.0, sig) for _ in range(a.steps)]
        self.noise = [[lognorm(rng, 1.0, 0.02) for _ in range(n)] for _ in range(a.steps)]

    def factor(self, r, step):
        f = self.speed[r] * self.work[step] * self.noise[step][r]
        if r in self.slow and step >= self.slow[r][0]:
            f *= self.slow[r][1]
        if r in self.event and step >= self.event[r][0]:
            f *= self.event[r][1]
        return f

    # ---- one rank's program -----------------------------------------------------------
    def program(self, r, R):
        """Rank r's program, its events and clocks in R. Yields communication requests;
        receives their resolution. Its random draws do not depend on what the requests
        resolve to, so a replay (solo()) makes the same draws."""
        lay, rng = self.lay, random.Random(self.a.seed * 7919 + r)
        cpu = self.cpu
        d, s, t = lay.coords(r)
        g = lay.groups(r)
        prev = lay.rank(d, s - 1, t) if s > 0 else None
        nxt = lay.rank(d, s + 1, t) if s < lay.pp - 1 else None
        blocking = self.a.p2p == "blocking"
        seq = {"tp": 0, "dp": 0}
        py = lambda: lognorm(rng, 25e3, 0.3)           # python between launches, ns
        lc = lambda: lognorm(rng, 6e3, 0.2)            # cudaLaunchKernel cost, ns
        lat = 4e3                                      # launch to earliest start, ns

        def compute(name, base_us, f):
            R.host += py()
            c, t0 = R.launch(lc())
            start = max(t0 + lat, R.gpu)
            R.gpu = start + lognorm(rng, base_us * 1e3 * f, 0.03)
            R.kernel(name, STREAM_COMPUTE, start, R.gpu, c)
            if cpu:                  # the host thread did the work
                R.host = R.gpu

        def collective(kind, mbytes, wait):
            members = g[kind]
            if len(members) < 2:
                return
            R.host += py()
            c, t0 = R.launch(lc())
            arrive = max(t0 + lat, R.gpu, R.comm)
            key = (kind, tuple(members), seq[kind])
            seq[kind] += 1
            end = yield ("coll", key, members, arrive, mbytes)
            R.kernel(ALLREDUCE, STREAM_COMM, arrive, end, c)
            R.comm = end
            if wait:
                R.gpu = max(R.gpu, end)
                if cpu:              # a blocking gloo all-reduce on the host thread
                    R.annotate("gloo:all_reduce", R.host, end)
                    R.host = end

        def send(peer, tag, mbytes=P2P_MB):
            R.host += py()
            c, t0 = R.launch(lc())
            start = max(t0 + lat, R.gpu, R.comm)
            end = yield ("send", (r, peer, tag), start, mbytes)
            R.kernel(SENDRECV, STREAM_COMM, start, end, c)
            R.comm = end

        def recv(peer, tag):
            R.host += py()
            sstart, mbytes = yield ("await_send", (peer, r, tag))
            t_wait0 = R.host
            if blocking or cpu:   # host waits for the data, then launches the receive
                R.host = max(R.host, sstart - 30e3)
                if R.host > t_wait0 and not cpu:
                    R.annotate("gloo:recv", t_wait0, R.host)
            c, t0 = R.launch(lc())
            start = max(t0 + lat, R.comm)
            end = max(start, sstart) + xfer(mbytes, rng)
            yield ("recv_done", (peer, r, tag), end)
            R.kernel(SENDRECV, STREAM_COMM, start, end, c)
            R.comm = end
            R.gpu = max(R.gpu, end)
            if cpu:               # gloo's recv returns with the data
                R.annotate("gloo:recv", t_wait0, end)
                R.host = max(R.host, end)

        durs = []                                     # this rank's past step walls
        for step in range(self.a.steps):
            f = self.factor(r, step)
            t_step = R.host
            if (r, step) in self.stall:      # GC / JIT: the host does nothing visible
                R.host += self.stall[(r, step)]
            t_dl = R.host
            R.host += lognorm(rng, 1.5e6, 0.4)
            R.annotate("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                       t_dl, R.host)
            if s == 0:
                c, t0 = R.launch(lc())
                st = max(t0 + lat, R.gpu)
                R.gpu = st + 180e3
                R.kernel("Memcpy HtoD (Pinned -> Device)", STREAM_COMPUTE, st, R.gpu, c,
                         cat="gpu_memcpy")
            for m in range(self.mb):
                if prev is not None:
                    yield from recv(prev, ("act", step, m))
                t0 = R.host
                if s == 0:
                    compute(EMBED, 300, f)
                for _ in range(self.layers):
                    compute(GEMM_F, 3000, f)
                    compute(ELT_F, 500, f)
                    yield from collective("tp", 16, True)
                if nxt is None:
                    compute(LOSS, 400, f)
                R.annotate("## forward ##", t0, R.host)
                if nxt is not None:
                    yield from send(nxt, ("act", step, m))
            for m in range(self.mb):
                if nxt is not None:
                    yield from recv(nxt, ("grad", step, m))
                t0 = R.host
                for layer in range(self.layers):
                    compute(GEMM_B, 6000, f)
                    compute(ELT_B, 800, f)
                    yield from collective("tp", 16, True)
                    if m == self.mb - 1 and layer in (self.layers // 2 - 1, self.layers - 1):
                        # DDP gradient buckets: two, one when a stage has a single layer
                        yield from collective("dp", 200, False)
                R.annotate("## backward ##", t0, R.host)
                if prev is not None:
                    yield from send(prev, ("grad", step, m))
            if cpu and R.comm > R.host:   # DDP's reducer waits for its gloo buckets
                R.annotate("gloo:all_reduce", R.host, R.comm)
                R.host = R.comm
            R.gpu = max(R.gpu, R.comm)                # the optimizer waits for gradients
            t0 = R.host
            for _ in range(3):
                compute(ADAM, 1000, f)
            R.annotate("Optimizer.step#AdamW.step", t0, R.host)
            t0 = R.host                               # loss.item(): wait for the GPU
            R.host = max(R.host, R.gpu, R.comm) + 10e3
            R.ev.append(("cuda_runtime", "cudaStreamSynchronize", t0, R.host, None))
            if self.ckpt_every and step % self.ckpt_every == self.ckpt_every - 1:
                t0 = R.host                           # torch.save on every rank
                past = sorted(durs[-self.ckpt_every:]) or [R.host - t_step]
                R.host += 0.7 * past[len(past) // 2] * lognorm(rng, 1.0, 0.03)
                R.annotate("checkpoint:save", t0, R.host)
            durs.append(R.host - t_step)
            R.walls.append((t_step, R.host))
            R.annotate("ProfilerStep#%d" % step, t_step, R.host)

    # ---- the scheduler ----------------------------------------------------------------
    def run(self):
        progs = {r: self.program(r, self.ranks[r]) for r in range(self.a.ranks)}
        ready = [(r, None) for r in progs]
        colls, sends, waiting, done = {}, {}, {}, 0
        while ready:
            r, val = ready.pop()
            try:
                req = progs[r].send(val)
            except StopIteration:
                done += 1
                continue
            kind = req[0]
            if kind == "coll":
                _, key, members, arrive, mb = req
                c = colls.setdefault(key, {})
                c[r] = arrive
                if len(c) == len(members):
                    end = max(c.values()) + xfer(mb * 2 * (len(members) - 1) / len(members),
                                                 self.rng)
                    for x in c:
                        ready.append((x, end))
                    del colls[key]
            elif kind == "send":
                _, key, start, mb = req
                sends[key] = (r, start, mb)
                if key in waiting:
                    ready.append((waiting.pop(key), (start, mb)))
            elif kind == "await_send":
                key = req[1]
                if key in sends:
                    ready.append((r, sends[key][1:]))
                else:
                    waiting[key] = r
            elif kind == "recv_done":
                _, key, end = req
                sender = sends.pop(key)[0]
                ready.append((sender, end))
                ready.append((r, None))
        if done != self.a.ranks:
            raise RuntimeError("deadlock: %d of %d rank programs finished"
                               % (done, self.a.ranks))

    def solo(self, r):
        """Rank r's step walls with every peer on time: its program replayed (the same
        random draws) against a resolver where every collective ends at this rank's own
        arrival plus the transfer and every peer's data is there when it is asked for.
        That is the rank's own iteration time: its step wall less every wait on another
        rank (blocking receives, collectives, pipeline bubbles)."""
        R, xr = Rank(r, 1000 + r), random.Random(self.a.seed * 104729 + r)
        prog, val = self.program(r, R), None
        while True:
            try:
                req = prog.send(val)
            except StopIteration:
                return R.walls
            if req[0] == "coll":
                n = len(req[2])
                val = req[3] + xfer(req[4] * 2 * (n - 1) / n, xr)
            elif req[0] == "send":
                val = req[2] + xfer(req[3], xr)
            elif req[0] == "await_send":
                val = (0.0, P2P_MB)            # sent long ago: no wait at all
            else:
                val = None

    # ---- output -------------------------------------------------------------------------
    def write(self, outdir):
        """The traces (kernels, phases) or steps.csv (steps), and truth.json."""
        os.makedirs(outdir, exist_ok=True)
        if self.a.level == "steps":
            self.write_steps(os.path.join(outdir, "steps.csv"))
        else:
            self.write_traces(outdir)
        with open(os.path.join(outdir, "truth.json"), "w") as fp:
            json.dump(self.truth, fp, indent=1)
            fp.write("\n")

    def write_steps(self, path):
        """Each rank's own iteration times (solo()) as argus-analyze's minimal steps CSV:
        step,rank,duration_ms, the rows of a step together (docs/REPORT_SCHEMA.md)."""
        walls = [self.solo(r) for r in range(self.a.ranks)]
        with open(path, "w") as fp:
            fp.write("step,rank,duration_ms\n")
            for step in range(self.a.steps):
                for r in range(self.a.ranks):
                    t0, t1 = walls[r][step]
                    fp.write("%d,%d,%.3f\n" % (step, r, (t1 - t0) / 1e6))

    def write_traces(self, outdir):
        """One Kineto trace per rank: everything (kernels), or the user_annotation ranges
        only (phases, a CPU job with gloo). speed_classes declares no groups."""
        lay, phases = self.lay, self.a.level == "phases"
        backend, bconf = ("gloo", "cpu:gloo") if phases else ("nccl", "cuda:nccl")
        skew = random.Random(self.a.seed + 17)
        node_off = [0.0] + [skew.uniform(-1, 1) * self.a.clock_skew_us * 1e3
                            for _ in range(self.a.ranks // 8 + 1)]
        for R in self.ranks:
            off = node_off[R.r // 8]
            g = lay.groups(R.r)
            pgs = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": bconf,
                    "pg_size": lay.n, "ranks": list(range(lay.n))}]
            for i, (kind, desc) in enumerate((("tp", "TENSOR_MODEL_PARALLEL_GROUP"),
                                              ("pp", "PIPELINE_MODEL_PARALLEL_GROUP"),
                                              ("dp", "DATA_PARALLEL_GROUP"))):
                pgs.append({"pg_name": str(i + 1), "pg_desc": desc,
                                "backend_config": bconf, "pg_size": len(g[kind]),
                                "ranks": g[kind]})
            di = {"backend": backend, "rank": R.r, "world_size": lay.n,
                  "pg_count": len(pgs), "pg_config": pgs, "nccl_version": "2.21.5"}
            if phases:
                del di["nccl_version"]
            if self.a.scenario == "speed_classes":
                del di["pg_count"], di["pg_config"]
            head = {"schemaVersion": 1, "distributedInfo": di, "baseTimeNanoseconds": BASE_NS}
            dev = R.r % 8
            out = []                 # (ts, text): the text json.dumps would give, faster
            for cat, name, t0, t1, x in R.ev:
                if phases and cat != "user_annotation":
                    continue
                ts = round((t0 + off) / 1e3, 3)
                if cat in ("kernel", "gpu_memcpy"):
                    tail = ',"pid":%d,"tid":%d,"ts":%r,"dur":%r,"args":{"device":%d,' \
                           '"stream":%d,"correlation":%d}}' % (dev, x[1], ts,
                                                              round((t1 - t0) / 1e3, 3),
                                                              dev, x[1], x[0])
                else:
                    tail = ',"pid":%d,"tid":%d,"ts":%r,"dur":%r%s}' % (
                        R.pid, R.pid, ts, round((t1 - t0) / 1e3, 3),
                        ',"args":{"correlation":%d}' % x if x is not None else "")
                out.append((ts, jstr(cat, name) + tail))
            out.sort(key=lambda e: e[0])
            path = os.path.join(outdir, "trace_rank%d.json" % R.r)
            with open(path, "w") as fp:
                fp.write(json.dumps(head, separators=(",", ":"))[:-1])
                fp.write(',"traceEvents":[')
                fp.write(",\n".join(e[1] for e in out))
                fp.write("]}\n")


_JSTR = {}


def jstr(cat, name):
    """'{"ph":"X","cat":<cat>,"name":<name>' as json.dumps writes it, cached."""
    k = (cat, name)
    if k not in _JSTR:
        _JSTR[k] = '{"ph":"X","cat":%s,"name":%s' % (json.dumps(cat), json.dumps(name))
    return _JSTR[k]


def xfer(mbytes, rng):
    """ns to move mbytes MB at ~40 GB/s plus 15 us of latency, with 5 % noise."""
    return (15e3 + mbytes * 1e6 / 40.0) * lognorm(rng, 1.0, 0.05)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-o", "--outdir", required=True)
    p.add_argument("--scenario", choices=SCENARIOS, default="clean")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ranks", type=int, default=16)
    p.add_argument("--layout", choices=("dp", "pp", "tp"), default="dp")
    p.add_argument("--steps", type=int, default=80)
    p.add_argument("--severity", type=float, default=1.3)
    p.add_argument("--p2p", choices=("blocking", "async"), default="blocking")
    p.add_argument("--period", type=int, default=10, help="checkpoint every N steps")
    p.add_argument("--variability", type=float, default=0.0,
                   help="sigma of the job-wide per-step work (lognormal; default per "
                   "layout, for a 9 %% job step-time CV)")
    p.add_argument("--clock-skew-us", type=float, default=500.0)
    p.add_argument("--level", choices=LEVELS, default="kernels",
                   help="kernels: full traces; phases: a CPU (gloo) job's phase ranges "
                   "only; steps: steps.csv of each rank's own iteration time")
    a = p.parse_args(argv)
    if not 2 <= a.ranks <= 4096 or a.steps < 1:
        p.error("--ranks must be in [2, 4096] and --steps positive")
    try:
        if a.level == "phases" and a.p2p == "async":
            raise ValueError("--p2p async needs GPU kernels: a phase-only job runs on the "
                             "CPU with gloo, whose receives block the host")
        job = Job(a)
        if a.level != "steps":           # steps: each rank's solo replay is all it takes
            job.run()
        job.write(a.outdir)
    except (ValueError, RuntimeError, OSError) as e:
        print("gen.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
