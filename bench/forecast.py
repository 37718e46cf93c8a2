#!/usr/bin/python3
"""forecast.py - bench/forecast: argus-predict --cut 0.25 against what really happened, over
at least 20 runs from four sources, and against the naive baseline (the mean of the last
100 steps seen x the steps left). One JSON line on stdout (docs/ALGORITHMS.md, "Forecast
(PRISM)", "Validation").

Sources: argus-simtrain jobs run to the end under argus-run (4 ranks, tp1 pp2 dp2, 200
steps: clean, a regime change before the cut, checkpoint-like spikes every 20 steps, both,
a straggler), tests/indep/gen.py at its steps level (8 scenarios), and the real trainer
logs of tests/data/logs (also cut at 10 % and 50 %, reported apart), the spools of a
real PyTorch job (tests/data/torch, recorded by tests/forecast/record_torch.sh: 2 ranks of
DDP over gloo on CPU, 400 steps: plain, the planned steps set by argus.set_total_steps
and by ARGUS_TOTAL_STEPS, a checkpoint every 25 steps, a regime change before the cut, a
CPU-hog neighbour; source "torch", per run in torch_runs, and in torch_plan what the
planned steps say once all are done), and, when the checkout has them beside it, the
fuller real logs of ../shared/data/logs (every one argus-analyze reads, cut at 25 %:
shared_logs, apart from "all"). Per run: the step
series (the slowest rank's wall per step, from the steps.csv argus-analyze or the live run
writes), the truth (the time the steps after the cut took), the baseline, argus-predict's
quantiles. Figures: mean absolute P50 error of the remaining time, the share of truths
inside P10-P90, CRPS (from the quantile function through P10/P50/P90/P99, extended
linearly) relative to the truth, and the same for the baseline (a point forecast: its CRPS
is its absolute error); the Kolmogorov-Smirnov distance between the held-out steps and the
modelled law of one step (argus-predict's step_quantiles_ms, P1..P99), beside the KS
distance sampling alone gives between the k steps fitted and the m held out (ks_floor_mean:
0.8687 sqrt(1/k + 1/m), the Kolmogorov law's mean) and the mean of each run's KS over it
(ks_over_floor_mean). The DP x 2 what-if
is judged against a real run at DP 4: its median step against the real run's held-out
median, and the KS distance of the two. The simulator's DP collectives take the same
transfer time at any group size (sim/vclock.c), where the what-if scales it by the ring
term ((N-1)/N per rank: x1.5 from 2 to 4 replicas); so the judged DP 4 runs have their
DP collectives' transfer scaled by that factor (comm_degradation on every DP group), and
the figures against the simulator's unscaled DP 4 run are given apart
(dp2_whatif_fixed_comm_*: the what-if's law shifted by the half of the transfer it
adds). The microbatch
what-if (mb=2, mb=8 from 4 microbatches, pp 2) is judged the same way against real runs
at 2 and 8 microbatches (mb_whatif_*). A run whose source injected a fault that starts
after the cut (gen.py puts its faults at a third of the steps) is marked fault_after_cut:
nothing before the cut tells of it; the figures are given over all runs and, apart,
over the others.

usage: forecast.py BUILDDIR SRCDIR
With FORECAST_ROWS=FILE in the environment, every judged run (all sources, the other cuts
and shared_logs) is also written to FILE, one JSON object per line: name, source, cut,
truth, the quantiles q, the P50 error, inside P10-P90, KS and its floor, fault_after_cut.
"""
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile

