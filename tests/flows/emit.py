#!/usr/bin/env python3
"""emit.py -- the flows a DP x PP x TP training job's network traffic would produce, for
argus-flows' tests and benchmark (no switch needed). Standard library only.

The job (virtual time, ns): one TP group per host (TP stays inside the host), one NIC per
GPU; rank r = (stage * dp + dp_rank) * tp + tp_rank. A step is a GPipe pass over M
microbatches (forward f, backward 2f per microbatch and stage; the activation, then its
gradient, goes from each TP rank to the same TP rank of the next / previous stage), then
per stage and TP rank a ring all-reduce over the DP ranks of several gradient buckets
(2 (dp - 1) rounds each; a round lasts as long as its slowest link), then a global barrier.
A transfer takes bytes / (the slowest link of its path). Injected: a degraded NIC-to-leaf
link (capacity x (1 - d)), a slow host (compute x s over some steps), a second tenant
(a DP-only job on other hosts), background storage traffic (TCP to port 2049), and with
--dup-obs 1 duplicate observation points (a record crossing leaves exported by both, 1 us
later at the second), with --cross N transfers between the two tenants (for node lists).

The flow meter: per 5-tuple (two queue pairs per connection, chunks alternating), a record
ends after an idle gap > --idle-ms or when it has lasted --active-s; 1-in-N packet sampling
(first / last sampled packet, counts scaled back by N in the CSV; in IPFIX an options
record carries the interval); records go into export packets in order of their export
time, and each packet is lost with probability --loss (sequence numbers keep counting).

Writes into --out: flows.ipfix (IPFIX messages, ns timestamps in the NTP format, domain =
leaf), flows.v9 (NetFlow v9 packets, ms timestamps), flows.csv (the records that survived
export; ns), topology.csv, truth.json (layout, pairs, per-GPU step ends, slow steps, the
degraded link, export loss). The topology's 7th column is the main job's rank of each NIC
(the rank to NIC map of argus-flows --argus-report).
"""
import argparse
import csv
import json
import math
import random
import struct

