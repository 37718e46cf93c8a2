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
