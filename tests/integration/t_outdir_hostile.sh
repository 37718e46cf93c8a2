#!/bin/sh
# Another user who can write in a shared (1777) output base plants argus-<jobid> with
# symlinks to a root-owned file at the names rank 0 writes; a real job run as root must
# not adopt that directory (common/outdir.c): the victim is unchanged and the report lands
# in a fresh argus-<jobid>.1 owned by root. Root and useradd only; the user is removed.
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
command -v useradd >/dev/null 2>&1 && command -v userdel >/dev/null 2>&1 ||
    { echo "SKIP: no useradd/userdel" >&2; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: no setpriv" >&2; exit 77; }
. "$(dirname "$0")/lib.sh"
u="argush$$"
useradd -M -N -s /bin/sh "$u" >/dev/null 2>&1 || { echo "SKIP: useradd failed" >&2; exit 77; }
trap 'userdel "$u" >/dev/null 2>&1 || true; cleanup' EXIT
as_user() { setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"; }

chmod 755 "$WORK"
pub="$WORK/pub"
mkdir -m 1777 "$pub"
echo keep > "$WORK/victim"; chmod 644 "$WORK/victim"
mkdir -m 700 "$WORK/victimdir"
jid="hostile$$"
d="$pub/argus-$jid"
as_user sh -c 'd=$1 v=$2 vd=$3; mkdir -m 777 "$d" && mkdir -m 777 "$d/traces" &&
    for f in reduce.json report.json report.md steps.csv metrics.prom summaries.argus; do
        ln -s "$v" "$d/$f.partial" || exit 1; done &&
    ln -s "$v" "$d/anomalies.jsonl" && ln -s "$v" "$d/summaries.argus" &&
    ln -s "$v" "$d/reduce.json" && ln -s "$vd" "$d/traces/x"' sh "$d" "$WORK/victim" \
    "$WORK/victimdir" ||
    fail "the other user could not plant its directory"
[ "$(stat -c %U "$d")" = "$u" ] || fail "setup: $d not owned by $u"
before=$(ls -lA "$d" | sort | md5sum)

umask 022 # files are 0640 less the umask: the usual umask, so that the modes say 0640
ARGUS_JOBID=$jid timeout 120 "$ARGUS_RUN" --outdir "$pub" -- "$MPIRUN" -np 2 \
    "$SIM" --tp 1 --pp 1 --dp 2 --steps 12 >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stderr" >&2; fail "job failed"; }

[ "$(cat "$WORK/victim")" = keep ] || fail "the victim file was written through a symlink"
[ "$(stat -c %U:%a "$WORK/victim")" = root:644 ] || fail "the victim file changed owner/mode"
[ -z "$(ls -A "$WORK/victimdir")" ] || fail "something was written into the victim directory"
[ "$(ls -lA "$d" | sort | md5sum)" = "$before" ] || { ls -lA "$d" >&2; fail "Argus wrote in $d"; }
n="$pub/argus-$jid.1"
[ -f "$n/report.json" ] && [ ! -L "$n/report.json" ] ||
    { ls -la "$pub" "$n" >&2 || true; cat "$WORK/stderr" >&2; fail "no report in $n"; }
[ -f "$n/reduce.json" ] || fail "no reduce.json in $n"
[ "$(stat -c %U:%a "$n")" = root:750 ] || fail "$n is $(stat -c %U:%a "$n"), want root:750"
[ -z "$(find "$n" -type l)" ] || fail "symlinks in the fresh directory"
for f in reduce.json report.json report.md steps.csv metrics.prom; do # every file 0640
    [ "$(stat -c %a "$n/$f")" = 640 ] || fail "$n/$f has mode $(stat -c %a "$n/$f"), want 640"
done
exit 0
