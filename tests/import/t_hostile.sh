#!/bin/sh
# t_hostile.sh — hostile and damaged inputs (issue 16, items 3, 6, 7, 8) next to good
# ones. steps.csv: columns by the header's names (a reordered header gives the same
# verdict), a row with an absurd value or rank is not used and named by its line, a cut
# last line is lost (job.complete false, inputs.lost), a repeated (step, rank) is said.
# Kineto: a rank past distributedInfo.world_size or past --max-ranks costs its file and one
# line, the good ranks are analysed in bounded memory; negative and absurd durations are
# counted (inputs.notes); a UTF-8 byte order mark and a pipe are read; past 64 bad files
# every one is counted.
. "$(dirname "$0")/lib.sh"
need_data dlrm-8rank-v100
/usr/bin/python3 - "$WORK" <<'PY'
import json, os, sys
w = sys.argv[1]
H = "step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms"
rows = []
for st in range(20):
    for rk in range(4):
        s = 1700000000000000000 + st * 200000000
        # rank 2 is slow in backward: 1.5x its step
        rows.append([st, rk, s, s + (150000000 if rk == 2 else 100000000), 30.0,
                     100.0 if rk == 2 else 50.0, 10.0, 5.0, 1.0])
def csv(name, head, order, extra=""):
    with open(os.path.join(w, name), "w") as f:
        f.write(",".join(head[i] for i in order) + "\n")
        for r in rows:
            f.write(",".join(str(r[i]) for i in order) + "\n")
        f.write(extra)
cols = H.split(",")
csv("good.csv", cols, range(9))
# the same data, columns in another order (phases swapped in place, with their names)
csv("reorder.csv", cols, [1, 0, 3, 2, 5, 4, 8, 7, 6])
bad = ("5,1,1700000001000000000,100000000000000000000000,1,1,1,1,1\n"   # end 1e23 ns
       "6,3000000,1700000001200000000,1700000001300000000,1,1,1,1,1\n"  # absurd rank
       "7,1,1700000001400000000,1700000001500000000,30,50,10,5,1\n"     # repeats line 31
       "19,3,1700000003800000000,17000")                                 # cut short
csv("bad.csv", cols, range(9), bad)
def trace(rank, ws=None, bad_durs=False):
    di = {"rank": rank}
    if ws:
        di["world_size"] = ws
    ev = []
    for s in range(6):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                   "ts": 1000 + s * 1000, "dur": 900})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1010 + s * 1000,
                   "dur": 500, "args": {"stream": 7, "device": 0}})
    if bad_durs:
        ev[1]["dur"] = -5
        ev[3]["dur"] = 1e30
    return {"distributedInfo": di, "traceEvents": ev}
k = os.path.join(w, "k")
os.makedirs(k)
for r in range(4):
    json.dump(trace(r, 4, bad_durs=(r == 1)), open(os.path.join(k, "r%d.json" % r), "w"))
json.dump(trace(16777215, 8), open(os.path.join(k, "ws.json"), "w"))     # rank >= world_size
json.dump(trace(2 ** 31 - 1), open(os.path.join(k, "huge.json"), "w"))   # rank 2^31-1
json.dump(trace(4000000), open(os.path.join(k, "big.json"), "w"))        # past --max-ranks
PY
# --- steps.csv by the header's names ------------------------------------------------------
verdict() {
    /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(" ".join("%s:%s:%s" % (a["kind"], a["ranks"], a["phase"]) for a in r["anomalies"]))' "$1"
}
"$ANALYZE" -o "$WORK/g" "$WORK/good.csv" >/dev/null 2>&1 || fail "good.csv not analysed"
"$ANALYZE" -o "$WORK/r" "$WORK/reorder.csv" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "reordered header not analysed"; }
g=$(verdict "$WORK/g/report.json"); r=$(verdict "$WORK/r/report.json")
# rank 2 is slow all along: one persistent_imbalance, its excess in backward
case $g in *persistent_imbalance:\[2\]:backward*) ;; *) fail "good.csv: verdict '$g'";; esac
[ "$g" = "$r" ] || fail "reordered header: verdict '$r', want '$g' (columns read by position?)"
# a header without a required column: one line naming it
printf 'step,rank,start_ns,forward_ms\n1,0,5,1\n' >"$WORK/nocol.csv"
rc=0; "$ANALYZE" -o "$WORK/n" "$WORK/nocol.csv" >/dev/null 2>"$WORK/err" || rc=$?
[ $rc = 1 ] && grep -q 'nocol.csv:1: no column "end_ns" in the header' "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "missing column not named"; }
# --- absurd values, an absurd rank, a repeat, a cut last line -----------------------------
"$ANALYZE" -o "$WORK/b" "$WORK/bad.csv" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "bad.csv: the good rows not analysed"; }
grep -q 'bad.csv:82: 3 of 84 rows not used; the first: end_ns "100000000000000000000000"' \
    "$WORK/err" || { cat "$WORK/err" >&2; fail "absurd end_ns not refused with its line"; }
