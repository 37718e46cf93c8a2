#!/bin/sh
# t_man.sh — argus-flows(1) says what the program does: every option that
# `argus-flows --help` lists (short and long) appears in man/argus-flows.1, and the
# page is ASCII and renders without a single groff warning (groff -man -Tutf8 -ww;
# groff-base is in scripts/install-deps.sh). Without groff only the option check runs,
# and says so.
. "$(dirname "$0")/lib.sh"
PAGE="$top_srcdir/man/argus-flows.1"
[ -r "$PAGE" ] || fail "no $PAGE"
"$FLOWS" --help >"$WORK/help" || fail "argus-flows --help exit $?"
# "  -o, --outdir DIR  ..." -> "-o --outdir"
opts=$(sed -n 's/^  \(-[A-Za-z]\), \(--[a-z][a-z-]*\).*/\1 \2/p' "$WORK/help")
[ "$(echo "$opts" | wc -w)" -ge 8 ] ||
    { cat "$WORK/help" >&2; fail "options not read from --help"; }
# ASCII only: man(1) reads a page without an encoding as Latin-1 and warns on UTF-8
! LC_ALL=C grep -n '[^[:print:][:space:]]' "$PAGE" || fail "$PAGE: non-ASCII bytes (above)"
sed 's/\\//g' "$PAGE" >"$WORK/page"      # roff escapes off: \-\-max\-mem -> --max-mem
for o in $opts; do
    grep -q -e "$o\\([^a-z-]\\|\$\\)" "$WORK/page" || fail "$o (argus-flows --help) not in $PAGE"
done
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$PAGE" >"$WORK/groff.out" 2>&1 || fail "groff exit $? on $PAGE"
    [ ! -s "$WORK/groff.out" ] || { cat "$WORK/groff.out" >&2; fail "groff warnings on $PAGE"; }
    groff -man -Tutf8 -P-cbou "$PAGE" 2>/dev/null | grep -q "^EXIT STATUS" ||
        fail "$PAGE renders without its EXIT STATUS section"
    echo "ok: $(echo "$opts" | wc -w) options in the page, groff renders it without warnings"
else
    echo "ok: $(echo "$opts" | wc -w) options in the page (no groff here: rendering not checked)"
fi
