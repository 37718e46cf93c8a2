#!/bin/sh
# t_rooms.sh — the arrows between rooms hold (check_rooms.sh on the source tree), and the
# check itself catches what it must: a tree with an include running back up, a circle in
# the table, a folder without a row, each fails with a line naming it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${top_srcdir:-$here/../..}
check="$here/check_rooms.sh"
fail=0

# 1. The check can fail: a small tree with one wrong arrow of each kind.
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/docs" "$t/low" "$t/high" "$t/stray"
cat >"$t/docs/ARCHITECTURE.md" <<'DOC'
<!-- rooms:begin -->
| room | what | may include |
| --- | --- | --- |
| `low/` | below | — |
| `high/` | above | `low/` |
<!-- rooms:end -->
DOC
printf '#include "low/a.h"\n' >"$t/high/b.c"
printf '#include "high/b.h"\n' >"$t/low/a.c"
printf 'int x;\n' >"$t/stray/s.c"
out=$(sh "$check" "$t" 2>&1) && { echo "FAIL: a tree with a wrong arrow passed"; fail=1; }
for want in 'low/a.c: #include "high/b.h": low/ may not use high/' \
            'stray/ holds C files but has no row'; do
    case $out in *"$want"*) ;; *) echo "FAIL: no line '$want' in: $out"; fail=1 ;; esac
done
case $out in *high/b.c*) echo "FAIL: an allowed include was reported: $out"; fail=1 ;; esac
rm -r "$t/stray"
sed -i 's/| `low\/` | below | — |/| `low\/` | below | `high\/` |/' "$t/docs/ARCHITECTURE.md"
out=$(sh "$check" "$t" 2>&1) && { echo "FAIL: a circle of rooms passed"; fail=1; }
case $out in *circle*) ;; *) echo "FAIL: no circle reported: $out"; fail=1 ;; esac

# 2. The real tree.
if ! out=$(sh "$check" "$src" 2>&1); then
    echo "FAIL: arrows between rooms:"
    printf '%s\n' "$out"
    fail=1
fi
[ $fail = 0 ] && echo "ok: every include follows the room table"
exit $fail
