#!/bin/sh
# An output directory that cannot be created: one clear line, Argus off, the job succeeds.
. "$(dirname "$0")/lib.sh"
mkdir "$WORK/ro"; : > "$WORK/ro/file"
ARGUS_JOBID=unwritable timeout 120 "$ARGUS_RUN" --outdir "$WORK/ro/file/sub" -- "$MPIRUN" -np 4 \
    "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 >"$WORK/stdout" 2>"$WORK/stderr" \
    || { cat "$WORK/stderr" >&2; fail "the job must go on when the output dir is unusable"; }
n=$(grep -c '^argus: ' "$WORK/stderr" || true)
[ "$n" = 1 ] || { cat "$WORK/stderr" >&2; fail "want exactly one argus line, got $n"; }
grep -q "ro/file/sub" "$WORK/stderr" || fail "the message does not name the directory"
# a symlink in place of the job directory is not adopted: a fresh argus-linked.1 is made
mkdir -p "$WORK/o2" "$WORK/elsewhere"; ln -s "$WORK/elsewhere" "$WORK/o2/argus-linked"
ARGUS_JOBID=linked timeout 120 "$ARGUS_RUN" --outdir "$WORK/o2" -- "$MPIRUN" -np 4 \
    "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 >/dev/null 2>"$WORK/stderr" || fail "job failed"
[ -z "$(ls "$WORK/elsewhere")" ] || fail "Argus wrote through a symlink"
[ -s "$WORK/o2/argus-linked.1/report.json" ] ||
    { cat "$WORK/stderr" >&2; fail "no report in the fresh $WORK/o2/argus-linked.1"; }
[ -L "$WORK/o2/argus-linked" ] || fail "the planted symlink was touched"

# argus-analyze on a job's spool without -o never writes into that job directory (issue 16,
# item 5): its report files stay byte-identical and a fresh <jobdir>.analysis is made
# beside it, then <jobdir>.analysis.1; -o DIR still writes into DIR.
j="$WORK/o2/argus-linked.1"
[ -s "$j/summaries.argus" ] || fail "no spool in $j"
: >> "$j/anomalies.jsonl" # present even for a clean run, so that an append would show
snap() { for f in report.json report.md metrics.prom steps.csv anomalies.jsonl; do
    printf '%s ' "$f"; cat "$j/$f" | md5sum; done; ls -A "$j" | sort | md5sum; }
before=$(snap)
AN="$(cd "$top_builddir" && pwd)/argus-analyze"
# from the base, as a user would: the old default ./argus-<jobid> was the job directory
( cd "$WORK/o2" && "$AN" argus-linked.1/summaries.argus ) \
    >"$WORK/an.out" 2>"$WORK/an.err" || { cat "$WORK/an.err" >&2; fail "argus-analyze failed"; }
[ "$(snap)" = "$before" ] || fail "argus-analyze without -o changed the job directory $j"
[ -s "$j.analysis/report.json" ] || { cat "$WORK/an.out" "$WORK/an.err" >&2;
    fail "no report in $j.analysis"; }
grep -q "report written to .*argus-linked.1.analysis/report.json" "$WORK/an.out" ||
    { cat "$WORK/an.out" >&2; fail "argus-analyze does not say where it wrote"; }
"$AN" "$j/summaries.argus" >"$WORK/an.out" 2>"$WORK/an.err" ||
    { cat "$WORK/an.err" >&2; fail "the second argus-analyze failed"; }
[ "$(snap)" = "$before" ] || fail "the second argus-analyze changed the job directory"
[ -s "$j.analysis.1/report.json" ] || fail "the second analysis did not get $j.analysis.1"
"$AN" -o "$WORK/mine" "$j/summaries.argus" >/dev/null 2>&1 ||
    fail "argus-analyze -o failed"
[ -s "$WORK/mine/report.json" ] || fail "-o DIR: no report in DIR"
