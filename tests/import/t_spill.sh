#!/bin/sh
# t_spill.sh — bounded memory end to end: a generated 2-rank Kineto trace (bench/import_gen,
# all CPU events before all GPU events, ~4 MB per rank, rank 1 slow) analysed by
# argus-analyze with a 256 KiB table limit — far below the trace, so its events are
# spilled to a temporary file and summarised step by step from there — gives the same
# report.json, report.md, steps.csv and metrics.prom as with the default limit (held in
# memory), and leaves no spill file behind. A limit too small for the kernel names is
# refused with one line. Bad --max-mem values (or below 32K) are usage errors.
. "$(dirname "$0")/lib.sh"
GEN="$top_builddir/bench/import_gen"
[ -x "$GEN" ] || fail "no $GEN (built by make check)"
mkdir -p "$WORK/in" "$WORK/tmp"
"$GEN" -r 0 -s 24 -k 300 >"$WORK/in/rank-0.json"
"$GEN" -r 1 -s 24 -k 300 -S 1 | gzip -1 >"$WORK/in/rank-1.json.gz"
export TMPDIR="$WORK/tmp"
ARGUS_LOG=info "$ANALYZE" -o "$WORK/mem" "$WORK/in" >/dev/null 2>"$WORK/mem.err" ||
    { cat "$WORK/mem.err" >&2; fail "import with the default limit"; }
ARGUS_LOG=info "$ANALYZE" --max-mem 256K -o "$WORK/spill" "$WORK/in" >/dev/null \
    2>"$WORK/spill.err" || { cat "$WORK/spill.err" >&2; fail "import with a 256 KiB limit"; }
grep -q "rank 0, 24 steps .* 0 spilled runs" "$WORK/mem.err" ||
    { cat "$WORK/mem.err" >&2; fail "the default limit spilled"; }
for r in 0 1; do
    n=$(sed -n "s/.*rank $r, 24 steps .* \([0-9]*\) spilled runs.*/\1/p" "$WORK/spill.err")
    [ "${n:-0}" -ge 4 ] || { cat "$WORK/spill.err" >&2; fail "rank $r: $n spilled runs"; }
done
for f in report.json report.md steps.csv metrics.prom; do
    sed "s|$WORK/spill|OUT|g" "$WORK/spill/$f" >"$WORK/a"
    sed "s|$WORK/mem|OUT|g" "$WORK/mem/$f" >"$WORK/b"
    cmp -s "$WORK/a" "$WORK/b" || { diff "$WORK/b" "$WORK/a" | head >&2; fail "$f differs"; }
done
[ "$(wc -l <"$WORK/mem/steps.csv")" = 49 ] || fail "steps.csv: want 48 rank-steps"
grep -q '"source_ranks":\[1\]' "$WORK/mem/report.json" || grep -q 'rank 1' "$WORK/mem/report.md" ||
    fail "slow rank 1 not reported"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "spill files left in TMPDIR: $(ls "$WORK/tmp")"
# too small for the kernel names (the DLRM traces' are long): one line, the file skipped
need_data dlrm-8rank-v100
W0=$(ls "$DATA"/dlrm-8rank-v100/worker0_*)
rc=0; "$ANALYZE" --max-mem 32K -o "$WORK/tiny" "$W0" >/dev/null 2>"$WORK/tiny.err" || rc=$?
[ $rc = 1 ] || fail "a 32 KiB limit on DLRM: exit $rc, want 1"
grep -q "worker0_.*: trace too large: its steps and kernel names alone pass" \
    "$WORK/tiny.err" || { cat "$WORK/tiny.err" >&2; fail "no 'trace too large' line"; }
for bad in 0 x 12Q -5 31K; do
    rc=0; "$ANALYZE" --max-mem "$bad" "$WORK/in" >/dev/null 2>&1 || rc=$?
    [ $rc = 2 ] || fail "--max-mem $bad: exit $rc, want 2"
done
