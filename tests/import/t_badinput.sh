#!/bin/sh
# t_badinput.sh — bad inputs next to good ones: truncated JSON, not JSON, wrong types, an
# empty rank, a duplicate rank, damaged gzip, an unknown format. Each gets exactly one
# error line naming the file (with a byte offset where one applies), the good ranks are
# still analysed, report.json lists the skipped files, report.md names them with the reason
# in an "Inputs skipped" section, and the exit status is non-zero only
# when nothing could be analysed.
. "$(dirname "$0")/lib.sh"
need_data dlrm-8rank-v100
B="$WORK/bad"; mkdir -p "$B"
W0=$(ls "$DATA"/dlrm-8rank-v100/worker0_*)
gzip -dc "$W0" | head -c 300000 >"$B/rank-20.json"                  # truncated
printf 'hello, this is not json\n' >"$B/rank-21.json"                 # unknown format
printf '{"traceEvents": [1, 2' | cat - /dev/null >"$B/rank-22.json"   # truncated early
printf '{"traceEvents": 5}' >"$B/rank-23.json"                         # wrong type
printf '{"distributedInfo": {"rank": 24}, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "x", "dur": 1}]}' >"$B/rank-24.json"
printf '{"traceEvents": []}' >"$B/rank-25.json"                        # empty rank
cp "$W0" "$B/dup.json.gz"                                              # rank 0 again
head -c 20000 "$W0" >"$B/rank-26.json.gz"                              # damaged gzip
printf '{"traceEvents": [}' >"$B/rank-27.json"                         # not JSON
"$ANALYZE" -o "$WORK/out" "$DATA/dlrm-8rank-v100" "$B" >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stderr" >&2; fail "good ranks not analysed"; }
for f in rank-20.json rank-21.json rank-22.json rank-23.json rank-24.json rank-25.json \
         dup.json.gz rank-26.json.gz rank-27.json; do
    n=$(grep -c "^argus-analyze: $B/$f: .*; skipped$" "$WORK/stderr" || true)
    [ "$n" = 1 ] || { cat "$WORK/stderr" >&2; fail "$f: $n error lines, want 1"; }
done
grep -q "rank-20.json: truncated JSON.* at byte 300000" "$WORK/stderr" || fail "no offset"
grep -q "rank-27.json: not valid JSON at byte" "$WORK/stderr" || fail "no offset for bad JSON"
grep -q "dup.json.gz: duplicate rank 0" "$WORK/stderr" || fail "duplicate rank not named"
grep -q "rank-25.json: empty rank" "$WORK/stderr" || fail "empty rank not named"
[ "$(wc -l <"$WORK/stderr")" = 9 ] || { cat "$WORK/stderr" >&2; fail "extra stderr lines"; }
python3 - "$WORK/out/report.json" <<'PY' || fail "report does not list the skipped inputs"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["ranks"] == 8 and r["steps"]["first"] == 10, r["job"]
assert r["job"]["complete"] is False, r["job"]
i = r["inputs"]
assert i["files"] == 17 and i["analysed"] == 8 and len(i["skipped"]) == 9, i
PY
# report.md: an "Inputs skipped" section naming each skipped file and why, before the
# step-time table
M="$WORK/out/report.md"
grep -q '^## Inputs skipped$' "$M" || fail "report.md has no 'Inputs skipped' section"
awk '/^## Inputs skipped$/ {s=NR} /^## Step time$/ {t=NR} END {exit !(s && t && s < t)}' "$M" ||
    fail "report.md: 'Inputs skipped' not before 'Step time'"
grep -q '^9 of 17 input files could not be used' "$M" || fail "report.md: no count of skipped"
for f in rank-20.json rank-21.json rank-22.json rank-23.json rank-24.json rank-25.json \
         dup.json.gz rank-26.json.gz rank-27.json; do
    grep -q "^- \`$B/$f\` — ." "$M" || { cat "$M" >&2; fail "report.md does not list $f"; }
done
grep -q "^- \`$B/dup.json.gz\` — duplicate rank 0" "$M" || fail "report.md: no reason for dup"
grep -q "^- \`$B/rank-25.json\` — empty rank" "$M" || fail "report.md: no reason for rank-25"
# nothing analysable (alone, dup.json.gz is a good rank 0): exit 1 and one line saying so
rm "$B/dup.json.gz"
rc=0; "$ANALYZE" -o "$WORK/none" "$B" >/dev/null 2>"$WORK/stderr" || rc=$?
[ $rc = 1 ] || fail "exit $rc with nothing analysable, want 1"
grep -q "nothing could be analysed" "$WORK/stderr" || fail "no 'nothing could be analysed'"
# usage
rc=0; "$ANALYZE" >/dev/null 2>&1 || rc=$?; [ $rc = 2 ] || fail "no PATH: exit $rc, want 2"
"$ANALYZE" --help | grep -q "usage: argus-analyze" || fail "--help"
"$ANALYZE" --version | grep -q "argus-analyze" || fail "--version"
