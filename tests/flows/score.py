#!/usr/bin/env python3
"""score.py OUTDIR TRUTH [--check] [--no-links] [--ms] -- argus-flows' flows.json and timeline.csv
against emit.py's truth.json: one JSON line with job_partition_exact, pair_accuracy,
layout_exact, stage_order_exact, step_boundary_err_median / _p95 (fractions of the job's
median step time), slow_recall / slow_precision, link_recall / link_precision / link_top1,
boundary_agreement (change points against the baseline; --check wants 0.99 unless
--no-agree), and with port counters port_recall / port_precision / port_top1.
--check: exit 1 naming each goal missed (the goals of man/argus-flows.1, "ACCURACY")."""
import csv
import json
import sys


def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    x = q * (len(v) - 1)
    i = int(x)
    return v[i] if i + 1 >= len(v) else v[i] + (x - i) * (v[i + 1] - v[i])


def main():
    out, truth_path = sys.argv[1], sys.argv[2]
    check = "--check" in sys.argv
    links = "--no-links" not in sys.argv
    # ms timestamps (NetFlow v9): a step end is off by up to 1 ms
    tol = (0.0025, 0.004) if "--ms" in sys.argv else (0.001, 0.003)
    rep = json.load(open(out + "/flows.json"))
    tr = json.load(open(truth_path))
    got_jobs = {frozenset(j["endpoints"]): j for j in rep["jobs"]}
    want = [frozenset(j["endpoints"]) for j in tr["jobs"]]
    partition = set(got_jobs) == set(want)
    # pairs
    kinds = {}
    for j in rep["jobs"]:
        for p in j["pairs"]:
            kinds[frozenset((p["a"], p["b"]))] = p["kind"]
    tk = {frozenset((a, b)): k for a, b, k in tr["pairs"]}
    keys = set(kinds) | set(tk)
    pair_acc = sum(kinds.get(k) == tk.get(k) for k in keys) / max(1, len(keys))
    layout, order = True, True
    for tj in tr["jobs"]:
        j = got_jobs.get(frozenset(tj["endpoints"]))
        if not j or (j["dp"], j["pp"], j["tp"]) != (tj["dp"], tj["pp"], tj["tp"]):
            layout = False
            continue
        for pipe in j["pipelines"]:
            if [tj["stage"][ip] for ip in pipe] != list(range(len(pipe))):
                order = False
    # step boundaries: per endpoint and step
    ends = {}
    with open(out + "/timeline.csv") as fh:
        for r in csv.DictReader(fh):
            ends.setdefault(r["endpoint"], {})[int(r["step"])] = int(r["end_ns"])
    errs = []
    for tj in tr["jobs"]:
        if "step_end" not in tj:
            continue
        d = sorted(b - a for a, b in zip(tj["step_start"], tj["step_end"]))
        step = d[len(d) // 2]
        for ip in tj["endpoints"]:
            for s, t in enumerate(tr["step_end"][ip]):
                e = ends.get(ip, {}).get(s)
                errs.append(1.0 if e is None else min(1.0, abs(e - t) / step))
    # slow steps of the main job
    tj = tr["jobs"][0]
    j = got_jobs.get(frozenset(tj["endpoints"]))
    got_slow = {s["step"] for s in j["slow_steps"]} if j else set()
    want_slow = set(tj["slow_steps"])
    slow_r = len(got_slow & want_slow) / len(want_slow) if want_slow else 1.0
    slow_p = len(got_slow & want_slow) / len(got_slow) if got_slow else 1.0
    deg = [l["link"] for l in rep["links"] if l["degraded"]]
    want_deg = set(tr["degraded_links"])
    lr = len(set(deg) & want_deg) / len(want_deg) if want_deg else 1.0
    lp = len(set(deg) & want_deg) / len(deg) if deg else 1.0
    top1 = 1.0 if not want_deg else float(bool(rep["links"]) and rep["links"][0]["link"] in want_deg)
    res = dict(job_partition_exact=partition, pair_accuracy=round(pair_acc, 5),
               layout_exact=layout, stage_order_exact=order,
               step_boundary_err_median=pct(errs, 0.5), step_boundary_err_p95=pct(errs, 0.95),
               slow_recall=slow_r, slow_precision=slow_p,
               link_recall=lr, link_precision=lp, link_top1=top1,
               boundary_agreement=min(j["boundary_agreement"] for j in rep["jobs"]))
    if "ports" in rep:   # switch port counters: the degraded NIC port
        pl = rep["ports"]["list"]
        pdeg = [p["port"] for p in pl if p["degraded"]]
        res["port_recall"] = len(set(pdeg) & want_deg) / len(want_deg) if want_deg else 1.0
        res["port_precision"] = len(set(pdeg) & want_deg) / len(pdeg) if pdeg else 1.0
        res["port_top1"] = 1.0 if not want_deg else float(bool(pl) and pl[0]["port"] in want_deg)
    print(json.dumps(res))
    if not check:
        return 0
    bad = []
    if not partition:
        bad.append("job partition not exact")
    if pair_acc < 0.995:
        bad.append("pair accuracy %.4f < 0.995" % pair_acc)
    if not layout:
        bad.append("DP/PP/TP degrees wrong")
    if not order:
        bad.append("stage order wrong")
    if not res["step_boundary_err_median"] <= tol[0]:
        bad.append("step boundary error median %.5f > %g" % (res["step_boundary_err_median"],
                                                             tol[0]))
    if not res["step_boundary_err_p95"] <= tol[1]:
        bad.append("step boundary error p95 %.5f > %g" % (res["step_boundary_err_p95"], tol[1]))
    if slow_r < 1 or slow_p < 1:
        bad.append("slow steps %s, injected %s" % (sorted(got_slow), sorted(want_slow)))
    if links and (lr < 1 or lp < 1 or top1 < 1):
        bad.append("degraded links %s, injected %s" % (deg, sorted(want_deg)))
    if "ports" in rep and (res["port_recall"] < 1 or res["port_precision"] < 1 or
                           res["port_top1"] < 1):
        bad.append("degraded ports %s, injected %s" % (pdeg, sorted(want_deg)))
    if res["boundary_agreement"] < 0.99 and "--no-agree" not in sys.argv:
        bad.append("step boundaries: change points and baseline agree on %.4f of the gaps"
                   % res["boundary_agreement"])
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
