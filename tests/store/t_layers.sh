#!/bin/sh
# t_layers.sh — the files of store/ call each other one way, in the order that
# store/jobstore_int.h lists them (check_layers.sh on the source tree), and the check
# itself catches what it must: a call back up (a circle), a file left out of the list;
# while a name in a comment, a string or a static function of the same name is no call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${top_srcdir:-$here/../..}
check="$here/check_layers.sh"
fail=0

# 1. The check can fail: a store of three parts, low.c < mid.c < top.c.
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
cat >"$t/jobstore_int.h" <<'H'
/* the parts:
 *   low.c   the bottom
 *   mid.c   on low
 *             (a second line of mid's)
 *   top.c   on both
 */
H
printf 'int low_f(void) { return 1; } /* not mid_f() */\n' >"$t/low.c"
printf 'static int top_f(void) { return 0; }\nint mid_f(void)\n{ return low_f() + top_f(); }\n' \
    >"$t/mid.c"
printf 'int top_f(void) { return mid_f() + low_f(); }\nconst char *s = "mid_f()";\n' >"$t/top.c"
out=$(sh "$check" "$t" 2>&1) || { echo "FAIL: a store calling one way failed: $out"; fail=1; }
[ -z "$out" ] || { echo "FAIL: a store calling one way printed: $out"; fail=1; }
out=$(sh "$check" "$t" -v 2>&1)
for want in 'mid.c -> low.c: low_f' 'top.c -> low.c: low_f' 'top.c -> mid.c: mid_f'; do
    case $out in *"$want"*) ;; *) echo "FAIL: no line '$want' in: $out"; fail=1 ;; esac
done
case $out in *"mid.c -> top.c"*) echo "FAIL: a static function was a call: $out"; fail=1 ;;
esac
printf 'int low_f(void) { return top_f(); }\n' >"$t/low.c"
out=$(sh "$check" "$t" 2>&1) && { echo "FAIL: a call back up passed"; fail=1; }
want='low.c calls top_f of top.c, which is not listed before it'
case $out in *"$want"*) ;; *) echo "FAIL: no line '$want' in: $out"; fail=1 ;; esac
printf 'int low_f(void) { return 1; }\n' >"$t/low.c"
printf 'int stray_f(void) { return 0; }\n' >"$t/stray.c"
out=$(sh "$check" "$t" 2>&1) && { echo "FAIL: a file left out of the list passed"; fail=1; }
case $out in *"stray.c: not in the list"*) ;;
*) echo "FAIL: no unlisted file reported: $out"; fail=1 ;; esac

# 2. The real store.
if ! out=$(sh "$check" "$src/store" 2>&1); then
    echo "FAIL: calls between the files of store/:"
    printf '%s\n' "$out"
    fail=1
fi
[ $fail -eq 0 ] && echo "PASS: store/ files call one way"
exit $fail
