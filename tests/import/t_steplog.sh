#!/bin/sh
# t_steplog.sh — per-rank iteration times straight from trainer logs (import/steplog.c) and
# minimal steps.csv files (import/csv.c). Real log excerpts of tests/data/logs (MLPerf
# GPT-3, modded-nanogpt, DeepSpeed-Chat) and Megatron-LM / tqdm lines written here in their
# upstream formats (one file starting with a "[date]" line, as launchers print: no JSON
# array) are analysed; the step count, first and last step, ranks and step times
# of report.json / steps.csv are checked against values computed here from the logs
# themselves. A file of no known format beside them is skipped with one line naming it.
# steps.csv with only step,rank,duration_ms, and with an empty phase cell, is accepted.
. "$(dirname "$0")/lib.sh"
L="$DATA/logs"
need_data logs/mlperf_gpt3_175b_eos_n64_result_0.txt \
    logs/modded_nanogpt_medium_2025-01-18_rank0.txt logs/deepspeed_chat_step3_rlhf_rank0.log

# check DIR COUNT FIRST LAST RANKS [MEDIAN_MS]: report.json says so
check() {
    python3 - "$@" <<'PY' || fail "report of $1"
import json, sys
d, count, first, last, ranks = sys.argv[1:6]
j = json.load(open(d + "/report.json"))
st = j["steps"]
got = (st["count"], st["first"], st["last"], j["job"]["ranks"])
want = (int(count), int(first), int(last), int(ranks))
assert got == want, ("count, first, last, ranks", got, "expected", want)
if len(sys.argv) > 6:
    assert abs(st["median_ms"] - float(sys.argv[6])) <= 0.01 * float(sys.argv[6]), st
PY
}

# expected values from a log: python over its lines, independent of the importer
expect() { # FORMAT FILE -> "count first last median_ms"
    python3 - "$@" <<'PY'
import re, statistics, sys
fmt, path = sys.argv[1:3]
text = open(path, encoding="utf-8", errors="replace").read()
lines = re.split(r"[\r\n]", text)
steps, times = [], []
if fmt == "mlperf":
    for l in lines:
        m = re.search(r'"key": "tracked_stats".*"train_step_timing": ([0-9.]+)', l)
        if m:
            times.append(float(m.group(1)) * 1e3)
    steps = list(range(1, len(times) + 1))
elif fmt == "dschat":
    step = None
    for l in lines:
        m = re.match(r"epoch: \d+\|step: (\d+)\|", l)
        if m:
            step = int(m.group(1))
        m = re.match(r"\|E2E latency=([0-9.]+)s", l)
        if m and step is not None:
            steps.append(step); times.append(float(m.group(1)) * 1e3); step = None
elif fmt == "megatron":
    for l in lines:
        m = re.search(r"iteration +(\d+)/ *\d+ \|.*elapsed time per iteration \(ms\): ([0-9.]+)", l)
        if m:
            steps.append(int(m.group(1))); times.append(float(m.group(2)))
else: # running totals: nanogpt train_time (ms), tqdm elapsed [H:]MM:SS
    prev = None
    for l in lines:
        if fmt == "nanogpt":
            m = re.match(r"step:(\d+)/\d+ .*train_time:(\d+)ms", l)
            t = m and float(m.group(2))
        else:
            m = re.search(r"(\d+)/\d+ \[([0-9:]+)<", l)
            hms = m and reversed(m.group(2).split(":"))
            t = m and sum(int(x) * 60 ** i for i, x in enumerate(hms)) * 1e3
        if not m:
            continue
        s = int(m.group(1))
        if prev is None:
            prev = (s, t); continue
        if s <= prev[0]:
            continue
        base = prev[1] if t >= prev[1] else 0.0
        steps.append(s); times.append((t - base) / (s - prev[0])); prev = (s, t)
print(len(steps), steps[0], steps[-1], statistics.median(times))
PY
}

