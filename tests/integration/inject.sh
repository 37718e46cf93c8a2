# inject.sh — sourced by t_inject_*.sh with SPEC set: one injected fault, one run, and the
# report must name exactly the injected source ranks with an accepted kind and steps.
. "$(dirname "$0")/lib.sh"
run_sim "inject-$$" --inject "$SPEC" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
[ -f "$REPORT_DIR/report.json" ] || fail "no report.json in $REPORT_DIR"
python3 - "$REPORT_DIR/report.json" <<'PY' || fail "report not complete"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["complete"] is True, r["job"]
assert r["job"]["ranks"] == 16 and r["steps"]["count"] == 60, (r["job"], r["steps"])
PY
$SCORE "$REPORT_DIR/report.json" "$WORK/truth.json" || { cat "$WORK/stderr" >&2; fail "diagnosis wrong for $SPEC"; }
# the run's printed summary names the anomaly too
grep -q "argus: anomaly" "$WORK/stderr" || fail "no anomaly line in the printed summary"
