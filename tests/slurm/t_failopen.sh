#!/bin/sh
# Failing open against a real srun: a bad plugstack.conf argument, an output directory
# that cannot be created and a missing libargus.so each leave the job running to rc 0
# with exactly one "argus: " line saying what to fix (also when installed `required`).
# The output directory is made by the job user, never by root: a job run as nobody owns it.
. "$(dirname "$0")/lib.sh"
cluster_start 6877
small() { # small NAME [srun options]: a 4-rank, 12-step simulated job with --argus=on
    local name=$1; shift
    run_srun "$name" --argus=on -n 4 "$@" "$SIM" --tp 1 --pp 2 --dp 2 --steps 12 ||
        { cat "$WORK/$name.err" >&2; fail "$name: the job failed"; }
    n=$(count_argus "$WORK/$name.err")
    [ "$n" = 1 ] || { cat "$WORK/$name.err" >&2; fail "$name: want one argus line, got $n"; }
}

for kind in optional required; do
    PLUG_KIND=$kind plug "libdir=$LIBDIR" colour=blue
    small "badarg-$kind"
    grep -q "^argus: plugstack.conf: unknown key 'colour'" "$WORK/badarg-$kind.err" ||
        fail "bad argument ($kind): message does not name the key"
    ls "$WORK" | grep -q '^argus-' && fail "bad argument ($kind): Argus ran anyway"
done

: > "$WORK/file"
plug "libdir=$LIBDIR" "outdir=$WORK/file/sub"
small unwritable
grep -q "$WORK/file/sub" "$WORK/unwritable.err" || fail "unwritable: message does not name the directory"

PLUG_KIND=required plug "libdir=$WORK/nowhere"
small nolib
grep -q "^argus: $WORK/nowhere/libargus.so: No such file or directory.*libdir=" "$WORK/nolib.err" ||
    fail "missing library: message does not say what to fix"
grep -q 'cannot be preloaded' "$WORK/nolib.err" && fail "missing library still preloaded"

# created as the job user (nobody), 0750, under a world-writable base
if id nobody >/dev/null 2>&1; then
    mkdir -m 1777 "$WORK/pub"
    plug "libdir=$LIBDIR" "outdir=$WORK/pub/%u"
    node_idle # the last job may still be completing: this one must not pend (lib.sh)
    run_srun asnobody --argus=on --uid=nobody --gid="$(id -g nobody)" -n 2 \
        "$SIM" --tp 1 --pp 1 --dp 2 --steps 12 ||
        { cat "$WORK/asnobody.err" >&2; fail "job as nobody failed"; }
    d=$(ls -d "$WORK"/pub/nobody/argus-*.0) || { cat "$WORK/asnobody.err" >&2; fail "no outdir for nobody"; }
    [ "$(stat -c %U "$d")" = nobody ] || fail "$d is owned by $(stat -c %U "$d"), not the job user"
    [ "$(stat -c %a "$d")" = 750 ] || fail "$d is not mode 0750"
    [ -z "$(find "$WORK/pub" -mindepth 1 -user root)" ] || fail "root-owned files in the user's directory"
fi
exit 0
