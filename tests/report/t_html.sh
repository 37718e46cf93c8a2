#!/bin/sh
# t_html.sh — report.html as a person opens it, in a real browser (Debian's chromium,
# headless): a case-study run (argus-simtrain under argus-run, a compute straggler on
# rank 5 in steps 20-40), the same job analysed offline from its spool (argus-analyze),
# a clean simulated run, the synthetic clean job and the synthetic link (comm_degradation)
# job. For each: check_html.py on the files
# (SVGs as XML, the page self-contained and inlining them, values equal report.json's,
# a clean heatmap within the neutral band), then chromium loads the page: no console
# error and no failed load in its log, and a probed copy's DOM (--dump-dom) shows every
# <svg> with a non-zero size and each anomaly span at its steps. Screenshots are kept in
# tests/report/html-artifacts/ of the build directory. argus-analyze's stderr, not a
# terminal, carries no progress line. Heavy (mpirun, chromium): run it under
# flock /tmp/argus-heavy.lock. Skips (77) without chromium or mpirun.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "skip: chromium not installed (scripts/install-deps.sh)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/argus-html.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$W"; else echo "kept $W" >&2; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ART="$top_builddir/tests/report/html-artifacts"
mkdir -p "$ART"
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export ARGUS_DEADLINE_MS=${ARGUS_DEADLINE_MS:-30000}
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# sim JOBID ARGS...: the 16-rank tp2 pp2 dp4 simulated job under argus-run
sim() {
    id=$1; shift
    ARGUS_JOBID=$id timeout 300 "$top_builddir/tests/argus-run-build" --outdir "$W/out" -- \
        mpirun -np 16 "$top_builddir/argus-simtrain" --tp 2 --pp 2 --dp 4 --microbatches 4 \
        --steps 60 "$@" >"$W/$id.log" 2>&1 || { cat "$W/$id.log" >&2; fail "simulated job $id"; }
}

# browse DIR NAME MODE: chromium on DIR/report.html (console, screenshot) and on a probed copy
browse() {
    d=$1; name=$2; mode=$3
    prof="$W/profile-$name"
    # shellcheck disable=SC2086
    set -- --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$prof" --enable-logging=stderr --v=0
    timeout 60 "$CHROMIUM" "$@" --window-size=1280,4000 --screenshot="$ART/$name.png" \
        "file://$d/report.html" >"$W/$name.shot.log" 2>&1 || {
        cat "$W/$name.shot.log" >&2; fail "chromium could not load $name's report.html"; }
    [ -s "$ART/$name.png" ] || fail "no screenshot of $name"
    if grep -E 'CONSOLE|Uncaught|net::ERR_|Refused to|Not allowed to load' "$W/$name.shot.log"; then
        fail "$name: console errors or failed loads in report.html"
    fi
    # the probe: rendered sizes and span boxes into data attributes, errors into the body
    python3 - "$d/report.html" "$d/probe.html" <<'PY'
import sys
s = open(sys.argv[1], encoding='utf-8').read()
probe = """<script>
(function () {
  var errs = [];
  try {
    var svgs = document.querySelectorAll('svg');
    for (var i = 0; i < svgs.length; i++) {
      var r = svgs[i].getBoundingClientRect();
      svgs[i].setAttribute('data-bw', r.width);
      svgs[i].setAttribute('data-bh', r.height);
    }
    var sp = document.querySelectorAll('g.anomaly-span > rect');
    for (var j = 0; j < sp.length; j++) {
      var b = sp[j].getBBox();
      sp[j].setAttribute('data-bbox', b.x + ' ' + b.y + ' ' + b.width + ' ' + b.height);
    }
  } catch (e) { errs.push(String(e)); }
  document.body.setAttribute('data-errors', errs.join('; '));
  document.body.setAttribute('data-probe', 'done');
})();
</script></body>"""
assert s.count('</body>') == 1
open(sys.argv[2], 'w', encoding='utf-8').write(s.replace('</body>', probe))
PY
    timeout 60 "$CHROMIUM" "$@" --window-size=1280,2000 --dump-dom "file://$d/probe.html" \
        >"$W/$name.dom.html" 2>"$W/$name.dom.log" || {
        cat "$W/$name.dom.log" >&2; fail "chromium --dump-dom on $name"; }
    rm -f "$d/probe.html"
    python3 "$top_srcdir/tests/report/check_html.py" "$d" "$mode" "$W/$name.dom.html" ||
        fail "report.html of $name"
}

sim html-case-$$ --inject compute_straggler:ranks=5,steps=20-40,factor=1.5
case="$W/out/argus-html-case-$$"
browse "$case" case case
python3 - "$case/report.json" <<'PY' || fail "the case's diagnosis changed"
import json, sys
a = json.load(open(sys.argv[1]))["anomalies"]
assert [(x["kind"], x["ranks"]) for x in a] == [("compute_straggler", [5])], a
PY

# offline, from the spool: the same page; stderr is a file here, so no progress line
"$top_builddir/argus-analyze" -o "$W/offline" "$case/summaries.argus" >"$W/offline.out" \
    2>"$W/offline.err" || { cat "$W/offline.err" >&2; fail "argus-analyze on the spool"; }
if grep -q 'argus-analyze: reading' "$W/offline.err" || grep -q "$(printf '\r')" "$W/offline.err"; then
    cat "$W/offline.err" >&2; fail "argus-analyze printed progress to a non-terminal"
fi
[ ! -s "$W/offline.err" ] || { cat "$W/offline.err" >&2; fail "argus-analyze: stderr not quiet"; }
browse "$W/offline" offline case
# on a terminal (script(1) gives it one) the same run shows its progress line
if command -v script >/dev/null 2>&1; then
    script -qec "'$top_builddir/argus-analyze' -o '$W/offline-tty' '$case/summaries.argus'" \
        "$W/tty.log" >/dev/null 2>&1 || { cat "$W/tty.log" >&2; fail "argus-analyze on a tty"; }
    grep -q 'argus-analyze: 1 file, .* read, 16 ranks; analysing' "$W/tty.log" || {
        cat -v "$W/tty.log" >&2; fail "no progress line on a terminal"; }
fi

sim html-clean-$$
browse "$W/out/argus-html-clean-$$" clean clean
mkdir -p "$W/synth"
"$top_builddir/tests/report/write_report" "$W/synth" clean >/dev/null
browse "$W/synth" synth-clean clean
# the synthetic link case: its W1 matrix inlined and rendered too
mkdir -p "$W/synth-comm"
"$top_builddir/tests/report/write_report" "$W/synth-comm" comm >/dev/null
[ -f "$W/synth-comm/w1-1.svg" ] || fail "no W1 matrix in the comm case"
browse "$W/synth-comm" synth-comm case
echo "ok: report.html of 5 runs in chromium; screenshots in $ART"
