"""check_killed.py REPORT RANK DIED_AT RANKS: the report.json of a job in which RANK was
killed (kill -9) at the start of step DIED_AT, windows of 10 steps, RANKS ranks in all
(tests/integration/t_kill_rank.sh under mpirun, tests/slurm/t_kill_rank.sh under srun).
Exits non-zero, saying what is wrong, unless: the job is incomplete; exactly that rank is
missing, from the first step of the first window it did not deliver (or the window
before, if that one was still on its way); no step from its death on was held; and no
anomaly was judged from the gap (nothing else was wrong with the job)."""
import json
import sys

path, rank, died_at, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(path))
j = r["job"]
assert j["complete"] is False, j
assert j["ranks"] == ranks, j
mr = {m["rank"]: m["since_step"] for m in j["missing_ranks"]}
# only the dead rank: the others were alive (stuck waiting on it)
assert list(mr) == [rank], j["missing_ranks"]
first_lost = died_at // 10 * 10
assert mr[rank] in (first_lost - 10, first_lost), mr
assert r["steps"]["last"] < died_at, r["steps"]
assert r["anomalies"] == [], r["anomalies"]
print("missing", mr, "steps", r["steps"]["count"])
