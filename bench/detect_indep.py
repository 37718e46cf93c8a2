#!/usr/bin/python3
"""detect_indep.py - Argus's diagnosis scored on the independent scenario source.

Generates every scenario of tests/indep/gen.py for a few seeds and layouts, runs
`argus-analyze -o DIR trace_rank*.json` on each job, scores report.json against the
generator's truth.json and prints ONE JSON line (source "indep"), per scenario and
severity:
  - precision / recall of source ranks: over all anomalies of a run, the union of their
    `ranks` against the truth's source ranks (micro-averaged over runs);
  - kind accuracy: runs where an anomaly of the true kind names a true source rank
    (checkpoint: an anomaly with the true `period_steps`; host_stall also `steps_ok`:
    that anomaly's steps cover every stalled step);
  - median delay from the onset to `detected_at_step` of that anomaly, in steps;
  - false alarms per 1,000 clean steps: every anomaly of a clean run; in the chronic runs
    every anomaly but a `persistent_imbalance` naming a chronically slow rank.
Ratios, never absolute times; a benchmark, run by `make bench-detect-indep` only.

usage: detect_indep.py --analyze PATH [--gen PATH] [--seeds N] [--steps N] [--jobs N]
                       [--full] [-v]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "tests", "indep", "gen.py")


def matrix(seeds, full):
    """(scenario, severity label, gen arguments) for every run."""
    ranks = [16, 32, 64] if full else [16, 32]
    runs = []
    for seed in range(1, seeds + 1):
        n = ranks[(seed - 1) % len(ranks)]
        for lay in ("dp", "pp", "tp"):
            base = ["--seed", str(seed), "--ranks", str(n), "--layout", lay]
            runs.append(("clean", "x1.0", base + ["--scenario", "clean"]))
            runs.append(("chronic", "x1.05-1.15", base + ["--scenario", "chronic"]))
            runs.append(("host_stall", "0.3-0.6s", base + ["--scenario", "host_stall"]))
            runs.append(("checkpoint", "x1.7", base + ["--scenario", "checkpoint"]))
            for sev in ("1.2", "1.3", "1.5"):
                runs.append(("compute_straggler", "x" + sev,
                             base + ["--scenario", "compute_straggler", "--severity", sev]))
                if lay != "dp" and sev != "1.2":
                    runs.append(("slow_stage", "x" + sev,
                                 base + ["--scenario", "slow_stage", "--severity", sev]))
            if lay == "pp":   # the NCCL-like asynchronous receive, for comparison
                runs.append(("compute_straggler_async_p2p", "x1.3",
                             base + ["--scenario", "compute_straggler", "--severity", "1.3",
                                     "--p2p", "async"]))
    return runs


def one(args, tmp, i, run):
    scen, sev, gargs = run
    d = os.path.join(tmp, "run%03d" % i)
    jd, od = os.path.join(d, "job"), os.path.join(d, "out")
    subprocess.run([sys.executable, args.gen, "-o", jd, "--steps", str(args.steps)] + gargs,
                   check=True)
    traces = sorted(os.path.join(jd, f) for f in os.listdir(jd) if f.startswith("trace_rank"))
    t0 = time.monotonic()
    p = subprocess.run([args.analyze, "-o", od] + traces, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("argus-analyze failed on %s %s: %s" % (scen, gargs, p.stderr))
    with open(os.path.join(jd, "truth.json")) as f:
        truth = json.load(f)
    with open(os.path.join(od, "report.json")) as f:
        rep = json.load(f)
    shutil.rmtree(d, ignore_errors=True)
    return scen, sev, gargs, truth, rep, secs


def score(truth, rep):
    an = rep["anomalies"]
    s = {"steps": rep["steps"]["count"], "anomalies": len(an), "cv": rep["steps"]["cv"]}
    if truth["scenario"] in ("clean", "chronic"):
        chronic = {c["rank"] for c in truth["chronic"]}
        named = {r for a in an if a["kind"] == "persistent_imbalance" for r in a["ranks"]}
        s["false_alarms"] = sum(1 for a in an if not (a["kind"] == "persistent_imbalance"
                                                       and set(a["ranks"]) <= chronic))
        s["chronic_found"], s["chronic"] = len(named & chronic), len(chronic)
        return s
    f = truth["faults"][0]
    if f["kind"] == "iteration_jitter":
        hit = [a for a in an if a.get("period_steps") == f["period_steps"]]
        s["kind_ok"] = bool(hit)
        s["false_alarms"] = len(an) - len(hit[:1])
        s["delay"] = hit[0]["detected_at_step"] - f["steps"][0] if hit else None
        return s
    true = set(f["ranks"])
    pred = {r for a in an for r in a["ranks"]}
    s["tp"], s["fp"], s["fn"] = len(pred & true), len(pred - true), len(true - pred)
    hit = [a for a in an if a["kind"] == f["kind"] and set(a["ranks"]) & true]
    s["kind_ok"] = bool(hit)
    s["delay"] = min(a["detected_at_step"] for a in hit) - f["steps"][0] if hit else None
    if f["kind"] == "host_stall":
        s["steps_ok"] = any(a["steps"][0] <= min(f["steps"]) and
                            a["steps"][1] >= max(f["steps"]) for a in hit)
    return s


def ratio(a, b):
    return round(a / b, 3) if b else None


def summarise(rows):
    out = {}
    for scen, sev, _, truth, rep, _ in rows:
        out.setdefault(scen, {}).setdefault(sev, []).append(score(truth, rep))
    res = {}
    for scen, by in out.items():
        res[scen] = {}
        for sev, ss in by.items():
            r = {"runs": len(ss), "steps": sum(x["steps"] for x in ss),
                 "median_step_cv": round(statistics.median(x["cv"] for x in ss), 4)}
            if "false_alarms" in ss[0] and "kind_ok" not in ss[0]:
                fa = sum(x["false_alarms"] for x in ss)
                r["false_alarms"] = fa
                r["false_alarms_per_1k_steps"] = round(1000.0 * fa / r["steps"], 2)
                if scen == "chronic":
                    r["persistent_imbalance_recall"] = ratio(
                        sum(x["chronic_found"] for x in ss), sum(x["chronic"] for x in ss))
            else:
                if "tp" in ss[0]:
                    tp = sum(x["tp"] for x in ss)
                    r["precision"] = ratio(tp, tp + sum(x["fp"] for x in ss))
                    r["recall"] = ratio(tp, tp + sum(x["fn"] for x in ss))
                r["kind_accuracy"] = ratio(sum(x["kind_ok"] for x in ss), len(ss))
                if "steps_ok" in ss[0]:
                    r["steps_ok"] = ratio(sum(x["steps_ok"] for x in ss), len(ss))
                if "false_alarms" in ss[0]:
                    r["extra_anomalies"] = sum(x["false_alarms"] for x in ss)
                d = [x["delay"] for x in ss if x["delay"] is not None]
                r["median_delay_steps"] = statistics.median(d) if d else None
            res[scen][sev] = r
    return res


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--analyze", required=True, help="the argus-analyze binary")
    p.add_argument("--gen", default=GEN)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--full", action="store_true", help="64-rank jobs too (seeds >= 3)")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per run on stderr")
    a = p.parse_args(argv)
    runs = matrix(a.seeds, a.full)
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="argus-indep-")
    try:
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            rows = list(ex.map(lambda ir: one(a, tmp, *ir), enumerate(runs)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.verbose:
        for scen, sev, gargs, truth, rep, secs in rows:
            print(json.dumps({"scenario": scen, "severity": sev, "args": " ".join(gargs),
                              "truth": truth["faults"] or truth["chronic"],
                              "score": score(truth, rep),
                              "anomalies": [[x["kind"], x["ranks"], x["steps"]]
                                            for x in rep["anomalies"]]}), file=sys.stderr)
    line = {"bench": "detect_indep", "source": "indep", "level": "kernels",
            "runs": len(rows), "steps_per_run": a.steps, "seeds": a.seeds,
            "layouts": ["dp", "pp", "tp"],
            "analyze_s_per_run": round(sum(r[5] for r in rows) / len(rows), 2),
            "wall_s": round(time.monotonic() - t0, 1), "results": summarise(rows)}
    print(json.dumps(line, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
