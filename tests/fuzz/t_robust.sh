#!/bin/sh
# t_robust.sh — the robustness pass in `make check`: tests/fuzz/robust.py generates hostile
# Kineto traces and steps.csv files (long strings, keys and numbers, escapes and UTF-8 at
# the cut, deep nesting, huge numbers and durations, huge rank ids, many tiny events, many
# names, truncated files, long CSV lines, absurd CSV values, repeated rows) at sizes N and
# 4N and runs argus-analyze on each under a 1 GiB address-space limit and a timeout: no
# crash, no limit hit, the good steps beside a hostile part still analysed, and CPU time
# at 4N under 8x that at N (linear is 4x). A few seconds on 2 cores.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-robust.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
/usr/bin/python3 "$top_srcdir/tests/fuzz/robust.py" "$top_builddir/argus-analyze" "$WORK" ||
    { echo "FAIL: an importer crashed, ran out of its memory limit or grew faster than" \
           "linearly (above)" >&2; exit 1; }
