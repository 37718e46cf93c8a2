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
    *libargus.so:/lib/x86_64-linux-gnu/libm.so.6\|on\|7\|/*/rel\|*libargus.so) ;;
    *) fail "environment contract wrong: $out" ;;
esac
out=$(CUDA_INJECTION64_PATH=/opt/other.so "$R" -- sh -c 'echo "$CUDA_INJECTION64_PATH"' 2>"$WORK/e")
[ "$out" = /opt/other.so ] || fail "user's CUDA injection not kept: $out"
grep -q "stands aside" "$WORK/e" || fail "no stand-aside message"
"$R" --print-config | grep -q "^ARGUS_WINDOW=10$" || fail "--print-config"
