#!/bin/sh
# Clock offsets injected into the ranks (rank r's clock runs 10*r ms ahead, test knob)
# are recovered by the ping-pong along the tree, as every summary carries them. The
# issue's goal is 50 us; with 16 ranks oversubscribed on 2 shared cores the minimum RTT
# alone is 0.1-4 ms here (more when another test runs beside it), so this test holds the
# estimate to 3 ms of offsets up to 150 ms and prints the real error.
. "$(dirname "$0")/lib.sh"
export ARGUS_TEST_CLOCK_SKEW_NS=10000000
run_sim "clock-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
python3 - "$REPORT_DIR/reduce.json" <<'PY' || fail "clock offsets not recovered"
import json, sys
x = json.load(open(sys.argv[1]))
off = x["clock_offsets_ns"]
assert len(off) == 16, off
err = [abs(o + 10000000 * r) for r, o in enumerate(off)]
print("max offset error us:", max(err) / 1000.0)
assert max(err) <= 3000000, list(zip(off, err))
PY
