#!/bin/sh
# check_layers.sh — the files of the job store call each other one way. The order is the
# list in DIR/jobstore_int.h (lines " *   NAME.c  what it does", bottom first); a file may
# call only the functions of the files listed before it. A function belongs to the .c
# file that defines it (not static), or to NAME.c when NAME.h defines it static inline;
# only calls in the .c files count, leaving out comments, strings and a file's calls to
# itself (its static functions included, whatever their names elsewhere).
# Usage: check_layers.sh DIR [-v]   (-v: print the call graph, "a.c -> b.c: f g", too)
# Exit 0 when every call points down; else 1, with one line per call that does not (or
# per .c file missing from the list). Reads the files; writes nothing but a temp folder.
set -u
dir=${1:?usage: check_layers.sh DIR [-v]}
verbose=${2:-}
int="$dir/jobstore_int.h"
[ -f "$int" ] || { echo "check_layers: no $int"; exit 2; }

order=$(sed -n 's/^ \*   \([a-z_][a-z0-9_]*\)\.c .*/\1/p' "$int")
[ -n "$order" ] || { echo "check_layers: $int lists no files"; exit 2; }

t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT

# C without comments and string or character contents, line for line.
strip() {
    awk '{
        line = $0; out = ""; i = 1; n = length(line)
        while (i <= n) {
            c = substr(line, i, 1); c2 = substr(line, i, 2)
            if (incom) { if (c2 == "*/") { incom = 0; i += 2 } else i++; continue }
            if (instr) {
                if (c == "\\") { i += 2; continue }
                if (c == q) { instr = 0; out = out c }
                i++; continue
            }
            if (c2 == "/*") { incom = 1; out = out " "; i += 2; continue }
            if (c2 == "//") break
            if (c == "\"" || c == "\047") { instr = 1; q = c }
            out = out c; i++
        }
        print out
    }' "$1"
}

fail=0
for f in "$dir"/*.c; do
    [ -e "$f" ] || continue
    b=$(basename "$f" .c)
    echo "$order" | grep -qx "$b" || { echo "$b.c: not in the list of $int"; fail=1; }
done

# Each listed part: its text (the .c file: the calls) and the functions it defines.
for p in $order; do
    : >"$t/$p.txt"
    [ -f "$dir/$p.c" ] && strip "$dir/$p.c" >>"$t/$p.txt"
    [ -f "$dir/$p.h" ] && strip "$dir/$p.h" >"$t/$p.h.txt"
    {
        [ -f "$dir/$p.c" ] && strip "$dir/$p.c" |
            grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *][A-Za-z_][A-Za-z0-9_]*\(' |
            grep -Ev '^(static|typedef|extern)[ ]|;[ ]*$'
        [ -f "$dir/$p.h" ] && grep -E '^static inline ' "$t/$p.h.txt" |
            grep -E '[ *][A-Za-z_][A-Za-z0-9_]*\('
    } | sed -E 's/^[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/' | sort -u >"$t/$p.defs"
    # every function it defines, static ones too: a call to one of those is its own
    grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *][A-Za-z_][A-Za-z0-9_]*\(' "$t/$p.txt" |
        grep -Ev '^(typedef|extern)[ ]|;[ ]*$' |
        sed -E 's/^[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/' | sort -u >"$t/$p.own"
done

# Every call of a part to a function of another part.
below=""
for p in $order; do
    for q in $order; do
        [ "$q" = "$p" ] && continue
        called=""
        while read -r fn; do
            [ -n "$fn" ] || continue
            grep -qx "$fn" "$t/$p.own" && continue
            if grep -Eq "(^|[^A-Za-z0-9_])$fn[ ]*\(" "$t/$p.txt"; then
                called="$called $fn"
            fi
        done <"$t/$q.defs"
        [ -n "$called" ] || continue
        case " $below " in
        *" $q "*) up="" ;;
        *) up=" (not listed before it)"
           echo "$p.c calls$called of $q.c, which is not listed before it"; fail=1 ;;
        esac
        [ "$verbose" = -v ] && echo "  $p.c -> $q.c:$called$up"
    done
    below="$below $p"
done
exit $fail
