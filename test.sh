#!/usr/bin/env bash
# test.sh — install dependencies, build with -Werror, run every test (cmocka units and
# integration tests with real mpirun). This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
mkdir -p m4
autoreconf -fi >/dev/null
mkdir -p _build
cd _build
../configure --enable-werror -q
make -j2 >/dev/null
rc=0
make -j2 check || rc=$?
# Summarise from the automake logs: one line a CI reader can trust.
count() { cat $(find . -name '*.trs') | awk -v re="$1" '$0 ~ "^:test-result: (" re ")" {n++} END {print n+0}'; }
pass=$(count PASS)
fail=$(count 'FAIL|ERROR|XPASS')
skip=$(count SKIP)
if [ "$rc" != 0 ]; then
    for f in $(grep -l -E '^:test-result: (FAIL|ERROR)' $(find . -name '*.trs') || true); do
        echo "===== ${f%.trs}.log"; tail -n 60 "${f%.trs}.log"
    done
fi
echo "$pass passed, $fail failed, $skip skipped"
exit $rc