# --- the real excerpts, one format each -------------------------------------------------
for spec in mlperf:mlperf_gpt3_175b_eos_n64_result_0.txt \
    nanogpt:modded_nanogpt_medium_2025-01-18_rank0.txt \
    dschat:deepspeed_chat_step3_rlhf_rank0.log; do
    fmt=${spec%%:*} f=${spec#*:}
    set -- $(expect "$fmt" "$L/$f")
    [ "$1" -gt 20 ] || fail "$f: expected steps not found by the test itself"
    "$ANALYZE" -o "$WORK/$fmt" "$L/$f" >/dev/null 2>"$WORK/$fmt.err" ||
        { cat "$WORK/$fmt.err" >&2; fail "$f not analysed"; }
    check "$WORK/$fmt" "$1" "$2" "$3" 1 "$4"
    python3 - "$WORK/$fmt/steps.csv" <<'PY' || fail "$f: a rank's step times go back"
import csv, sys
end = 0
for r in sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r["step"])):
    assert int(r["start_ns"]) >= end and int(r["end_ns"]) >= int(r["start_ns"]), (r, end)
    end = int(r["end_ns"])
PY
done
# DeepSpeed-Chat's phase split: Generate -> forward, Training -> backward, Others -> host
python3 - "$WORK/dschat/steps.csv" "$L/deepspeed_chat_step3_rlhf_rank0.log" <<'PY' ||
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
g = re.findall(r"Generate time=([0-9.]+)s .*Training time=([0-9.]+)s .*Others=([0-9.]+)",
               open(sys.argv[2]).read())
assert len(rows) == len(g), (len(rows), len(g))
for r, (ge, tr, ot) in zip(rows, g):
    assert abs(float(r["forward_ms"]) - float(ge) * 1e3) < 0.01, (r, ge)
    assert abs(float(r["backward_ms"]) - float(tr) * 1e3) < 0.01, (r, tr)
    assert abs(float(r["host_gap_ms"]) - float(ot) * 1e3) < 0.01, (r, ot)
PY
    fail "DeepSpeed-Chat phase split"

# --- several nodes: the rank from --rank-from, else "rank N" in the name ----------------
mkdir "$WORK/nodes"
cp "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" "$WORK/nodes/node_result_0.txt"
cp "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" "$WORK/nodes/node_result_1.txt"
printf 'this is no trainer log\n' >"$WORK/nodes/notes.txt"
set -- $(expect mlperf "$L/mlperf_gpt3_175b_eos_n64_result_0.txt")
"$ANALYZE" -o "$WORK/n" --rank-from 'result_([0-9]+)' "$WORK/nodes" >/dev/null \
    2>"$WORK/n.err" || { cat "$WORK/n.err" >&2; fail "two MLPerf nodes"; }
check "$WORK/n" "$1" "$2" "$3" 2 "$4"
[ "$(grep -c 'notes.txt' "$WORK/n.err")" = 1 ] && grep -q 'notes.txt: unknown format' \
    "$WORK/n.err" || { cat "$WORK/n.err" >&2; fail "unknown file not skipped in one line"; }

# the same rank twice: the later log is skipped with one line
mkdir "$WORK/dup"
cp "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" "$WORK/dup/a_rank3.txt"
cp "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" "$WORK/dup/b_rank3.txt"
"$ANALYZE" -o "$WORK/d" "$WORK/dup" >/dev/null 2>"$WORK/d.err" || fail "duplicate ranks"
grep -q 'b_rank3.txt: duplicate rank 3' "$WORK/d.err" && check "$WORK/d" "$1" "$2" "$3" 4 ||
    { cat "$WORK/d.err" >&2; fail "a second log of rank 3 not skipped"; }

