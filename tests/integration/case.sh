# case.sh — sourced by t_case_*.sh (the case studies, docs/ALGORITHMS.md, "Case studies") with
# CASE_ARGS (simulator arguments after the default 16-rank job), EXPECT_KIND and
# EXPECT_RANKS ("" for rank-less kinds; "none" for a clean run): one run under argus-run;
# the report must hold exactly one anomaly, of that kind, naming exactly those sources,
# never comm_degradation unless expected; score.py must accept it against the simulator's
# truth; the report files must pass check_report.py (strict Prometheus text, SVG as XML,
# embedded pictures exist, report.json fields) and `promtool check metrics` when installed.
# CASE_CHECK, when set, is extra Python run on the parsed report (variable r). With
# ARGUS_CONDENSE=0 (t_case_*_condensed.sh) reduce.json must show that the tree condensed,
# and the spool analysed offline must give the same diagnosis.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2086
run_sim "case-$$" $CASE_ARGS || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
d=$REPORT_DIR
[ -f "$d/report.json" ] || fail "no report.json in $d"
EXPECT_KIND=${EXPECT_KIND:-none} EXPECT_RANKS=${EXPECT_RANKS:-} CASE_CHECK=${CASE_CHECK:-} \
python3 - "$d/report.json" <<'PY' || fail "case diagnosis wrong ($CASE_ARGS)"
import json, os, sys
r = json.load(open(sys.argv[1]))
kind, want = os.environ["EXPECT_KIND"], os.environ["EXPECT_RANKS"]
an = r["anomalies"]
if kind == "none":
    assert an == [], an
else:
    assert len(an) == 1, json.dumps(an, indent=1)
    a = an[0]
    assert a["kind"] == kind, a
    ranks = [int(x) for x in want.split(",")] if want else []
    assert a["ranks"] == ranks, (a["ranks"], ranks)
    assert not set(a["victims"]) & set(a["ranks"]), a
    print("case ok:", a["kind"], a["ranks"], a["steps"], "detected at", a["detected_at_step"])
    print("evidence:", a["evidence"])
exec(os.environ["CASE_CHECK"] or "pass")
PY
if [ "${ARGUS_CONDENSE:-}" = 0 ]; then # t_case_*_condensed.sh: the tree really condensed
    python3 - "$d/reduce.json" <<'PY' || fail "the tree did not condense"
import json, sys
c = json.load(open(sys.argv[1]))["condense"]
assert c["on"] and c["thin"] > 0 and c["exemplars"] > 0, c
assert c["exemplars"] + c["thin"] == c["rows"], c  # every (rank, step) once
# 16 ranks, fan-in 4: rank 0 pulls from its condensing children, and they answer
assert c["pull"]["asks"] > 0 and c["pull"]["answers"] > 0, c
print("condensed: %d cells in full, %d as rows only" % (c["exemplars"], c["thin"]))
PY
    # the spool keeps the thin cells as rows records: analysed offline, it gives the
    # same diagnosis as the live rank 0
    "$top_builddir/argus-analyze" -o "$WORK/offline" "$d/summaries.argus" >"$WORK/offline.log" \
        2>&1 || { cat "$WORK/offline.log" >&2; fail "argus-analyze cannot read the spool"; }
    python3 - "$d/report.json" "$WORK/offline/report.json" <<'PY' || fail "offline != live"
import json, sys
live, off = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: sorted((a["kind"], tuple(a["ranks"])) for a in r["anomalies"])
assert key(off) == key(live), (key(off), key(live))
assert off["steps"]["count"] == live["steps"]["count"] and off["job"]["ranks"] == 16, off
print("offline from the spool: same diagnosis")
PY
fi
$SCORE "$d/report.json" "$WORK/truth.json" || fail "score.py rejects the report"
python3 "$top_srcdir/tests/report/check_report.py" "$d" \
    "$([ "$EXPECT_KIND" = none ] && echo clean || echo case)" || fail "report files invalid"
if command -v promtool >/dev/null 2>&1; then
    out=$(promtool check metrics <"$d/metrics.prom" 2>&1) || fail "promtool: $out"
    [ -z "$out" ] || fail "promtool lint: $out"
fi
