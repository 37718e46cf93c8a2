#!/bin/sh
# t_sparse_ranks.sh — rank ids are sparse keys, not array sizes (issue 16, item 3): a steps
# CSV of 4 ranks x 1000 steps plus one row at rank 65,535 is analysed in memory that
# follows the 5 ranks present (under 5x the peak RSS of the same file without that row;
# the analysis' rank x step tables by id took ~3 GB), and a straggler among ranks
# 0, 10, 20, 30 (slow all along: a persistent_imbalance) is named by its id, with one rank
# row per rank present.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time" >&2; exit 77; }
/usr/bin/python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
H = "step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms\n"
def csv(name, ranks, slow, extra=""):
    with open(os.path.join(w, name), "w") as f:
        f.write(H)
        for st in range(1000):
            s = 1700000000000000000 + st * 200000000
            for rk in ranks:
                f.write("%d,%d,%d,%d,30,%d,10,5,1\n" % (st, rk, s,
                        s + (150000000 if rk == slow else 100000000), 100 if rk == slow else 50))
        f.write(extra)
csv("dense.csv", range(4), 2)
csv("far.csv", range(4), 2, "5,65535,1700000001000000000,1700000001100000000,30,50,10,5,1\n")
csv("tens.csv", [0, 10, 20, 30], 20)
PY
rss() { # rss NAME: argus-analyze's peak RSS in KB on $WORK/NAME.csv
    /usr/bin/time -f "%M" -o "$WORK/$1.rss" "$ANALYZE" -o "$WORK/o-$1" "$WORK/$1.csv" \
        >/dev/null 2>"$WORK/$1.err" || fail "$1.csv: argus-analyze failed: $(cat "$WORK/$1.err")"
    tail -n 1 "$WORK/$1.rss"
}
d=$(rss dense)
f=$(rss far)
echo "peak RSS: dense $d KB, with rank 65535 $f KB"
[ "$f" -lt $((5 * d)) ] || fail "rank 65535 took $f KB, dense $d KB: not under 5x"
rss tens >/dev/null
/usr/bin/python3 - "$WORK" <<'PY' || fail "sparse ranks: wrong report"
import json, sys
w = sys.argv[1]
r = json.load(open(w + "/o-tens/report.json"))
ranks = [x["rank"] for x in r["ranks"]]
assert ranks == [0, 10, 20, 30], ranks
# slow from the first step to the last: one persistent_imbalance (docs/ALGORITHMS.md)
a = [x for x in r["anomalies"] if x["kind"] == "persistent_imbalance"]
assert len(a) == 1 and a[0]["ranks"] == [20] and len(r["anomalies"]) == 1, r["anomalies"]
assert "rank 20 " in a[0]["evidence"], a[0]["evidence"]
far = json.load(open(w + "/o-far/report.json"))
assert [x["rank"] for x in far["ranks"]] == [0, 1, 2, 3, 65535], far["ranks"]
PY
