#!/bin/sh
# t_traces.sh — argus-analyze on the real traces of tests/data: the 8-rank DLRM
# set imports with ranks 0-7 and step 10 and its late-arriver pattern shows in the report
# (the latest-starting rank waits least in NCCL, all ranks end together); every HTA
# edge-case file either imports (exit 0, report.json) or is rejected with one line naming
# it (exit 1) — never a crash.
. "$(dirname "$0")/lib.sh"
HTA_CASES="amd_trace cpu_only df_index_resolver distributed_info_unavailable large_integer_trace
nccl_parser_config negative_queue_length_values_check rank_non_gpu rank_unavailable trace_filter"
need_data dlrm-8rank-v100
for c in $HTA_CASES; do need_data "hta-edge-cases/$c"; done
[ "$(ls "$DATA"/dlrm-8rank-v100 | wc -l)" = 8 ] || fail "$DATA/dlrm-8rank-v100: want 8 ranks"
"$ANALYZE" -o "$WORK/dlrm" "$DATA/dlrm-8rank-v100" >"$WORK/out" 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "DLRM set not analysed"; }
grep -q "report written" "$WORK/out" || fail "no summary printed"
python3 - "$WORK/dlrm" <<'PY' || fail "DLRM report wrong"
import csv, json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert r["job"]["source"] == "kineto" and r["job"]["ranks"] == 8, r["job"]
assert r["job"]["complete"] is True, r["job"]
assert (r["steps"]["count"], r["steps"]["first"], r["steps"]["last"]) == (1, 10, 10), r["steps"]
assert r["inputs"] == {"files": 8, "analysed": 8, "skipped": [], "lost": [], "notes": []}, \
    r["inputs"]
# 245-315 kernels + 16 memcpy per rank
assert r["collection"]["kernels_seen"] == 2244, r["collection"]  # + 12 memsets
rows = {int(x["rank"]): x for x in csv.DictReader(open(d + "/steps.csv"))}
assert sorted(rows) == list(range(8)) and all(x["step"] == "10" for x in rows.values())
start = {k: int(v["start_ns"]) for k, v in rows.items()}
end = {k: int(v["end_ns"]) for k, v in rows.items()}
comm = {k: float(v["comm_ms"]) for k, v in rows.items()}
late = max(start, key=start.get)
assert late == 7 and (start[7] - min(start.values())) > 7e6, start   # 7.5 ms apart
assert comm[late] == min(comm.values()), comm                           # waits least
assert min(comm, key=comm.get) == 7 and max(comm, key=comm.get) == 1, comm
assert max(end.values()) - min(end.values()) < 1e6, end                 # end together
PY
# every HTA edge case: imports or is rejected clearly
for f in "$DATA"/hta-edge-cases/*/*; do
    rc=0
    "$ANALYZE" -o "$WORK/hta" "$f" >"$WORK/out" 2>"$WORK/err" || rc=$?
    case $rc in
    0) [ -s "$WORK/hta/report.json" ] || fail "$f: exit 0 but no report" ;;
    1) [ "$(grep -c "^argus-analyze: $f: .*; skipped$" "$WORK/err")" = 1 ] ||
           { cat "$WORK/err" >&2; fail "$f: rejected without one clear line"; } ;;
    *) cat "$WORK/err" >&2; fail "$f: exit $rc (crash?)" ;;
    esac
    rm -rf "$WORK/hta"
done
# the expected verdicts
for f in cpu_only large_integer_trace nccl_parser_config negative_queue_length_values_check \
         rank_non_gpu df_index_resolver trace_filter; do
    "$ANALYZE" -o "$WORK/ok" "$DATA/hta-edge-cases/$f" >/dev/null 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$f should import"; }
done
for f in rank_unavailable distributed_info_unavailable amd_trace; do
    ! "$ANALYZE" -o "$WORK/no" "$DATA/hta-edge-cases/$f" >/dev/null 2>"$WORK/err" ||
        fail "$f has no rank and should be rejected"
    grep -q "no rank" "$WORK/err" || fail "$f: message does not say why"
done
# the two sampled ranks of one job together; the AMD trace with a rank in its name imports
"$ANALYZE" -o "$WORK/tf" "$DATA/hta-edge-cases/trace_filter" >/dev/null 2>&1 || fail "trace_filter"
python3 -c "
import json; r = json.load(open('$WORK/tf/report.json'))
assert r['job']['ranks'] == 2 and r['steps']['first'] == 551 and r['steps']['last'] == 552, r"
cp "$DATA/hta-edge-cases/amd_trace/"*.gz "$WORK/rank-3.json.gz"
"$ANALYZE" -o "$WORK/amd" "$WORK/rank-3.json.gz" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "AMD trace named rank-3 not imported"; }
python3 -c "
import json; r = json.load(open('$WORK/amd/report.json'))
assert r['job']['ranks'] == 4 and r['steps']['first'] == 1, r['steps']"
