#!/bin/sh
# t_man.sh — argus-analyze(1) says what the program does: every option that
# `argus-analyze --help` lists (short and long) appears in man/argus-analyze.1, and the
# page is ASCII and renders without a single groff warning (tests/common/check_man.sh).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/common/check_man.sh"
check_man "$top_srcdir/man/argus-analyze.1" "$ANALYZE" argus-analyze
