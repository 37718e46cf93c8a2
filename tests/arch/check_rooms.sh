#!/bin/sh
# check_rooms.sh ROOT — the arrow check: every #include "ROOM/..." in a room's C files
# names a room that the room table of ROOT/docs/ARCHITECTURE.md lets it use (or one of
# the single headers listed there), the table's rooms form no circle, and every top-level
# folder holding C files has a row (folders named _* are build trees, not rooms).
# Prints one line per broken rule; exits 1 if any.
# POSIX sh + awk + tsort; reads only ROOT.
set -u
root=${1:?usage: check_rooms.sh ROOT}
doc="$root/docs/ARCHITECTURE.md"
[ -r "$doc" ] || { echo "check_rooms: $doc: cannot read the room table"; exit 1; }
tab=$(mktemp) || exit 1
trap 'rm -f "$tab"' EXIT
# The table between <!-- rooms:begin --> and <!-- rooms:end -->, one line per room:
# "room use1 use2 ..." (a use is a room, or a room/header.h; "*" is everything).
awk '/<!-- rooms:begin -->/ {on = 1; next} /<!-- rooms:end -->/ {on = 0}
     on && /^\| *`[a-z_]+\/`/ {
         n = split($0, col, "|")
         room = col[2]; gsub(/[` \/]/, "", room)
         uses = col[n - 1]; out = room
         while (match(uses, /`[^`]+`/)) {
             u = substr(uses, RSTART + 1, RLENGTH - 2); sub(/\/$/, "", u)
             out = out " " u; uses = substr(uses, RSTART + RLENGTH)
         }
         if (uses ~ /everything/) out = out " *"
         print out
     }' "$doc" >"$tab"
if [ ! -s "$tab" ]; then
    echo "check_rooms: $doc: no room table between <!-- rooms:begin --> and <!-- rooms:end -->"
    exit 1
fi
bad=0
# No circle among the rooms (single headers count as their room).
if ! awk '{for (i = 2; i <= NF; i++) if ($i != "*") {u = $i; sub(/\/.*/, "", u);
                                                     if (u != $1) print $1, u}}' "$tab" |
     tsort >/dev/null 2>&1; then
    echo "check_rooms: the room table has a circle: $(awk '{for (i = 2; i <= NF; i++)
        if ($i != "*") printf "%s->%s ", $1, $i}' "$tab" | tsort 2>&1 >/dev/null | head -1)"
    bad=1
fi
# Every folder with C sources is a room of the table.
for d in "$root"/*/; do
    d=${d%/}; r=${d##*/}
    case $r in _*) continue ;; esac      # build and install trees (_build, _install)
    [ -n "$(find "$d" -name '*.[ch]' -print -quit 2>/dev/null)" ] || continue
    grep -q "^$r\( \|\$\)" "$tab" ||
        { echo "check_rooms: $r/ holds C files but has no row in $doc"; bad=1; }
done
# Each room's includes.
while read -r room uses; do
    case " $uses " in *" * "*) continue ;; esac
    [ -d "$root/$room" ] || continue
    find "$root/$room" -name '*.[ch]' | sort | while read -r f; do
        rel=${f#"$root"/}
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
            case $inc in
            config.h) continue ;;            # autoconf's, in the build tree
            argus.h) inc=tracer/argus.h ;;   # the public header, on the include path
            */*) ;;
            *) [ -e "${f%/*}/$inc" ] && continue
               echo "$rel: #include \"$inc\": not found beside it; name it by its room"
               echo x >&3; continue ;;
            esac
            to=${inc%%/*}
            [ "$to" = "$room" ] && continue
            case " $uses " in *" $to "*|*" $inc "*) continue ;; esac
            echo "$rel: #include \"$inc\": $room/ may not use $to/ (docs/ARCHITECTURE.md, rooms)"
            echo x >&3
        done
    done
done <"$tab" 3>"$tab.bad"
[ -s "$tab.bad" ] && bad=1
rm -f "$tab.bad"
exit $bad
