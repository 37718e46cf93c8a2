#!/bin/sh
# t_spool_damage.sh — issue 16, item 6: a partly read spool is never reported complete.
# A live simulated job's summaries.argus (one zstd frame per window) gets one flipped bit in
# the middle, and is cut mid-record in a second copy. argus-analyze on the damaged copy must
# read the records after the damage (the same last step and within one window of the same
# step count as the intact spool), say what was lost in report.json inputs.lost, and set
# job.complete false; the cut copy too. The intact spool stays complete with nothing lost.
. "$top_srcdir/tests/integration/lib.sh"
ANALYZE="$top_builddir/argus-analyze"
run_sim "dmg-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
SP="$REPORT_DIR/summaries.argus"
[ -f "$SP" ] || fail "no spool summaries.argus"
mkdir "$WORK/in"
python3 - "$SP" "$WORK/in" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
mid = len(data) // 2
flip = bytearray(data)
flip[mid] ^= 0x08
open(sys.argv[2] + '/flip.argus', 'wb').write(flip)
open(sys.argv[2] + '/cut.argus', 'wb').write(data[:len(data) * 3 // 4])
cp = open(sys.argv[2] + '/whole.argus', 'wb').write(data)
PY
for f in whole flip cut; do
    "$ANALYZE" -o "$WORK/$f" "$WORK/in/$f.argus" >"$WORK/$f.out" 2>"$WORK/$f.err" ||
        { cat "$WORK/$f.err" >&2; fail "argus-analyze $f failed"; }
done
python3 - "$WORK" <<'PY' || fail "see above"
import json, sys
w = sys.argv[1]
rep = {f: json.load(open('%s/%s/report.json' % (w, f))) for f in ('whole', 'flip', 'cut')}
ok = True
def check(cond, msg):
    global ok
    if not cond:
        print('FAIL:', msg); ok = False
wh, fl, cu = rep['whole'], rep['flip'], rep['cut']
check(wh['job']['complete'] is True, 'intact spool: complete %r' % wh['job']['complete'])
check(wh['inputs'].get('lost', []) == [], 'intact spool: lost %r' % wh['inputs'].get('lost'))
# the flipped bit: records after it are read, the loss is said, complete is false
check(fl['job']['complete'] is False, 'flipped bit: complete %r' % fl['job']['complete'])
check(fl['inputs']['skipped'] == [], 'flipped bit: skipped %r' % fl['inputs']['skipped'])
lost = fl['inputs'].get('lost', [])
check(len(lost) == 1 and 'flip.argus' in lost[0] and 'offset' in lost[0] and
      'records lost' in lost[0], 'flipped bit: lost %r' % lost)
check(fl['steps']['last'] == wh['steps']['last'],
      'flipped bit: last step %d, intact %d (reading stopped at the damage)' %
      (fl['steps']['last'], wh['steps']['last']))
check(fl['steps']['count'] >= wh['steps']['count'] - 10,
      'flipped bit: %d steps of %d' % (fl['steps']['count'], wh['steps']['count']))
# cut mid-record: what is there is read, the cut is said
check(cu['job']['complete'] is False, 'cut: complete %r' % cu['job']['complete'])
lost = cu['inputs'].get('lost', [])
check(len(lost) == 1 and 'truncated' in lost[0], 'cut: lost %r' % lost)
check(0 < cu['steps']['count'] < wh['steps']['count'], 'cut: %d steps' % cu['steps']['count'])
sys.exit(0 if ok else 1)
PY
grep -q "flip.argus" "$WORK/flip.err" || fail "the damage was not said on stderr"
# report.md says so too, not only report.json
grep -q "## Inputs read in part" "$WORK/flip/report.md" ||
    fail "report.md of the damaged spool does not say it was read in part"
if grep -q "## Inputs read in part" "$WORK/whole/report.md"; then
    fail "report.md of the intact spool says it was read in part"
fi
