#!/bin/sh
# argus-run's options and the environment contract it hands to the command.
. "$(dirname "$0")/lib.sh"
R=$ARGUS_RUN
"$R" --help | grep -q -- "--outdir" || fail "--help lacks --outdir"
"$R" --version | grep -q "argus-run (Argus)" || fail "--version"
if "$R" --bogus -- true 2>"$WORK/e"; then fail "unknown option accepted"; fi
[ "$(wc -l <"$WORK/e")" = 1 ] && grep -q "unknown option '--bogus'" "$WORK/e" || fail "unknown option message: $(cat "$WORK/e")"
if "$R" --window 0 -- true 2>"$WORK/e"; then fail "window 0 accepted"; fi
grep -q "ARGUS_WINDOW" "$WORK/e" || fail "bad window message: $(cat "$WORK/e")"
if "$R" --window 12abc -- true 2>"$WORK/e"; then fail "window 12abc accepted"; fi
if ARGUS_FANIN=1 "$R" -- true 2>"$WORK/e"; then fail "bad ARGUS_FANIN accepted"; fi
grep -q "ARGUS_FANIN" "$WORK/e" || fail "bad env message: $(cat "$WORK/e")"
if "$R" 2>"$WORK/e"; then fail "no command accepted"; fi
out=$(LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 "$R" --window 7 --outdir rel -- sh -c \
      'echo "$LD_PRELOAD|$ARGUS_MODE|$ARGUS_WINDOW|$ARGUS_OUTDIR|$CUDA_INJECTION64_PATH"')
case $out in
    *libargus_preload.so:/lib/x86_64-linux-gnu/libm.so.6\|on\|7\|/*/rel\|*libargus.so) ;;
    *) fail "environment contract wrong: $out" ;;
esac
out=$(CUDA_INJECTION64_PATH=/opt/other.so "$R" -- sh -c 'echo "$CUDA_INJECTION64_PATH"' 2>"$WORK/e")
[ "$out" = /opt/other.so ] || fail "user's CUDA injection not kept: $out"
grep -q "stands aside" "$WORK/e" || fail "no stand-aside message"
"$R" --print-config | grep -q "^ARGUS_WINDOW=10$" || fail "--print-config"
# Every bad setting is named, one line each, environment and options alike, and nothing
# starts (issue 16, item 10): not only the first.
if ARGUS_FANIN=1 ARGUS_PHASE_MAP=garbage ARGUS_RATIO=0.5 "$R" --window 0 --log loud \
    -- touch "$WORK/ran" 2>"$WORK/e"; then fail "bad settings accepted"; fi
[ -e "$WORK/ran" ] && fail "the command ran despite bad settings"
for v in ARGUS_FANIN=1 ARGUS_PHASE_MAP=garbage ARGUS_RATIO=0.5 ARGUS_WINDOW=0 ARGUS_LOG=loud; do
    [ "$(grep -c "^argus-run: $v: " "$WORK/e")" = 1 ] ||
        { cat "$WORK/e" >&2; fail "$v not named once"; }
done
grep -q "^argus-run: 5 bad settings; nothing was started$" "$WORK/e" ||
    { cat "$WORK/e" >&2; fail "no summary line for 5 bad settings"; }
[ "$(wc -l <"$WORK/e")" = 6 ] || { cat "$WORK/e" >&2; fail "not one line per bad setting"; }
# ARGUS_MODE=full (a retired mode) is refused by name, never shown as on; a bad
# ARGUS_PHASE_MAP is refused with the rule named; --print-config shows what is in effect.
if ARGUS_MODE=full "$R" --print-config >"$WORK/o" 2>"$WORK/e"; then fail "ARGUS_MODE=full accepted"; fi
grep -q "^argus-run: ARGUS_MODE=full: not one of off, on$" "$WORK/e" || fail "full: $(cat "$WORK/e")"
[ -s "$WORK/o" ] && fail "ARGUS_MODE=full: a configuration was printed: $(head -1 "$WORK/o")"
if ARGUS_PHASE_MAP=garbage "$R" --print-config >/dev/null 2>"$WORK/e"; then
    fail "ARGUS_PHASE_MAP=garbage accepted"; fi
grep -q "^argus-run: ARGUS_PHASE_MAP=garbage: bad rule 'garbage'" "$WORK/e" ||
    fail "phase map: $(cat "$WORK/e")"
ARGUS_PHASE_MAP=attn:forward ARGUS_RATIO=2 "$R" --mode off --window 5000 --print-config \
    >"$WORK/o" || fail "good settings refused"
for v in ARGUS_MODE=off ARGUS_WINDOW=5000 ARGUS_RATIO=2 ARGUS_PHASE_MAP=attn:forward; do
    grep -qx "$v" "$WORK/o" || { cat "$WORK/o" >&2; fail "--print-config lacks $v"; }
done
# A user's LD_PRELOAD of any length survives whole behind libargus.so (item 13): 20 KB
# of real paths (links to one small library in many directories, which ld.so loads once).
lib=/lib/x86_64-linux-gnu/libm.so.6
[ -e "$lib" ] || lib=$(ldconfig -p | awk '/libm\.so\.6 /{print $NF; exit}')
pre=""
i=0
while [ ${#pre} -lt 20480 ]; do
    d="$WORK/preload/dir-$i-$(printf '%060d' "$i")"
    mkdir -p "$d" && ln -s "$lib" "$d/libm.so.6"
    pre="${pre:+$pre:}$d/libm.so.6"
    i=$((i + 1))
done
out=$(LD_PRELOAD=$pre "$R" -- sh -c 'printf %s "$LD_PRELOAD"' 2>"$WORK/e") ||
    { cat "$WORK/e" >&2; fail "a 20 KB LD_PRELOAD: the command failed"; }
case $out in
    *libargus_preload.so:"$pre") ;;
    *) fail "a ${#pre}-byte LD_PRELOAD came back as ${#out} bytes: ...$(printf %s "$out" | tail -c 80)" ;;
esac
[ -s "$WORK/e" ] && { cat "$WORK/e" >&2; fail "a 20 KB LD_PRELOAD: ld.so or argus-run complained"; }
exit 0
