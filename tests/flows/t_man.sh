#!/bin/sh
# t_man.sh — argus-flows(1) says what the program does: every option that
# `argus-flows --help` lists (short and long) appears in man/argus-flows.1, and the
# page is ASCII and renders without a single groff warning (tests/common/check_man.sh).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/common/check_man.sh"
check_man "$top_srcdir/man/argus-flows.1" "$FLOWS" argus-flows
