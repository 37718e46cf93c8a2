#!/bin/sh
# A numeric ARGUS_* setting just outside its range that reaches the ranks without
# argus-run (a plain preload, a site's plugstack.conf) never stops the job or Argus: rank 0
# names every bad value in one line, uses the defaults, and the report is still complete.
# (argus-run refuses the same values before anything starts: t_settings_bounds.sh.)
# The rows come from the table (common/config.h); four bad values per job.
. "$(dirname "$0")/lib.sh"
python3 - "$top_srcdir/common/config.h" >"$WORK/bad" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
out = []
for m in re.finditer(r'X\((ARGUS_\w+),\s*\w+,\s*(INT|DOUBLE),\s*"[^"]*",\s*([-\d.e+]+),\s*([-\d.e+]+),',
                     text):
    name, typ, lo, hi = m.groups()
    if typ == "INT":
        out += ["%s=%d" % (name, int(float(lo)) - 1), "%s=%d" % (name, int(float(hi)) + 1)]
    else:
        out += ["%s=%g" % (name, float(lo) - 0.01), "%s=%g" % (name, float(hi) + 0.01)]
# one value per variable per job (a job sees each variable once): lows, then highs
lows, highs = out[0::2], out[1::2]
for group in (lows, highs):
    for i in range(0, len(group), 4):
        print(" ".join(group[i:i + 4]))
PY
[ "$(wc -w <"$WORK/bad")" -ge 34 ] || { cat "$WORK/bad" >&2; fail "too few numeric rows"; }
k=0
while read -r settings; do
    k=$((k + 1))
    # shellcheck disable=SC2086
    env $settings ARGUS_MODE=on ARGUS_OUTDIR="$WORK/out" ARGUS_JOBID=r$k timeout 120 \
        "$MPIRUN" -np 2 "$SIM" --dp 2 --steps 12 --microbatches 2 --layers 1 \
        </dev/null >"$WORK/r$k.out" 2>"$WORK/r$k.err" ||
        { cat "$WORK/r$k.err" >&2; fail "$settings: the job failed"; }
    [ "$(grep -c 'using the default' "$WORK/r$k.err")" = 1 ] ||
        { cat "$WORK/r$k.err" >&2; fail "$settings: not one fallback line"; }
    for s in $settings; do
        grep 'using the default' "$WORK/r$k.err" | grep -qF "$s: not a" ||
            { cat "$WORK/r$k.err" >&2; fail "$s not named"; }
    done
    python3 - "$WORK/out/argus-r$k/report.json" "$settings" <<'PY' || fail "$settings: report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["steps"]["count"] == 12 and r["job"]["complete"] is True, (sys.argv[2], r["job"])
PY
done <"$WORK/bad"
exit 0