MTU = 4096
NIC_BPS = 50e9          # bytes/s of a NIC-to-leaf link (400 Gb/s)
UPLINK_BPS = 400e9
LAT_NS = 3000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--dp", type=int, default=4)
    ap.add_argument("--pp", type=int, default=4)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--microbatches", type=int, default=8)
    ap.add_argument("--fwd-ms", type=float, default=12.0)
    ap.add_argument("--act-mb", type=float, default=8.0)
    ap.add_argument("--buckets-mb", default="200,120,80")
    ap.add_argument("--hosts-per-leaf", type=int, default=4)
    ap.add_argument("--idle-ms", type=float, default=5.0)
    ap.add_argument("--active-s", type=float, default=60.0)
    ap.add_argument("--sampling", type=int, default=1)
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--degrade", type=float, default=0.3, help="capacity drop of one link")
    ap.add_argument("--degrade-rank", type=int, default=-1, help="its GPU (default: a middle stage)")
    ap.add_argument("--degrade-tenant", type=int, default=-1,
                    help="K >= 0: the link degraded is the second tenant's GPU K's instead")
    ap.add_argument("--slow", type=float, default=1.5, help="compute factor of the slow host")
    ap.add_argument("--slow-steps", default="12,15", help="first,last (inclusive)")
    ap.add_argument("--tenant", type=int, default=1, help="second tenant: 1 yes, 0 no")
    ap.add_argument("--storage", type=int, default=1)
    ap.add_argument("--jitter", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dup-obs", type=int, default=0,
                    help="1: a record crossing leaves is exported by both leaves")
    ap.add_argument("--cross", type=int, default=0,
                    help="N RoCE transfers between the tenant's first GPU and the job's")
    ap.add_argument("--formats", default="ipfix,v9,csv")
    ap.add_argument("--mode", choices=("gpipe", "zero3"), default="gpipe",
                    help="zero3: ZeRO-3 / FSDP data parallelism (--pp 1): per layer an "
                         "all-gather before its forward and its backward and a "
                         "reduce-scatter after its backward, no end-of-step burst")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--layer-ms", type=float, default=1.5, help="zero3: forward per layer")
    ap.add_argument("--layer-mb", type=float, default=40.0, help="zero3: parameters per layer")
    ap.add_argument("--opt-ms", type=float, default=4.0, help="zero3: the optimizer step")
    ap.add_argument("--steps-from", default="",
                    help="an Argus steps.csv (step,rank,start_ns,...): its steps start when "
                         "that run's did (the earliest rank's start), one step per step id; "
                         "the job's own schedule must fit in each")
    ap.add_argument("--counters-us", type=float, default=0,
                    help="N > 0: also ports.csv, every switch port's octet counters in "
                         "N us bins (a sample where a bin begins or ends traffic)")
    a = ap.parse_args()
    if a.mode == "zero3" and a.pp != 1:
        ap.error("--mode zero3 needs --pp 1")
    rnd = random.Random(a.seed)
    dp, pp, tp = a.dp, a.pp, a.tp
    world = dp * pp * tp
    nhost = dp * pp
    t0 = 1_767_225_600 * 10**9     # 2026-01-01, ns
    starts = []
    if a.steps_from:
        first = {}
        with open(a.steps_from) as fh:
            for r in csv.DictReader(fh):
                s = int(r["step"])
                first[s] = min(first.get(s, 1 << 63), int(r["start_ns"]))
        starts = [first[s] for s in sorted(first)]
        a.steps = len(starts)
        t0 = starts[0]

    def ip_of(h, g):
        return "10.%d.%d.%d" % (1 + h // 250, h % 250, g + 1)

    gpus = []                       # per GPU: dict
    for r in range(world):
        stage, rest = divmod(r, dp * tp)
        d, t = divmod(rest, tp)
        h = stage * dp + d
        gpus.append(dict(rank=r, stage=stage, dp=d, tp=t, host=h, ip=ip_of(h, t),
                         leaf="leaf%d" % (h // a.hosts_per_leaf),
                         port="p%d" % ((h % a.hosts_per_leaf) * tp + t), job=0))
    ntenant_hosts = 4 if a.tenant else 0
    tenant = []
    for k in range(ntenant_hosts * tp):
        h, t = nhost + k // tp, k % tp
        tenant.append(dict(rank=k, stage=0, dp=k // tp, tp=t, host=h, ip=ip_of(h, t),
                           leaf="leaf%d" % (h // a.hosts_per_leaf),
                           port="p%d" % ((h % a.hosts_per_leaf) * tp + t), job=1))
    cap = {}                        # link -> bytes/s

    def link(g):
        return g["leaf"] + ":" + g["port"]

    for g in gpus + tenant:
        cap[link(g)] = NIC_BPS
    deg_rank = a.degrade_rank if a.degrade_rank >= 0 else (1 * dp * tp + 1 * tp + 2) % world
    deg_link = link(gpus[deg_rank]) if a.degrade > 0 else None
    if a.degrade > 0 and a.degrade_tenant >= 0 and tenant:
        deg_link = link(tenant[a.degrade_tenant % len(tenant)])
    if deg_link:
        cap[deg_link] = NIC_BPS * (1 - a.degrade)

    def bw(s, d):
        b = min(cap[link(s)], cap[link(d)])
        if s["leaf"] != d["leaf"]:
            b = min(b, UPLINK_BPS)
        return b

    transfers = []                  # (t_start, t_end, src, dst, sport, dport, proto, bytes)
    qp_next = {}

    def send(s, d, ts, nbytes, qps=2, proto=17, dport=4791):
        dur = int(nbytes / bw(s, d) * 1e9) + LAT_NS
        key = (s["ip"], d["ip"])
        k = qp_next.get(key, 0)
        qp_next[key] = k + 1
        sport = 49152 + (hash_ip(s["ip"]) + hash_ip(d["ip"]) + (k % qps)) % 16000
        transfers.append((ts, ts + dur, s["ip"], d["ip"], sport, dport, proto, int(nbytes)))
        return ts + dur

    slow_first, slow_last = (int(x) for x in a.slow_steps.split(","))
    slow_host = gpus[(2 * dp * tp + 3 * tp) % world]["host"] if a.slow > 1 else -1
    buckets = [float(x) * 1e6 for x in a.buckets_mb.split(",")]
    act = a.act_mb * 1e6 / tp
    f_ns = a.fwd_ms * 1e6
    M = a.microbatches
    truth_end = {g["ip"]: [] for g in gpus + tenant}
    step_start = t0
    job_steps = []
    for step in range(a.steps):
        if starts:
            step_start = starts[step]
        comp = {}
        for h in range(nhost):
            x = f_ns * (1 + rnd.gauss(0, a.jitter))
            if h == slow_host and slow_first <= step <= slow_last:
                x *= a.slow
            comp[h] = x
        if a.mode == "zero3":
            step_end = zero3_step(a, gpus, comp, f_ns, step_start, send, truth_end)
            job_steps.append(dict(start=step_start, end=step_end))
            step_start = int(step_end)
            continue
        # forward (per pipeline d, per TP rank the same schedule: TP ranks move together)
        ready_bwd = {}
        for d in range(dp):
            fend = [[0] * M for _ in range(pp)]
            arr = [step_start] * M
            for s in range(pp):
                h = s * dp + d
                t = step_start
                nxt = [0] * M
                for j in range(M):
                    t = max(t, arr[j]) + comp[h]
                    fend[s][j] = t
                    if s + 1 < pp:
                        e = 0
                        for tr in range(tp):
                            src = gpus[(s * dp + d) * tp + tr]
                            dst = gpus[((s + 1) * dp + d) * tp + tr]
                            e = max(e, send(src, dst, int(t), act))
                        nxt[j] = e
                arr = nxt
            # backward, last stage first
            garr = [fend[pp - 1][M - 1]] * M
            for s in range(pp - 1, -1, -1):
                h = s * dp + d
                t = fend[s][M - 1]
                nxt = [0] * M
                for j in range(M):
                    t = max(t, garr[j]) + 2 * comp[h]
                    if s > 0:
                        e = 0
                        for tr in range(tp):
                            src = gpus[(s * dp + d) * tp + tr]
                            dst = gpus[((s - 1) * dp + d) * tp + tr]
                            e = max(e, send(src, dst, int(t), act))
                        nxt[j] = e
                garr = nxt
                ready_bwd[(s, d)] = t
        # DP ring all-reduce per stage and TP rank
        ends = []
        for s in range(pp):
            for tr in range(tp):
                ring = [gpus[(s * dp + d) * tp + tr] for d in range(dp)]
                t = max(ready_bwd[(s, d)] for d in range(dp))
                last = {g["ip"]: 0 for g in ring}
                for b in buckets:
                    chunk = b / dp
                    for _ in range(2 * (dp - 1)):
                        re = t
                        for i, g in enumerate(ring):
                            nb = ring[(i + 1) % dp]
                            e = send(g, nb, int(t), chunk)
                            last[g["ip"]] = max(last[g["ip"]], e)
                            last[nb["ip"]] = max(last[nb["ip"]], e)
                            re = max(re, e)
                        t = re + 20000
                for g in ring:
                    truth_end[g["ip"]].append(last[g["ip"]])
                ends.append(t)
        step_end = max(ends) + 2_000_000
        job_steps.append(dict(start=step_start, end=step_end))
        step_start = int(step_end)
    # the second tenant: DP only, its own step time
    tenant_steps = 0
    if tenant:
        ts = t0 + 7_000_000
        ring_by_tp = [[g for g in tenant if g["tp"] == tr] for tr in range(tp)]
        while ts < step_start - 300_000_000:
            ts += int(150e6 * (1 + rnd.gauss(0, a.jitter)))
            for ring in ring_by_tp:
                n = len(ring)
                t = ts
                last = {g["ip"]: 0 for g in ring}
                for _ in range(2 * (n - 1)):
                    re = t
                    for i, g in enumerate(ring):
                        e = send(g, ring[(i + 1) % n], int(t), 100e6 / n)
                        last[g["ip"]] = max(last[g["ip"]], e)
                        last[ring[(i + 1) % n]["ip"]] = max(last[ring[(i + 1) % n]["ip"]], e)
                        re = max(re, e)
                    t = re + 20000
                for g in ring:
                    truth_end[g["ip"]].append(last[g["ip"]])
            ts = t
            tenant_steps += 1
    if a.storage:
        storage = dict(ip="10.200.0.1", leaf="leaf99", port="p0")
        cap[link(storage)] = NIC_BPS
        for k in range(200):
            g = rnd.choice(gpus)
            ts = t0 + rnd.randrange(0, max(1, step_start - t0))
            send(g, storage, ts, 4e6, qps=1, proto=6, dport=2049)
    if tenant:
        for k in range(a.cross):   # e.g. a checkpoint copied between the tenants
            send(tenant[0], gpus[0], t0 + (k + 1) * 50_000_000, 64e6, qps=1)
    if a.counters_us > 0:
        where = {g["ip"]: g for g in gpus + tenant}
        if a.storage:
            where["10.200.0.1"] = storage
        write_counters(a.out + "/ports.csv", transfers, where, a.counters_us, t0)
    recs = meter(transfers, a, rnd)
    leaf_of = {g["ip"]: int(g["leaf"][4:]) for g in gpus + tenant}
    leaf_of["10.200.0.1"] = 99
    dups = []
    for r in recs:
        r["obs"] = leaf_of[r["src"]] + 1
        if a.dup_obs and leaf_of[r["src"]] != leaf_of[r["dst"]]:
            d = dict(r, obs=leaf_of[r["dst"]] + 1, ts=r["ts"] + 1000, te=r["te"] + 1000,
                     export=r["export"] + 1000)
            dups.append(d)
    recs += dups
    # export: records in order of export time, packets of up to 24 records
    recs.sort(key=lambda r: r["export"])
    packets, lost_pkts, lost_recs, lost_data = [], 0, 0, 0
    for i in range(0, len(recs), 24):
        chunk = recs[i:i + 24]
        lost = rnd.random() < a.loss
        if lost:
            lost_pkts += 1
            lost_recs += len(chunk)
            # IPFIX counts data records: every 20th message also holds the options record
            lost_data += len(chunk) + (len(packets) % 20 == 0)
        packets.append((chunk, lost))
    kept = [r for chunk, lost in packets if not lost for r in chunk]
    fm = set(a.formats.split(","))
    if "csv" in fm:
        with open(a.out + "/flows.csv", "w") as fh:
            fh.write("t_start_ns,t_end_ns,src_ip,dst_ip,proto,src_port,dst_port,bytes,packets"
                     + (",obs_point,in_if,out_if\n" if a.dup_obs else "\n"))
            for r in kept:
                fh.write("%d,%d,%s,%s,%d,%d,%d,%d,%d" % (
                    r["ts"], r["te"], r["src"], r["dst"], r["proto"], r["sport"], r["dport"],
                    r["bytes"] * a.sampling, r["packets"] * a.sampling)
                    + (",%d,0,0\n" % r["obs"] if a.dup_obs else "\n"))
    if "ipfix" in fm:
        write_ipfix(a.out + "/flows.ipfix", packets, a.sampling)
    if "v9" in fm:
        write_v9(a.out + "/flows.v9", packets, t0)
    with open(a.out + "/topology.csv", "w") as fh:
        fh.write("ip,host,nic,gpu,leaf,port,rank\n")   # rank: the main job's, Megatron order
        for g in gpus + tenant:
            fh.write("%s,host%d,mlx5_%d,%d,%s,%s,%s\n" % (
                g["ip"], g["host"], g["tp"], g["tp"], g["leaf"], g["port"],
                g["rank"] if g["job"] == 0 else ""))
    pairs = []
    for g in gpus:
        if g["stage"] + 1 < pp:
            pairs.append([g["ip"], gpus[g["rank"] + dp * tp]["ip"], "pp"])
        ring_next = gpus[(g["stage"] * dp + (g["dp"] + 1) % dp) * tp + g["tp"]]
        if dp > 1:
            pairs.append([g["ip"], ring_next["ip"], "dp"])
    for g in tenant:
        ring = [x for x in tenant if x["tp"] == g["tp"]]
        nxt = ring[(ring.index(g) + 1) % len(ring)]
        pairs.append([g["ip"], nxt["ip"], "dp"])
    truth = dict(
        jobs=[dict(dp=dp, pp=pp, tp=tp, world=world, steps=a.steps,
                   endpoints=[g["ip"] for g in gpus],
                   stage={g["ip"]: g["stage"] for g in gpus},
                   dp_rank={g["ip"]: g["dp"] for g in gpus},
                   slow_steps=list(range(slow_first, slow_last + 1)) if slow_host >= 0 else [],
                   slow_host="host%d" % slow_host if slow_host >= 0 else None,
                   step_start=[s["start"] for s in job_steps],
                   step_end=[s["end"] for s in job_steps])],
        step_end={k: v for k, v in truth_end.items()},
        pairs=pairs, degraded_links=[deg_link] if deg_link else [],
        export=dict(packets=len(packets), lost_packets=lost_pkts, lost_records=lost_recs,
                    duplicates=len(dups),
                    duplicates_roce=sum(d["proto"] == 17 and d["dport"] == 4791 for d in dups),
                    lost_ipfix_data_records=lost_data,
                    records=len(recs)),
        params=vars(a))
    if tenant:
        truth["jobs"].append(dict(dp=len(tenant) // tp, pp=1, tp=tp, world=len(tenant),
                                  steps=tenant_steps, endpoints=[g["ip"] for g in tenant],
                                  stage={g["ip"]: 0 for g in tenant}, slow_steps=[]))
    with open(a.out + "/truth.json", "w") as fh:
        json.dump(truth, fh)


def zero3_step(a, gpus, comp, f_ns, t, send, truth_end):
    """One ZeRO-3 step from t of every DP ring (one per TP rank): per layer an all-gather
    (dp - 1 ring rounds of layer/dp bytes), the forward; then from the last layer down an
    all-gather, the backward (twice the forward), a reduce-scatter; then the optimizer. A
    collective starts when its slowest member is ready. Returns the step's end."""
    dp, tp = a.dp, a.tp
    chunk = a.layer_mb * 1e6 / dp
    ends = []
    for tr in range(tp):
        ring = [gpus[d * tp + tr] for d in range(dp)]
        fac = [comp[g["host"]] / f_ns for g in ring]
        last = {g["ip"]: 0 for g in ring}
        ready = [t] * dp

        def collective(ready):
            c = max(ready)
            for _ in range(dp - 1):
                re = c
                for i, g in enumerate(ring):
                    e = send(g, ring[(i + 1) % dp], int(c), chunk)
                    last[g["ip"]] = max(last[g["ip"]], e)
                    last[ring[(i + 1) % dp]["ip"]] = max(last[ring[(i + 1) % dp]["ip"]], e)
                    re = max(re, e)
                c = re + 20000
            return c

        for _ in range(a.layers):
            c = collective(ready)
            ready = [c + a.layer_ms * 1e6 * fac[i] for i in range(dp)]
        for _ in range(a.layers):
            c = collective(ready)
            ready = [c + 2 * a.layer_ms * 1e6 * fac[i] for i in range(dp)]
            c = collective(ready)
            ready = [c] * dp
        for g in ring:
            truth_end[g["ip"]].append(last[g["ip"]])
        ends.append(max(c + a.opt_ms * 1e6 * fac[i] for i in range(dp)))
    return max(ends)


def write_counters(path, transfers, where, bin_us, t0):
    """Port counters: a transfer's bytes spread evenly over its time, into the "in" octets
    of its sender's leaf port (from the NIC) and the "out" octets of its receiver's, and
    between leaves the uplinks' (out at the sender's leaf, in at the receiver's)."""
    w = int(bin_us * 1000)
    bins = {}                     # (device, port) -> {bin: [in, out]}

    def add(dev, port, d, ts, te, nbytes):
        b = bins.setdefault((dev, port), {})
        span = max(1, te - ts)
        k = (ts - t0) // w
        while t0 + k * w < te:
            lo, hi = max(ts, t0 + k * w), min(te, t0 + (k + 1) * w)
            if hi > lo:
                b.setdefault(k, [0.0, 0.0])[d] += nbytes * (hi - lo) / span
            k += 1

    for ts, te, src, dst, sport, dport, proto, nbytes in transfers:
        s, d = where[src], where[dst]
        add(s["leaf"], s["port"], 0, ts, te, nbytes)
        add(d["leaf"], d["port"], 1, ts, te, nbytes)
        if s["leaf"] != d["leaf"]:
            add(s["leaf"], "uplink", 1, ts, te, nbytes)
            add(d["leaf"], "uplink", 0, ts, te, nbytes)
    lines = []
    for (dev, port), b in bins.items():
        c = [0.0, 0.0]
        last = None
        for k in sorted(b):
            if last != k:
                lines.append((t0 + k * w, dev, port, int(c[0]), int(c[1])))
            c[0] += b[k][0]
            c[1] += b[k][1]
            lines.append((t0 + (k + 1) * w, dev, port, int(c[0]), int(c[1])))
            last = k + 1
    lines.sort()
    with open(path, "w") as fh:
        fh.write("time,device,port,in_octets,out_octets\n")
        for t, dev, port, i, o in lines:
            fh.write("%d,%s,%s,%d,%d\n" % (t, dev, port, i, o))


def hash_ip(s):
    return sum(int(x) * (k + 1) * 131 for k, x in enumerate(s.split(".")))


def meter(transfers, a, rnd):
    """Flow records of the transfers: per 5-tuple, idle and active timeouts, sampling."""
    idle = int(a.idle_ms * 1e6)
    active = int(a.active_s * 1e9)
    transfers.sort(key=lambda x: x[0])
    open_ = {}
    out = []

    def close(k, r):
        r["export"] = r["te"] + idle
        out.append(r)

    for ts, te, src, dst, sport, dport, proto, nbytes in transfers:
        npk = max(1, -(-nbytes // MTU))
        if a.sampling > 1:
            k = binom(rnd, npk, 1.0 / a.sampling)
            if k == 0:
                continue
            span = te - ts
            ts, te = ts + span // (k + 1), te - span // (k + 1)
            cnt_p, cnt_b = k, k * MTU
        else:
            cnt_p, cnt_b = npk, nbytes
        key = (src, dst, sport, dport, proto)
        r = open_.get(key)
        if r is not None and (ts - r["te"] > idle or te - r["ts"] > active):
            close(key, r)
            r = None
        if r is None:
            open_[key] = dict(ts=ts, te=te, src=src, dst=dst, sport=sport, dport=dport,
                              proto=proto, bytes=cnt_b, packets=cnt_p)
        else:
            r["te"] = max(r["te"], te)
            r["bytes"] += cnt_b
            r["packets"] += cnt_p
    for k, r in open_.items():
        close(k, r)
    return out


def binom(rnd, n, p):
    if n * p > 30:
        return max(0, int(round(rnd.gauss(n * p, math.sqrt(n * p * (1 - p))))))
    k = 0
    # waiting times: geometric skips
    i = 0
    lq = math.log(1 - p) if p < 1 else None
    while True:
        if lq is None:
            return n
        i += int(math.log(1 - rnd.random()) / lq) + 1
        if i > n:
            return k
        k += 1


def ntp(ns):
    sec, rem = divmod(ns, 10**9)
    return ((sec + 2208988800) << 32) | ((rem << 32) // 10**9 + 1)


IPFIX_FIELDS = [(156, 8), (157, 8), (8, 4), (12, 4), (4, 1), (7, 2), (11, 2), (1, 8), (2, 8),
                (138, 4)]


def ipv4(s):
    return bytes(int(x) for x in s.split("."))


def write_ipfix(path, packets, sampling):
    seq = 0
    with open(path, "wb") as fh:
        for n, (chunk, lost) in enumerate(packets):
            sets = b""
            if n % 20 == 0:
                body = struct.pack(">HH", 256, len(IPFIX_FIELDS)) + b"".join(
                    struct.pack(">HH", t, l) for t, l in IPFIX_FIELDS)
                sets += struct.pack(">HH", 2, 4 + len(body)) + body
                body = struct.pack(">HHHHHHH", 257, 2, 1, 149, 4, 305, 4)
                sets += struct.pack(">HH", 3, 4 + len(body)) + body + b""
                sets_pad = b""
                body = struct.pack(">II", 0, sampling)
                sets += struct.pack(">HH", 257, 4 + len(body)) + body + sets_pad
            body = b"".join(struct.pack(">QQ4s4sBHHQQI", ntp(r["ts"]), ntp(r["te"]),
                                        ipv4(r["src"]), ipv4(r["dst"]), r["proto"], r["sport"],
                                        r["dport"], r["bytes"], r["packets"], r["obs"])
                            for r in chunk)
            sets += struct.pack(">HH", 256, 4 + len(body)) + body
            export_s = max(r["export"] for r in chunk) // 10**9
            msg = struct.pack(">HHIII", 10, 16 + len(sets), export_s, seq, 0) + sets
            ndata = len(chunk) + (1 if n % 20 == 0 else 0)
            seq = (seq + ndata) & 0xffffffff
            if not lost:
                fh.write(msg)


V9_FIELDS = [(22, 4), (21, 4), (8, 4), (12, 4), (4, 1), (7, 2), (11, 2), (1, 8), (2, 8)]


def write_v9(path, packets, t0):
    boot_ms = t0 // 10**6 - 3_600_000
    with open(path, "wb") as fh:
        for n, (chunk, lost) in enumerate(packets):
            sets, count = b"", 0
            if n % 20 == 0:
                body = struct.pack(">HH", 256, len(V9_FIELDS)) + b"".join(
                    struct.pack(">HH", t, l) for t, l in V9_FIELDS)
                sets += struct.pack(">HH", 0, 4 + len(body)) + body
                count += 1
            body = b"".join(struct.pack(">II4s4sBHHQQ", (r["ts"] // 10**6 - boot_ms) & 0xffffffff,
                                        (r["te"] // 10**6 - boot_ms) & 0xffffffff,
                                        ipv4(r["src"]), ipv4(r["dst"]), r["proto"], r["sport"],
                                        r["dport"], r["bytes"], r["packets"]) for r in chunk)
            pad = (-(4 + len(body))) % 4
            sets += struct.pack(">HH", 256, 4 + len(body) + pad) + body + b"\0" * pad
            count += len(chunk)
            export_s = max(r["export"] for r in chunk) // 10**9 + 1
            up = export_s * 1000 - boot_ms
            msg = struct.pack(">HHIIII", 9, count, up, export_s, n, 0) + sets
            if not lost:
                fh.write(msg)


if __name__ == "__main__":
    main()