B, S = sys.argv[1], sys.argv[2]
PREDICT = os.path.join(B, "argus-predict")
ANALYZE = os.path.join(B, "argus-analyze")
SIM = os.path.join(B, "argus-simtrain")
RUN = os.path.join(B, "tests", "argus-run-build")
GEN = os.path.join(S, "tests", "indep", "gen.py")
LOGS = os.path.join(S, "tests", "data", "logs")
ENV = dict(os.environ, OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1",
           OMPI_MCA_mpi_yield_when_idle="1", ARGUS_DEADLINE_MS="30000",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
ENV.pop("ARGUS_TOTAL_STEPS", None)  # the plans judged are the inputs' own (torch_plan)
W = tempfile.mkdtemp(prefix="argus-bench-fc.")


def series(steps_csv):
    st = {}
    for row in csv.DictReader(open(steps_csv)):
        w = (int(row["end_ns"]) - int(row["start_ns"])) / 1e9
        s = int(row["step"])
        st[s] = max(st.get(s, 0.0), w)
    return [st[s] for s in sorted(st)]


def steps_of(path, name):
    out = os.path.join(W, "an-" + name)
    subprocess.run([ANALYZE, "-o", out, path], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=ENV)
    return series(os.path.join(out, "steps.csv"))


def crps(q, y):
    pts = [(0.10, q["p10"]), (0.50, q["p50"]), (0.90, q["p90"]), (0.99, q["p99"])]

    def Q(t):
        if t <= 0.10:
            return q["p10"] - (0.10 - t) * (q["p50"] - q["p10"]) / 0.40
        if t >= 0.99:
            return q["p99"] + (t - 0.99) * (q["p99"] - q["p90"]) / 0.09
        for (a, qa), (b, qb) in zip(pts, pts[1:]):
            if a <= t <= b:
                return qa + (t - a) * (qb - qa) / (b - a)
    tot, n = 0.0, 200
    for i in range(n):
        t = (i + 0.5) / n
        x = Q(t)
        tot += ((1 if y < x else 0) - t) * (x - y)
    return 2 * tot / n


def ks(q_ms, xs):
    """KS distance between the sample xs (s) and the law with P1..P99 q_ms (ms)."""
    ps = [(k + 1) / 100.0 for k in range(len(q_ms))]
    qs = [v / 1e3 for v in q_ms]

    def F(x):
        if x < qs[0]:
            return ps[0] * (x / qs[0] if qs[0] > 0 and x > 0 else 0.0)
        if x >= qs[-1]:
            return ps[-1] + (1 - ps[-1]) * min(1.0, (x - qs[-1]) / max(qs[-1] - qs[-2], 1e-12))
        lo, hi = 0, len(qs) - 1
        while hi - lo > 1:
            m = (lo + hi) // 2
            if qs[m] <= x:
                lo = m
            else:
                hi = m
        w = (x - qs[lo]) / (qs[hi] - qs[lo]) if qs[hi] > qs[lo] else 1.0
        return ps[lo] + w * (ps[hi] - ps[lo])
    # against the right-continuous F and its left limit at every sample value, so
    # that steps logged in whole milliseconds (ties) are judged fairly
    xs = sorted(xs)
    n = len(xs)
    d, i = 0.0, 0
    while i < n:
        j = i
        while j < n and xs[j] == xs[i]:
            j += 1
        x = xs[i]
        d = max(d, abs(j / n - F(x)), abs(i / n - F(x - 1e-9 * max(abs(x), 1e-12))))
        i = j
    return d


def fault_after(path, cut_step):
    """1 when the source's truth.json names a fault starting after cut_step."""
    t = os.path.join(path, "truth.json") if os.path.isdir(path) else ""
    if not t or not os.path.exists(t):
        return False
    return any(f.get("steps") and f["steps"][0] > cut_step
               for f in json.load(open(t)).get("faults", []))


def judge(path, name, source, cut=0.25, extra=()):
    ts = steps_of(path, name)
    n = len(ts)
    k = int(cut * n)
    truth = sum(ts[k:])
    fit = ts[:k]
    last = fit[-100:]
    base = sum(last) / len(last) * (n - k)
    p = subprocess.run([PREDICT, "--cut", str(cut), "--json", *extra, path],
                       capture_output=True, text=True, env=ENV)
    if p.returncode == 1 and "need at least 8" in p.stderr:
        return None  # too few steps before the cut (MLPerf's 60 steps at 10 %)
    if p.returncode != 0:
        raise SystemExit("argus-predict on %s: %s" % (path, p.stderr.strip()))
    j = json.loads(p.stdout)
    r = j["remaining_s"]
    return {"name": name, "source": source, "cut": cut, "truth": truth,
            "actual": j["actual_remaining_s"], "q": r, "base": base, "whatif": j["whatif"],
            "p50_err": abs(r["p50"] - truth) / truth,
            "inside": r["p10"] <= truth <= r["p90"],
            "crps": crps(r, truth) / truth, "crps_base": abs(base - truth) / truth,
            "base_err": abs(base - truth) / truth, "ks": ks(j["step_quantiles_ms"], ts[k:]),
            # the KS distance sampling alone gives between the k steps fitted and the
            # n - k held out: the Kolmogorov law's mean, sqrt(pi / 2) ln 2, x sqrt(1/k+1/m)
            "ks_floor": 0.8687 * (1.0 / k + 1.0 / (n - k)) ** 0.5,
            "fault_after_cut": fault_after(path, k - 1)}


def sim(name, dp, seed, inject, mb=4):
    out = os.path.join(W, "sim")
    args = [RUN, "--outdir", out, "--", "mpirun", "-np", str(2 * dp), SIM, "--tp", "1",
            "--pp", "2", "--dp", str(dp), "--microbatches", str(mb), "--steps", "200",
            "--seed", str(seed)]
    for i in inject:
        args += ["--inject", i]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(ENV, ARGUS_JOBID=name), timeout=300)
    return os.path.join(out, "argus-" + name, "summaries.argus")


