#!/bin/sh
# Without argus-run (ARGUS_MODE unset) libargus is inert: the job runs and nothing is
# written; with ARGUS_MODE=off under argus-run likewise. ARGUS_MODE set to anything else
# (a typo, or the retired "full") keeps Argus off too, and rank 0 says so in one line.
. "$(dirname "$0")/lib.sh"
cd "$WORK"
unset ARGUS_MODE ARGUS_OUTDIR || true
timeout 120 "$MPIRUN" -np 4 "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 >"$WORK/stdout" 2>"$WORK/stderr" \
    || { cat "$WORK/stderr" >&2; fail "plain job failed"; }
ls "$WORK" | grep -q '^argus-' && fail "inert libargus wrote output"
[ -s "$WORK/stderr" ] && { cat "$WORK/stderr" >&2; fail "inert libargus printed something"; }
timeout 120 "$ARGUS_RUN" --mode off --outdir "$WORK/o" -- "$MPIRUN" -np 4 "$SIM" --tp 1 --pp 2 \
    --dp 2 --steps 12 >/dev/null 2>"$WORK/stderr" || fail "mode off job failed"
[ -e "$WORK/o" ] && fail "mode off wrote output"
ARGUS_MODE=full timeout 120 "$MPIRUN" -np 4 "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 \
    >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "ARGUS_MODE=full job failed"; }
ls "$WORK" | grep -q '^argus-' && fail "ARGUS_MODE=full wrote output"
n=$(grep -c 'ARGUS_MODE=full: not one of off, on; Argus is off' "$WORK/stderr")
[ "$n" = 1 ] || { cat "$WORK/stderr" >&2; fail "ARGUS_MODE=full: $n lines saying so, want 1"; }
[ "$(wc -l <"$WORK/stderr")" = 1 ] || { cat "$WORK/stderr" >&2; fail "more than one line"; }
# Any other word likewise (issue 16, item 10: a typo used to turn Argus off silently).
ARGUS_MODE=garbage timeout 120 "$MPIRUN" -np 4 "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 \
    </dev/null >/dev/null 2>"$WORK/stderr" || fail "ARGUS_MODE=garbage job failed"
ls "$WORK" | grep -q '^argus-' && fail "ARGUS_MODE=garbage wrote output"
grep -qx 'argus: ARGUS_MODE=garbage: not one of off, on; Argus is off' "$WORK/stderr" &&
    [ "$(wc -l <"$WORK/stderr")" = 1 ] ||
    { cat "$WORK/stderr" >&2; fail "ARGUS_MODE=garbage: not one line saying Argus is off"; }
exit 0
