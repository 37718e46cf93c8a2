#!/usr/bin/python3
"""detect_indep.py - Argus's diagnosis scored on the independent scenario source.

Generates the scenarios of tests/indep/gen.py for a few seeds and layouts at three data
levels (kernels: full Kineto traces; phases: a CPU/gloo job's phase ranges only; steps:
one steps.csv of per-rank own iteration times), runs `argus-analyze -o DIR INPUTS` on
each job, scores report.json against the generator's truth.json and prints ONE JSON line
(source "indep"), per level and, inside it, per scenario and severity:
  - precision / recall of source ranks: over all anomalies of a run, the union of their
    `ranks` against the truth's source ranks (micro-averaged over runs);
  - kind accuracy: runs where an anomaly of the true kind names a true source rank
    (checkpoint: an anomaly with the true `period_steps`);
  - host_stall `steps_ok`: that anomaly's `affected_steps` equal the stalled steps;
    checkpoint `period_ok`: exactly one anomaly carries the true `period_steps`;
    group_slow `one_anomaly`: one anomaly of the true kind names every rank of the group
    (a key a report lacks scores as a miss);
  - median delay from the onset to `detected_at_step` of that anomaly, in steps;
  - false alarms per 1,000 clean steps: every anomaly of a clean run; in the chronic runs
    every anomaly but a `persistent_imbalance` naming only chronically slow ranks, and
    the share of chronic ranks such a finding names (persistent_imbalance_recall).
Per level also the totals over fault runs at severities >= x1.2 and >= x1.3 (host stalls
and checkpoints count in both). "First report within 2 windows" is not measured: offline,
argus-analyze sees the whole run at once, so there are no windows to count.
Ratios, never absolute times; a benchmark, run by `make bench-detect-indep` only.

usage: detect_indep.py --analyze PATH [--gen PATH] [--seeds N] [--steps N]
                       [--clean-steps N] [--levels L,L] [--jobs N] [--full] [-v]
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
LEVELS = ("kernels", "phases", "steps")
# what step times alone can carry (a slow stage is a pipeline matter, the async receive a
# kernel one)
STEPS_SCENARIOS = ("clean", "chronic", "host_stall", "checkpoint", "compute_straggler",
                   "group_slow", "speed_classes")


def matrix(seeds, full, levels):
    """(level, scenario, severity label, gen arguments) for every run."""
    ranks = [16, 32, 64] if full else [16, 32]
    sevs = ("1.2", "1.3", "1.5") if full else ("1.2", "1.3")
    runs = []
    for level in levels:
        for seed in range(1, seeds + 1):
            n = ranks[(seed - 1) % len(ranks)]
            for lay in ("dp", "pp", "tp"):
                base = ["--seed", str(seed), "--ranks", str(n), "--layout", lay,
                        "--level", level]
                cand = [("clean", "x1.0", ["--scenario", "clean"], True),
                        ("chronic", "x1.05-1.15", ["--scenario", "chronic"], True),
                        ("host_stall", "0.3-0.6s", ["--scenario", "host_stall"], False),
                        ("checkpoint", "x1.7", ["--scenario", "checkpoint"], False)]
                for sev in sevs:
                    cand.append(("compute_straggler", "x" + sev,
                                 ["--scenario", "compute_straggler", "--severity", sev], False))
                    cand.append(("group_slow", "x" + sev,
                                 ["--scenario", "group_slow", "--severity", sev], False))
                    if lay == "dp":
                        cand.append(("speed_classes", "x" + sev,
                                     ["--scenario", "speed_classes", "--severity", sev],
                                     False))
                    else:
                        cand.append(("slow_stage", "x" + sev,
                                     ["--scenario", "slow_stage", "--severity", sev], False))
                if lay == "pp" and level == "kernels":   # the NCCL-like receive, to compare
                    cand.append(("compute_straggler_async_p2p", "x1.3",
                                 ["--scenario", "compute_straggler", "--severity", "1.3",
                                  "--p2p", "async"], False))
                for scen, sev, args, clean in cand:
                    if level == "steps" and scen not in STEPS_SCENARIOS:
                        continue
                    runs.append((level, scen, sev, clean, base + args))
    return runs


def one(args, tmp, i, run):
    level, scen, sev, clean, gargs = run
    d = os.path.join(tmp, "run%03d" % i)
    jd, od = os.path.join(d, "job"), os.path.join(d, "out")
    steps = args.clean_steps if clean else args.steps
    subprocess.run([sys.executable, args.gen, "-o", jd, "--steps", str(steps)] + gargs,
                   check=True)
    inputs = sorted(os.path.join(jd, f) for f in os.listdir(jd)
                    if f.startswith("trace_rank") or f == "steps.csv")
    t0 = time.monotonic()
    p = subprocess.run([args.analyze, "-o", od] + inputs, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("argus-analyze failed on %s %s: %s" % (scen, gargs, p.stderr))
    with open(os.path.join(jd, "truth.json")) as f:
        truth = json.load(f)
    with open(os.path.join(od, "report.json")) as f:
        rep = json.load(f)
    shutil.rmtree(d, ignore_errors=True)
    return level, scen, sev, gargs, truth, rep, secs


def score(truth, rep):
    an = rep["anomalies"]
    s = {"steps": rep["steps"]["count"], "anomalies": len(an), "cv": rep["steps"]["cv"]}
    if truth["scenario"] in ("clean", "chronic"):
        chronic = {c["rank"] for c in truth["chronic"]}
        ok = [a for a in an if a["kind"] == "persistent_imbalance" and a["ranks"] and
              set(a["ranks"]) <= chronic]
        s["false_alarms"] = len(an) - len(ok)
        s["chronic_found"] = len({r for a in ok for r in a["ranks"]})
        s["chronic"] = len(chronic)
        return s
    f = truth["faults"][0]
    if f["kind"] == "iteration_jitter":
        hit = [a for a in an if a.get("period_steps") == f["period_steps"]]
        s["kind_ok"] = bool(hit)
        s["period_ok"] = len(hit) == 1
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
        s["steps_ok"] = any(sorted(a.get("affected_steps") or []) == sorted(f["steps"])
                            for a in hit)
    if truth["scenario"] == "group_slow":
        s["one_anomaly"] = any(set(a["ranks"]) >= true for a in hit)
    return s


def ratio(a, b):
    return round(a / b, 3) if b else None


def sev_value(sev):
    """x1.2 -> 1.2; host stalls and checkpoints count as strong (>= x1.3)."""
    try:
        return float(sev[1:])
    except ValueError:
        return 9.9


def figures(ss):
    """precision, recall, kind accuracy, ... of a list of fault-run scores."""
    r = {"runs": len(ss)}
    ranked = [x for x in ss if "tp" in x]
    if ranked:
        tp = sum(x["tp"] for x in ranked)
        r["precision"] = ratio(tp, tp + sum(x["fp"] for x in ranked))
        r["recall"] = ratio(tp, tp + sum(x["fn"] for x in ranked))
    r["kind_accuracy"] = ratio(sum(x["kind_ok"] for x in ss), len(ss))
    for k in ("steps_ok", "period_ok", "one_anomaly"):
        if any(k in x for x in ss):
            r[k] = ratio(sum(x.get(k, False) for x in ss), sum(k in x for x in ss))
    if any("false_alarms" in x for x in ss):
        r["extra_anomalies"] = sum(x.get("false_alarms", 0) for x in ss)
    d = [x["delay"] for x in ss if x.get("delay") is not None]
    r["median_delay_steps"] = statistics.median(d) if d else None
    return r


def summarise(rows):
    """{level: {severity_ge_1.2, severity_ge_1.3, clean, chronic, results}}"""
    by = {}
    for level, scen, sev, _, truth, rep, _ in rows:
        by.setdefault(level, {}).setdefault(scen, {}).setdefault(sev, []).append(
            score(truth, rep))
    out = {}
    for level, scens in by.items():
        res, ge12, ge13, lv = {}, [], [], {}
        for scen, sevs in scens.items():
            res[scen] = {}
            for sev, ss in sevs.items():
                r = {"runs": len(ss), "steps": sum(x["steps"] for x in ss),
                     "median_step_cv": round(statistics.median(x["cv"] for x in ss), 4)}
                if scen in ("clean", "chronic"):
                    fa = sum(x["false_alarms"] for x in ss)
                    r["false_alarms"] = fa
                    r["false_alarms_per_1k_steps"] = round(1000.0 * fa / r["steps"], 2)
                    if scen == "chronic":
                        r["persistent_imbalance_recall"] = ratio(
                            sum(x["chronic_found"] for x in ss), sum(x["chronic"] for x in ss))
                    lv[scen] = r
                else:
                    r.update(figures(ss))
                    if sev_value(sev) >= 1.2:
                        ge12.extend(ss)
                    if sev_value(sev) >= 1.3:
                        ge13.extend(ss)
                res[scen][sev] = r
        out[level] = {"severity_ge_1.2": figures(ge12) if ge12 else None,
                      "severity_ge_1.3": figures(ge13) if ge13 else None,
                      "clean": lv.get("clean"), "chronic": lv.get("chronic"),
                      "results": res}
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--analyze", required=True, help="the argus-analyze binary")
    p.add_argument("--gen", default=GEN)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--clean-steps", type=int, default=0,
                   help="steps of the clean and chronic runs (default: --steps)")
    p.add_argument("--levels", default=",".join(LEVELS))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--full", action="store_true",
                   help="64-rank jobs and x1.5 too (use with --seeds 3)")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per run on stderr")
    a = p.parse_args(argv)
    a.clean_steps = a.clean_steps or a.steps
    levels = [x for x in a.levels.split(",") if x]
    if not levels or any(x not in LEVELS for x in levels):
        p.error("--levels: a comma-separated list of %s" % ", ".join(LEVELS))
    runs = matrix(a.seeds, a.full, levels)
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="argus-indep-")
    try:
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            rows = list(ex.map(lambda ir: one(a, tmp, *ir), enumerate(runs)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.verbose:
        for level, scen, sev, gargs, truth, rep, secs in rows:
            print(json.dumps({"level": level, "scenario": scen, "severity": sev,
                              "args": " ".join(gargs),
                              "truth": truth["faults"] or truth["chronic"],
                              "score": score(truth, rep),
                              "anomalies": [[x["kind"], x["ranks"], x["steps"]]
                                            for x in rep["anomalies"]]}), file=sys.stderr)
    line = {"bench": "detect_indep", "source": "indep", "runs": len(rows),
            "steps_per_run": a.steps, "clean_steps_per_run": a.clean_steps,
            "seeds": a.seeds, "layouts": ["dp", "pp", "tp"], "levels_run": levels,
            "analyze_s_per_run": round(sum(r[6] for r in rows) / len(rows), 2),
            "wall_s": round(time.monotonic() - t0, 1),
            "not_measured": {"within_2_windows": "offline analysis sees the whole run at "
                                                 "once: no windows"},
            "levels": summarise(rows)}
    print(json.dumps(line, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