CKPT = ["iteration_jitter:steps=%d,factor=3" % s for s in range(19, 200, 20)]
SIMS = [("clean", []), ("clean", []), ("clean", []),
        ("regression", ["step_regression:steps=30-,factor=1.15"]),
        ("regression", ["step_regression:steps=40-,factor=1.2"]),
        ("checkpoints", CKPT), ("checkpoints", CKPT),
        ("ckpt-regression", CKPT + ["step_regression:steps=30-,factor=1.15"]),
        ("straggler", ["compute_straggler:ranks=1,steps=0-,factor=1.2"])]
runs = []
for i, (kind, inj) in enumerate(SIMS):
    nm = "sim%d-%s" % (i, kind)
    runs.append(judge(sim(nm, 2, 11 + i, inj), nm, "simtrain",
                      extra=("--whatif", "dp=2,mb=2,mb=8", "--microbatches", "4")))
    runs[-1]["inj"] = inj
# DP x 2 against real runs at DP 4 (same seeds, same injections): their DP collectives'
# transfer x the ring term's ratio (2 stages: DP groups 0 and 1), and as the simulator has
# it (the same transfer at any group size); mb=2, mb=8 against real runs at 2, 8
RING = (3 / 4) / (1 / 2)


def against(w, real):
    k = int(0.25 * len(real))
    truth = sum(real[k:])
    held = sorted(real[k:])
    med = held[len(held) // 2] if len(held) % 2 else (held[len(held) // 2 - 1] +
                                                      held[len(held) // 2]) / 2
    return {"p50_err": abs(w["p50"] - truth) / truth,
            "step_p50_err": abs(w["step_p50_ms"] / 1e3 - med) / med,
            "ks": ks(w["step_quantiles_ms"], real[k:])}


def real_steps(name, dp, seed, inject, mb=4):
    return series(os.path.join(os.path.dirname(sim(name, dp, seed, inject, mb)), "steps.csv"))


dp2, dp2_fixed, mbw = [], [], []
for r in runs[:3] + runs[5:6]:
    i = int(r["name"][3:].split("-")[0])
    ring = ["comm_degradation:group=dp,index=%d,steps=0-,factor=%.6f" % (g, RING)
            for g in (0, 1)]
    dp2.append(against(r["whatif"]["dp=2"], real_steps("dp4r-%d" % i, 4, 11 + i,
                                                       r["inj"] + ring)))
    dp2_fixed.append(against(r["whatif"]["dp=2"], real_steps("dp4-%d" % i, 4, 11 + i,
                                                             r["inj"])))
for r in runs[:3]:
    i = int(r["name"][3:].split("-")[0])
    for m in (2, 8):
        mbw.append(against(r["whatif"]["mb=%d" % m], real_steps("mb%d-%d" % (m, i), 2,
                                                                11 + i, r["inj"], m)))
GENS = [("clean", []), ("checkpoint", ["--period", "25"]), ("compute_straggler", []),
        ("host_stall", []), ("chronic", []), ("speed_classes", []), ("group_slow", []),
        ("checkpoint", ["--period", "40"])]
for i, (sc, extra) in enumerate(GENS):
    d = os.path.join(W, "gen%d" % i)
    subprocess.run(["python3", GEN, "-o", d, "--scenario", sc, "--seed", str(100 + i),
                    "--ranks", "4", "--steps", "240", "--level", "steps", *extra],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs.append(judge(d, "gen%d-%s" % (i, sc), "indep"))
LOGF = ["modded_nanogpt_medium_2025-01-18_rank0.txt", "mlperf_gpt3_175b_eos_n64_result_0.txt",
        "deepspeed_chat_step3_rlhf_rank0.log"]
for f in LOGF:
    runs.append(judge(os.path.join(LOGS, f), f.split("_")[0] + "-" + f.split("_")[1],
                      "real_logs"))
# the real PyTorch job of tests/data/torch (tests/forecast/record_torch.sh: 2 ranks of
# DDP over gloo on CPU, 400 steps each): every spool cut at 25 %; and what the planned
# steps say at the end of the run (all planned steps done): argus-analyze's forecast of
# the whole spool when the plan is in it (argus.set_total_steps; ARGUS_TOTAL_STEPS too in
# spools recorded since the rank info carries it), the live report's when only rank 0 had
# it (ARGUS_TOTAL_STEPS in older spools), against the plan and the steps run (run.json).
# Whether the spool has it is read from argus-analyze's report of it, not from run.json
TORCH = os.path.join(S, "tests", "data", "torch")
torch_plans = []
for nm in sorted(os.listdir(TORCH)):
    sp = os.path.join(TORCH, nm, "summaries.argus")
    if not os.path.isfile(sp):
        continue
    runs.append(judge(sp, "torch-" + nm, "torch"))
    meta = json.load(open(os.path.join(TORCH, nm, "run.json")))
    if not meta["planned_steps"]:
        continue
    # argus-analyze's report of the whole spool (judge ran it, with ENV's environment)
    seen = json.load(open(os.path.join(W, "an-torch-" + nm, "report.json")))["forecast"]
    if seen and not seen["per_1000_steps"]:
        where = "spool"
    else:
        seen, where = meta["live_forecast"], "live"
    torch_plans.append({"run": nm, "from": where, "planned": meta["planned_steps"],
                        "run_steps": meta["steps_run"], "steps_total": seen["steps_total"],
                        "steps_left_at_end": seen["steps_left"]})
other_cuts = [judge(os.path.join(LOGS, f), f.split("_")[0], "real_logs", cut=c)
              for f in LOGF for c in (0.10, 0.50)]
other_cuts = [r for r in other_cuts if r]
# the fuller set of real logs beside the checkout (../shared/data/logs: MLPerf GPT-3 at
# 64 to 1,344 nodes, modded-nanogpt records, DeepSpeed-Chat), when there: each log in a
# format argus-analyze reads, cut at 25 %, reported apart (shared_logs); not in "all"
SHARED = os.environ.get("ARGUS_SHARED_LOGS", os.path.join(S, "..", "shared", "data", "logs"))
shared_runs = []
if not os.path.isdir(SHARED):
    print("forecast.py: no %s (set ARGUS_SHARED_LOGS): shared_logs left out" % SHARED,
          file=sys.stderr)
for d, _, files in sorted(os.walk(SHARED)):
    for f in sorted(files):
        if not f.endswith(".gz") or "config" in f:
            continue
        dst = os.path.join(W, "shared-" + f[:-3])
        with gzip.open(os.path.join(d, f), "rb") as fi, open(dst, "wb") as fo:
            fo.write(fi.read())
        try:
            r = judge(dst, "shared-" + f[:48], "shared_logs")
        except (SystemExit, subprocess.CalledProcessError, FileNotFoundError):
            continue  # a format argus-analyze does not read, or too few steps
        if r:
            shared_runs.append(r)


def summary(rs):
    n = len(rs)
    c = sum(r["crps"] for r in rs) / n
    cb = sum(r["crps_base"] for r in rs) / n
    fore = [r for r in rs if not r["fault_after_cut"]]
    return {"runs": n, "fault_after_cut": n - len(fore),
            "p50_err_mean_no_fault_after_cut":
                round(sum(r["p50_err"] for r in fore) / len(fore), 4) if fore else None,
            "ks_mean": round(sum(r["ks"] for r in rs) / n, 4),
            "ks_max": round(max(r["ks"] for r in rs), 4),
            "ks_floor_mean": round(sum(r["ks_floor"] for r in rs) / n, 4),
            "ks_over_floor_mean": round(sum(r["ks"] / r["ks_floor"] for r in rs) / n, 3),
            "ks_mean_no_fault_after_cut":
                round(sum(r["ks"] for r in fore) / len(fore), 4) if fore else None,
            "ks_max_no_fault_after_cut":
                round(max(r["ks"] for r in fore), 4) if fore else None,
            "p50_err_mean": round(sum(r["p50_err"] for r in rs) / n, 4),
            "p50_err_max": round(max(r["p50_err"] for r in rs), 4),
            "coverage_p10_p90": round(sum(r["inside"] for r in rs) / n, 3),
            "crps_rel": round(c, 4), "crps_rel_baseline": round(cb, 4),
            "crps_gain_vs_baseline": round(1 - c / cb, 3) if cb > 0 else None,
            "baseline_err_mean": round(sum(r["base_err"] for r in rs) / n, 4)}


out = {"bench": "forecast", "cut": 0.25, "all": summary(runs)}
for src in ("simtrain", "indep", "real_logs", "torch"):
    out[src] = summary([r for r in runs if r["source"] == src])
out["real_logs_cut_10_50"] = summary(other_cuts)
out["torch_runs"] = [[r["name"][6:], round(r["p50_err"], 4), r["inside"], round(r["ks"], 3)]
                    for r in runs if r["source"] == "torch"]
out["torch_plan"] = torch_plans
if not shared_runs:
    out["shared_logs"] = None  # not there (said on stderr) or nothing in it could be read
else:
    out["shared_logs"] = summary(shared_runs)
    out["shared_logs_worst"] = sorted(((round(r["p50_err"], 4), round(r["ks"], 3), r["name"])
                                       for r in shared_runs), reverse=True)[:3]
out["dp2_whatif_p50_err_mean"] = round(sum(d["p50_err"] for d in dp2) / len(dp2), 4)
out["dp2_whatif_p50_err_max"] = round(max(d["p50_err"] for d in dp2), 4)
out["dp2_whatif_step_p50_err_mean"] = round(sum(d["step_p50_err"] for d in dp2) / len(dp2),
                                            4)
out["dp2_whatif_step_p50_err_max"] = round(max(d["step_p50_err"] for d in dp2), 4)
out["dp2_whatif_ks_mean"] = round(sum(d["ks"] for d in dp2) / len(dp2), 4)
out["dp2_whatif_ks_max"] = round(max(d["ks"] for d in dp2), 4)
for key, ds in (("dp2_whatif_fixed_comm", dp2_fixed), ("mb_whatif", mbw)):
    for fig in ("p50_err", "step_p50_err", "ks"):
        out["%s_%s_mean" % (key, fig)] = round(sum(d[fig] for d in ds) / len(ds), 4)
        out["%s_%s_max" % (key, fig)] = round(max(d[fig] for d in ds), 4)
out["worst"] = sorted(((round(r["p50_err"], 4), r["name"]) for r in runs), reverse=True)[:3]
print(json.dumps(out))
if os.environ.get("FORECAST_ROWS"):
    with open(os.environ["FORECAST_ROWS"], "w") as fo:
        for r in runs + other_cuts + shared_runs:
            fo.write(json.dumps({k: r[k] for k in ("name", "source", "cut", "truth", "q",
                                                   "p50_err", "inside", "ks", "ks_floor",
                                                   "fault_after_cut")}) + "\n")
subprocess.run(["rm", "-rf", W])
