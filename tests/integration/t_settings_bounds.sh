#!/bin/sh
# Every numeric ARGUS_* setting works end to end at both ends of its documented range
# (issue 16, item 9: ARGUS_WINDOW >= 5000 used to drop every summary): a small real
# mpirun of the simulator under argus-run at the minimum and at the maximum writes a
# complete report of every step, with no "dropped", "out of memory" or fallback line.
# Just outside either end is refused by argus-run, naming the value and the range, before
# anything starts (t_settings_refused.sh: what the ranks do with such a value). The rows
# come from the table itself (common/config.h), so a new setting is tested too.
. "$(dirname "$0")/lib.sh"
python3 - "$top_srcdir/common/config.h" >"$WORK/rows" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r'X\((ARGUS_\w+),\s*\w+,\s*(INT|DOUBLE),\s*"[^"]*",\s*([-\d.e+]+),\s*([-\d.e+]+),',
                     text):
    name, typ, lo, hi = m.groups()
    if typ == "INT":
        lo, hi = int(float(lo)), int(float(hi))
        print(name, typ, lo, hi, lo - 1, hi + 1)
    else:
        lo, hi = float(lo), float(hi)
        print(name, typ, "%g" % lo, "%g" % hi, "%g" % (lo - 0.01), "%g" % (hi + 0.01))
PY
[ "$(wc -l <"$WORK/rows")" -ge 17 ] || { cat "$WORK/rows" >&2; fail "too few numeric rows found"; }
STEPS=12
n=0
while read -r name typ lo hi below above; do
    for v in "$lo" "$hi"; do
        n=$((n + 1))
        id="b$n"
        env "$name=$v" ARGUS_JOBID=$id timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
            "$MPIRUN" -np 2 "$SIM" --dp 2 --steps $STEPS --microbatches 2 --layers 1 \
            </dev/null >"$WORK/$id.out" 2>"$WORK/$id.err" ||
            { cat "$WORK/$id.err" >&2; fail "$name=$v: the job failed"; }
        if grep -E 'dropped|out of memory|buffer full|using the default|no report|not written' \
            "$WORK/$id.err" >&2; then fail "$name=$v: see the line above"; fi
        python3 - "$WORK/out/argus-$id" "$name=$v" $STEPS <<'PY' || fail "$name=$v: report wrong"
import json, sys
d, what, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(d + "/report.json"))
assert r["steps"]["count"] == steps, (what, r["steps"])
# the shortest deadlines may mark a late window missing on a loaded machine: that is
# what they ask for; every other value gives a complete report
if not what.startswith(("ARGUS_DEADLINE_MS=", "ARGUS_FINALIZE_MS=")):
    assert r["job"]["complete"] is True, (what, r["job"])
x = json.load(open(d + "/reduce.json"))
assert x["summaries_dropped_rank0"] == 0, (what, x)
PY
    done
    for v in "$below" "$above"; do
        if env "$name=$v" "$ARGUS_RUN" --outdir "$WORK/out" -- touch "$WORK/ran" \
            2>"$WORK/e"; then fail "$name=$v accepted"; fi
        [ -e "$WORK/ran" ] && fail "$name=$v: the command ran"
        grep -q "^argus-run: $name=$v: not an* [a-z]* in \[$lo, $hi\]$" "$WORK/e" ||
            { cat "$WORK/e" >&2; fail "$name=$v: refusal does not name the value and range"; }
    done
done <"$WORK/rows"
echo "$n runs"
exit 0