grep -q 'bad.csv:85: the last line has no end of line' "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "cut last line not said"; }
grep -q 'bad.csv:84: 1 rows repeat the (step, rank) of an earlier row (the first repeats line 31)' \
    "$WORK/err" || { cat "$WORK/err" >&2; fail "repeated (step, rank) not said"; }
/usr/bin/python3 - "$WORK/b/report.json" "$WORK/g/report.json" <<'PY' || fail "bad.csv report"
import json, sys
b, g = (json.load(open(p)) for p in sys.argv[1:3])
assert b["job"]["complete"] is False, b["job"]
assert b["job"]["ranks"] == 4, b["job"]          # the absurd rank cost its row only
i = b["inputs"]
assert i["skipped"] == [] and len(i["lost"]) == 2 and len(i["notes"]) == 1, i
assert g["job"]["complete"] is True and g["inputs"]["lost"] == [], g["inputs"]
# no 2e11x "jitter" from the absurd row: the same verdict as the good file
kinds = lambda r: sorted((a["kind"], a["ranks"]) for a in r["anomalies"])
assert kinds(b) == kinds(g), (kinds(b), kinds(g))
PY
# --- Kineto: absurd ranks cost their file; bounded memory; bad durations counted ------------
( ulimit -v 1048576; "$ANALYZE" -o "$WORK/k-out" "$WORK/k" ) >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "Kineto: the good ranks not analysed under 1 GiB"; }
grep -q "k/ws.json: rank 16777215 is not below distributedInfo.world_size 8; skipped" \
    "$WORK/err" || { cat "$WORK/err" >&2; fail "rank past world_size not named"; }
grep -q "k/huge.json: rank 2147483647 is at or past the bound of 65536 ranks" "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "rank 2^31-1 not named"; }
grep -q "k/big.json: rank 4000000 is at or past the bound" "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "rank 4000000 not named"; }
grep -q "k/r1.json: 2 events with a negative, unreadable or absurd ts or dur (2 of them" \
    "$WORK/err" || { cat "$WORK/err" >&2; fail "bad durations not counted"; }
/usr/bin/python3 - "$WORK/k-out/report.json" <<'PY' || fail "Kineto report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["ranks"] == 4, r["job"]
i = r["inputs"]
assert len(i["skipped"]) == 3 and i["analysed"] == 4, i
assert any("r1.json: 2 events" in n for n in i["notes"]), i
PY
# --max-ranks raises the bound (and is checked)
"$ANALYZE" -o "$WORK/k2" --max-ranks 4000001 "$WORK/k/big.json" >/dev/null 2>&1 ||
    fail "--max-ranks 4000001: rank 4000000 not analysed"
rc=0; "$ANALYZE" --max-ranks 0 "$WORK/k" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "--max-ranks 0: exit $rc, want 2"
# --- a byte order mark, a pipe ---------------------------------------------------------------
W0=$(ls "$DATA"/dlrm-8rank-v100/worker0_*)
{ printf '\357\273\277'; gzip -dc "$W0"; } >"$WORK/bom.json"
"$ANALYZE" -o "$WORK/bom" "$WORK/bom.json" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "a UTF-8 byte order mark is refused"; }
mkfifo "$WORK/fifo"
gzip -dc "$W0" >"$WORK/fifo" &
"$ANALYZE" -o "$WORK/pipe" "$WORK/fifo" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "a trace from a FIFO is refused"; }
wait
mkfifo "$WORK/fifo2"
cat "$WORK/good.csv" >"$WORK/fifo2" &
"$ANALYZE" -o "$WORK/pipe2" "$WORK/fifo2" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "a steps.csv from a FIFO is refused"; }
wait
[ "$(verdict "$WORK/pipe2/report.json")" = "$g" ] || fail "steps.csv from a FIFO: other verdict"
# --- past 64 bad files, every one counted -----------------------------------------------------
mkdir "$WORK/many"
i=0; while [ $i -lt 100 ]; do echo garbage >"$WORK/many/bad$i.txt"; i=$((i + 1)); done
"$ANALYZE" -o "$WORK/m" "$WORK/good.csv" "$WORK/many" >"$WORK/out" 2>/dev/null ||
    fail "good.csv beside 100 bad files not analysed"
grep -q "100 of 101 inputs skipped" "$WORK/out" || { cat "$WORK/out" >&2; fail "skip count"; }
/usr/bin/python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["inputs"]
assert len(i["skipped"]) == 100, len(i["skipped"])' "$WORK/m/report.json" ||
    fail "report.json does not list the 100 skipped files"
echo "ok: hostile steps.csv and Kineto inputs"
