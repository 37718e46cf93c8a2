# check_man.sh — the man-page check the programs' t_man.sh share (sourced after the room's
# lib.sh, which gives WORK, a scratch directory, and fail). check_man PAGE PROGRAM NAME:
# every option that `PROGRAM --help` lists (short and long, "  -o, --outdir DIR ...") appears
# in PAGE, at least 8 of them; the page is ASCII and renders without a single groff warning
# (groff -man -Tutf8 -ww; groff-base is in scripts/install-deps.sh) and with its EXIT
# STATUS section. Without groff only the option check runs, and says so. NAME is the
# program's name in the messages. Prints one "ok: ..." line, or fails with one line.
check_man() {
    PAGE=$1 PROGRAM=$2 NAME=$3
    [ -r "$PAGE" ] || fail "no $PAGE"
    "$PROGRAM" --help >"$WORK/help" || fail "$NAME --help exit $?"
    # "  -o, --outdir DIR  ..." -> "-o --outdir"
    opts=$(sed -n 's/^  \(-[A-Za-z]\), \(--[a-z][a-z-]*\).*/\1 \2/p' "$WORK/help")
    [ "$(echo "$opts" | wc -w)" -ge 8 ] ||
        { cat "$WORK/help" >&2; fail "options not read from --help"; }
    # ASCII only: man(1) reads a page without an encoding as Latin-1 and warns on UTF-8
    ! LC_ALL=C grep -n '[^[:print:][:space:]]' "$PAGE" || fail "$PAGE: non-ASCII bytes (above)"
    sed 's/\\//g' "$PAGE" >"$WORK/page"      # roff escapes off: \-\-max\-mem -> --max-mem
    for o in $opts; do
        grep -q -e "$o\\([^a-z-]\\|\$\\)" "$WORK/page" || fail "$o ($NAME --help) not in $PAGE"
    done
    if command -v groff >/dev/null 2>&1; then
        groff -man -Tutf8 -ww -z "$PAGE" >"$WORK/groff.out" 2>&1 || fail "groff exit $? on $PAGE"
        [ ! -s "$WORK/groff.out" ] || { cat "$WORK/groff.out" >&2; fail "groff warnings on $PAGE"; }
        groff -man -Tutf8 -P-cbou "$PAGE" 2>/dev/null | grep -q "^EXIT STATUS" ||
            fail "$PAGE renders without its EXIT STATUS section"
        echo "ok: $(echo "$opts" | wc -w) options in the page, groff renders it without warnings"
    else
        echo "ok: $(echo "$opts" | wc -w) options in the page" \
            "(no groff here: rendering not checked)"
    fi
}
