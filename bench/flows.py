#!/usr/bin/env python3
"""flows.py --flows ARGUS_FLOWS [--quick] -- argus-flows' benchmark (make bench-flows): the
emitter's jobs (tests/flows/emit.py) through argus-flows, scored by tests/flows/score.py.
Prints one JSON line: the goals' figures over the base runs (IPFIX with ns times, idle
timeout 5 ms, no sampling, one 30 % slower link at a random GPU per seed, a slow host),
bocpd_agreement (the least share of gaps where the change-point detection and the
baseline agree), records_per_s (records decoded and analysed per CPU second of
argus-flows on a larger job) and peak RSS, port_recall / port_precision / port_top1 (the
degraded port from switch port counters in 200 us bins, a random GPU's per seed),
zero3_period_err (the worst relative error of the autocorrelation period on ZeRO-3
traffic), and curves over the idle timeout (1 ms to 15 s), the sampling rate (1:1 to
1:10^4) and ZeRO-3 (optimizer step 4 ms / 1 ms, idle timeout 1 / 5 ms). Standard library
only."""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EMIT = os.path.join(HERE, "..", "tests", "flows", "emit.py")
SCORE = os.path.join(HERE, "..", "tests", "flows", "score.py")


def run(flows, work, name, emit_args, fmt="ipfix", ports=False):
    d = os.path.join(work, name)
    os.makedirs(d)
    subprocess.run([sys.executable, EMIT, "--out", d] + emit_args, check=True)
    t0 = time.time()
    extra = ["-P", d + "/ports.csv"] if ports else []
    with open(d + "/stderr", "w") as err:
        p = subprocess.Popen([flows, "-o", d + "/out", "-t", d + "/topology.csv"] + extra +
                             [d + "/flows." + fmt], stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)   # this process's own CPU time and peak RSS
    wall = time.time() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        return dict(failed=open(d + "/stderr").read()[-300:])
    s = subprocess.run([sys.executable, SCORE, d + "/out", d + "/truth.json"],
                       stdout=subprocess.PIPE, check=True)
    res = json.loads(s.stdout)
    rep = json.load(open(d + "/out/flows.json"))
    res["records"] = rep["inputs"]["records_kept"] + rep["inputs"]["records_filtered"]
    res["cpu_s"] = ru.ru_utime + ru.ru_stime
    res["wall_s"] = wall
    res["maxrss_kb"] = ru.ru_maxrss
    tj = json.load(open(d + "/truth.json"))["jobs"][0]
    dur = sorted(b - a for a, b in zip(tj["step_start"], tj["step_end"]))
    step = dur[len(dur) // 2]
    j = [j for j in rep["jobs"] if set(j["endpoints"]) == set(tj["endpoints"])]
    if j and j[0].get("acf_period_ns"):
        res["period_err"] = abs(j[0]["acf_period_ns"] - step) / step
        res["step_method"] = j[0]["step_method"]
    return res


def agg(rs):
    ok = [r for r in rs if "failed" not in r]
    n = max(1, len(ok))
    def mean(k):
        return round(sum(float(r[k]) for r in ok) / n, 5)
    def worst(k):
        return round(max((r[k] for r in ok), default=float("nan")), 6)
    return dict(runs=len(rs), failed=len(rs) - len(ok),
                job_partition_exact=mean("job_partition_exact"),
                pair_accuracy=mean("pair_accuracy"), layout_exact=mean("layout_exact"),
                stage_order_exact=mean("stage_order_exact"),
                step_boundary_err_median=worst("step_boundary_err_median"),
                step_boundary_err_p95=worst("step_boundary_err_p95"),
                link_recall=mean("link_recall"), link_precision=mean("link_precision"),
                link_top1=mean("link_top1"), slow_recall=mean("slow_recall"),
                slow_precision=mean("slow_precision"),
                bocpd_agreement=round(min((r["boundary_agreement"] for r in ok),
                                          default=float("nan")), 5))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="argus-bench-flows.")
    rnd = random.Random(7)
    seeds = range(1, 4 if a.quick else 9)
    steps = "16" if a.quick else "24"
    base = []
    for s in seeds:
        rank = rnd.randrange(64)
        base.append(run(a.flows, work, "base%d" % s,
                        ["--seed", str(s), "--steps", steps, "--degrade-rank", str(rank)]))
    out = dict(bench="flows", source="tests/flows/emit.py", layout="DP4xPP4xTP4 + DP-only tenant")
    out.update(agg(base))
    big = run(a.flows, work, "big", ["--dp", "8", "--steps", "12" if a.quick else "80",
                                      "--formats", "ipfix"])
    out["records_per_s"] = round(big["records"] / max(big["cpu_s"], 1e-6))
    out["records_big"] = big["records"]
    out["maxrss_kb_big"] = big["maxrss_kb"]
    curves = dict(idle_ms={}, sampling={})
    for idle in ([1, 10, 1000] if a.quick else [1, 5, 10, 100, 1000, 15000]):
        r = run(a.flows, work, "idle%d" % idle, ["--idle-ms", str(idle), "--steps", steps])
        curves["idle_ms"][str(idle)] = {k: v for k, v in agg([r]).items()
                                         if k not in ("runs", "slow_recall", "slow_precision")}
    for n in ([1, 100, 10000] if a.quick else [1, 10, 100, 1000, 10000]):
        r = run(a.flows, work, "samp%d" % n, ["--sampling", str(n), "--steps", steps])
        curves["sampling"][str(n)] = {k: v for k, v in agg([r]).items()
                                       if k not in ("runs", "slow_recall", "slow_precision")}
    # switch port counters (200 us bins): the degraded NIC port, a random GPU's per seed
    pr = []
    for s in seeds:
        rank = rnd.randrange(64)
        pr.append(run(a.flows, work, "ports%d" % s,
                      ["--seed", str(s), "--steps", "12", "--slow-steps", "5,8", "--formats",
                       "ipfix", "--counters-us", "200", "--degrade-rank", str(rank)],
                      ports=True))
    pok = [r for r in pr if "failed" not in r]
    for k in ("port_recall", "port_precision", "port_top1"):
        out[k] = round(sum(r[k] for r in pok) / max(1, len(pok)), 5)
    # ZeRO-3 (no end-of-step burst): the period by autocorrelation, steps tracked with it
    z = {}
    for opt in (4, 1):
        for idle in ([1] if a.quick else [1, 5]):
            r = run(a.flows, work, "zero3-opt%d-idle%d" % (opt, idle),
                    ["--mode", "zero3", "--pp", "1", "--dp", "4", "--steps", steps, "--slow",
                     "1", "--opt-ms", str(opt), "--idle-ms", str(idle)])
            z["opt%dms_idle%dms" % (opt, idle)] = dict(
                period_err=round(r.get("period_err", float("nan")), 6),
                step_method=r.get("step_method"),
                step_boundary_err_median=r.get("step_boundary_err_median"),
                step_boundary_err_p95=r.get("step_boundary_err_p95"))
    out["zero3_period_err"] = max(v["period_err"] for v in z.values())
    curves["zero3"] = z
    out["curves"] = curves
    print(json.dumps(out))
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
