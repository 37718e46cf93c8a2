#!/bin/sh
# Programs that never call MPI_Init (PyTorch with NCCL under mpirun): Argus initialises
# MPI on its own thread, the summaries reach rank 0 and the report covers every rank; a
# forked child that exits does not finalize MPI; a program that calls MPI_Init late gets
# a working MPI without a second initialisation; an ordinary MPI program that asks for
# MPI_THREAD_SINGLE keeps its own MPI and right results, fully traced.
. "$(dirname "$0")/lib.sh"
APP="$top_builddir/tests/reduce/selfinit_app"
export ARGUS_MPI_SELF_INIT_MS=0 ARGUS_LOG=info
for mode in none late single; do
    out="$WORK/out-$mode"
    start=$(date +%s)
    ARGUS_JOBID="selfinit-$mode-$$" timeout 120 "$ARGUS_RUN" --outdir "$out" -- \
        "$MPIRUN" -np 4 "$APP" $mode 100 >"$WORK/stdout-$mode" 2>"$WORK/stderr-$mode" \
        || { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "$mode: job failed"; }
    took=$(( $(date +%s) - start ))
    n=$(grep -c "done 100 steps" "$WORK/stdout-$mode" || true)
    [ "$n" = 4 ] || { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "$mode: $n of 4 ranks finished"; }
    if [ $mode = none ]; then # rank 1's exec'd child (same rank variables) stood down
        grep -q "rank 1: child done" "$WORK/stdout-$mode" || { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "the child did not finish"; }
        n=$(grep -c "another process of this rank owns MPI" "$WORK/stderr-$mode" || true)
        [ "$n" = 1 ] || { cat "$WORK/stderr-$mode" >&2; fail "the child stood down $n times, want 1"; }
    fi
    if [ $mode = late ]; then
        n=$(grep -c "late MPI_Init ok" "$WORK/stdout-$mode" || true)
        [ "$n" = 4 ] || { cat "$WORK/stdout-$mode" >&2; fail "late MPI_Init on $n of 4 ranks"; }
    fi
    want=4; [ $mode = single ] && want=0
    n=$(grep -c "Argus initialised it on its own thread" "$WORK/stderr-$mode" || true)
    [ "$n" = $want ] || { cat "$WORK/stderr-$mode" >&2; fail "$mode: self-init announced $n times, want $want"; }
    if grep -qi "finalize\|abort\|segmentation\|not.*initialized" "$WORK/stderr-$mode"; then
        cat "$WORK/stderr-$mode" >&2; fail "$mode: MPI complained"
    fi
    python3 - "$out/argus-selfinit-$mode-$$" $mode <<'PY' || fail "$mode: report wrong"
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
j = r["job"]
assert j["ranks"] == 4 and j["complete"] is True and j["missing_ranks"] == [], j
st = r["steps"]
# Steps marked before MPI was up are not traced (how many depends on the machine's load);
# every step after is.
assert st["last"] == 99 and st["count"] == st["last"] - st["first"] + 1, st
assert st["count"] == 100 if sys.argv[2] == "single" else st["count"] >= 5, st
assert len(r["ranks"]) == 4, r["ranks"]
slow = [a for a in r["anomalies"] if 2 in a["ranks"]]
print("steps", st["count"], "anomalies", [(a["kind"], a["ranks"]) for a in r["anomalies"]])
PY
    echo "$mode: ok in ${took}s"
done
# A lone process (argus-run without any launcher): MPI starts as a singleton, a world of
# one, and the program gets its own report; a child it forks stays out.
out="$WORK/out-lone"
ARGUS_JOBID="selfinit-lone-$$" timeout 120 "$ARGUS_RUN" --outdir "$out" -- "$APP" none 100 \
    >"$WORK/stdout-lone" 2>"$WORK/stderr-lone" \
    || { cat "$WORK/stdout-lone" "$WORK/stderr-lone" >&2; fail "lone: program failed"; }
n=$(grep -c "Argus initialised it on its own thread" "$WORK/stderr-lone" || true)
[ "$n" = 1 ] || { cat "$WORK/stderr-lone" >&2; fail "lone: self-init announced $n times, want 1"; }
python3 - "$out/argus-selfinit-lone-$$" <<'PY' || fail "lone: report wrong"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["job"]["ranks"] == 1 and r["job"]["complete"] is True, r["job"]
st = r["steps"]
assert st["last"] == 99 and st["count"] == st["last"] - st["first"] + 1 >= 5, st
print("lone: steps", r["steps"]["count"])
PY