# --- Megatron-LM and tqdm, written here in their upstream line formats, 2 ranks each ------
python3 - "$WORK" <<'PY'
import random, sys
w = sys.argv[1]
random.seed(7)
for r in (0, 1):
    with open(f"{w}/megatron_rank{r}.log", "w") as f:
        # a first line in "[" (as launchers print) is no JSON array: still a log
        f.write("[2024-05-01 10:00:00,000] [INFO] [launch.py:256:main] process 1 spawned\n"
                if r else "> building GPT model ...\n")
        for it in range(10, 410, 10):
            ms = 1200 + random.random() * 50 + (400 if r == 1 and it > 300 else 0)
            f.write(f" [2024-05-01 10:{it // 60:02d}:{it % 60:02d}] iteration {it:8d}/{500:8d} |"
                    f" consumed samples: {it * 64:12d} | elapsed time per iteration (ms):"
                    f" {ms:.1f} | learning rate: 1.000000E-04 | global batch size:    64 |"
                    f" lm loss: 7.5E+00 | loss scale: 1.0 | number of skipped iterations:"
                    f"   0 | number of nan iterations:   0 |\n")
    with open(f"{w}/tqdm_rank{r}.log", "w") as f:
        f.write("***** Running training *****\n")
        t, bar = 0.0, []
        for s in range(0, 301):
            if s:
                t += 0.9 + random.random() * 0.2 + (1.0 if r == 0 and s > 250 else 0)
            if s % 3 and s != 300:
                continue
            e = int(t)
            bar.append(f"{s * 100 // 300:3d}%|{'#' * (s // 30):10s}| {s}/300 "
                       f"[{e // 60:02d}:{e % 60:02d}<00:10,  1.00it/s]")
        f.write("\r".join(bar) + "\n")
PY
for fmt in megatron tqdm; do
    set -- $(expect "$fmt" "$WORK/${fmt}_rank1.log")
    "$ANALYZE" -o "$WORK/o$fmt" "$WORK/${fmt}_rank0.log" "$WORK/${fmt}_rank1.log" \
        >/dev/null 2>"$WORK/$fmt.err" || { cat "$WORK/$fmt.err" >&2; fail "$fmt not analysed"; }
    check "$WORK/o$fmt" "$1" "$2" "$3" 2
    grep -q "${fmt}_rank1.log: $fmt log, rank 1, $1 steps" "$WORK/$fmt.err" ||
        { cat "$WORK/$fmt.err" >&2; fail "$fmt rank 1"; }
done

# --- minimal steps.csv: step,rank,duration_ms; and an empty phase cell -------------------
python3 - "$WORK" <<'PY'
import sys
w = sys.argv[1]
with open(f"{w}/min.csv", "w") as f:
    f.write("rank,step,duration_ms\n")
    for s in range(1, 31):
        for r in range(4):
            f.write(f"{r},{s},{100 + s % 3 + (50 if r == 2 else 0)}\n")
with open(f"{w}/ph.csv", "w") as f:
    f.write("step,rank,duration_ms,forward_ms,backward_ms\n")
    for s in range(1, 31):
        for r in range(2):
            f.write(f"{s},{r},100,{'' if s == 5 else 40},50\n")
PY
"$ANALYZE" -o "$WORK/m" "$WORK/min.csv" >/dev/null 2>"$WORK/m.err" ||
    { cat "$WORK/m.err" >&2; fail "step,rank,duration_ms refused"; }
check "$WORK/m" 30 1 30 4
python3 - "$WORK/m/steps.csv" <<'PY' || fail "duration_ms step times"
import csv, sys
at = {}
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 120, len(rows)
for r in sorted(rows, key=lambda r: (int(r["rank"]), int(r["step"]))):
    k, s = int(r["rank"]), int(r["step"])
    d = (100 + s % 3 + (50 if k == 2 else 0)) * 1000000
    assert int(r["start_ns"]) == at.get(k, 0), r      # laid end to end per rank from 0
    assert int(r["end_ns"]) - int(r["start_ns"]) == d, r
    at[k] = int(r["end_ns"])
PY
"$ANALYZE" -o "$WORK/p" "$WORK/ph.csv" >/dev/null 2>"$WORK/p.err" ||
    { cat "$WORK/p.err" >&2; fail "empty phase cell refused"; }
check "$WORK/p" 30 1 30 2
grep -q 'ph.csv:10: 2 rows have an empty phase cell' "$WORK/p.err" ||
    { cat "$WORK/p.err" >&2; fail "empty phase cell not noted"; }
python3 - "$WORK/p/steps.csv" <<'PY' || fail "phase figures"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    known = r["step"] != "5"      # step 5: forward unknown, so no phase split at all
    assert float(r["forward_ms"]) == (40 if known else 0), r
    assert float(r["backward_ms"]) == (50 if known else 0), r
    assert int(r["end_ns"]) - int(r["start_ns"]) == 100000000, r
PY
exit 0
