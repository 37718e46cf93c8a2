#!/bin/sh
# The preload shim (reduce/preload_shim.c, issue 16 item 15): under argus-run the rank
# has libargus.so (and MPI, CUPTI) loaded, but a process the rank starts (sh, cat) maps
# only the small shim; a rank's child that starts MPI itself (the program under a
# wrapper script) still gets Argus and a complete report; Argus off, the shim only
# passes MPI through; a shim without its libargus.so says so once and the command runs.
. "$(dirname "$0")/lib.sh"
APP="$top_builddir/tests/reduce/selfinit_app"
HEAVY='libargus\.so|libmpi|libcupti'

# 1. Rank (sh, pid with the launcher's rank) versus its children.
mkdir -p "$WORK/maps"
ARGUS_JOBID="pre-maps-$$" timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 2 sh -c 'd=$1; r=$OMPI_COMM_WORLD_RANK
        cat /proc/$$/maps >"$d/rank.$r"
        sh -c "cat /proc/self/maps" >"$d/child.$r"
        sh -c "exec cat /proc/self/maps" >"$d/exec.$r"' sh "$WORK/maps" \
    >"$WORK/stdout" 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "maps job failed"; }
for r in 0 1; do
    grep -q 'libargus_preload\.so' "$WORK/maps/rank.$r" || fail "rank $r: shim not preloaded"
    grep -q 'libargus\.so' "$WORK/maps/rank.$r" || fail "rank $r: libargus.so not loaded"
    grep -q 'libmpi' "$WORK/maps/rank.$r" || fail "rank $r: libmpi not loaded"
    for c in child exec; do
        grep -q 'libargus_preload\.so' "$WORK/maps/$c.$r" || fail "rank $r $c: no shim"
        if grep -E "$HEAVY" "$WORK/maps/$c.$r" >&2; then
            fail "rank $r: its $c process loaded the heavy libraries above"
        fi
    done
done
[ -s "$WORK/stderr" ] && { cat "$WORK/stderr" >&2; fail "the maps job printed something"; }

# 2. The MPI program is a child of the rank (sh -c 'app; exit'): it starts MPI itself, so
# the shim loads libargus.so then; every rank is in the report.
ARGUS_JOBID="pre-wrap-$$" timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 2 sh -c '"$1" single 30; exit $?' sh "$APP" \
    >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "wrapped job failed"; }
[ "$(grep -c "done 30 steps" "$WORK/stdout")" = 2 ] ||
    { cat "$WORK/stdout" >&2; fail "ranks did not finish"; }
python3 - "$WORK/out/argus-pre-wrap-$$/report.json" <<'PY' || fail "wrapped job: report wrong"
import json, sys
r = json.load(open(sys.argv[1]))
j = r["job"]
assert j["ranks"] == 2 and j["complete"] is True and j["missing_ranks"] == [], j
assert r["steps"]["count"] == 30, r["steps"]
PY

# 3. Argus off: the shim passes MPI through; nothing is written, nothing printed.
(cd "$WORK" && ARGUS_MODE=off LD_PRELOAD="$top_builddir/.libs/libargus_preload.so" \
    timeout 120 "$MPIRUN" -np 2 "$APP" single 5 >"$WORK/stdout" 2>"$WORK/stderr") ||
    { cat "$WORK/stderr" >&2; fail "Argus off: the job failed"; }
[ "$(grep -c "done 5 steps" "$WORK/stdout")" = 2 ] || fail "Argus off: ranks did not finish"
[ -s "$WORK/stderr" ] && { cat "$WORK/stderr" >&2; fail "Argus off: something was printed"; }

# 4. The shim alone (no libargus.so beside it): one line naming it, and the command runs.
mkdir -p "$WORK/lonely"
cp "$top_builddir/.libs/libargus_preload.so" "$WORK/lonely/"
out=$(ARGUS_MODE=on LD_PRELOAD="$WORK/lonely/libargus_preload.so" sh -c 'echo ran' 2>"$WORK/e") ||
    fail "without libargus.so the command failed"
[ "$out" = ran ] || fail "without libargus.so: '$out'"
[ "$(wc -l <"$WORK/e")" = 1 ] &&
    grep -q "^argus: cannot load $WORK/lonely/libargus.so: " "$WORK/e" ||
    { cat "$WORK/e" >&2; fail "without libargus.so: not one line naming it"; }
exit 0
