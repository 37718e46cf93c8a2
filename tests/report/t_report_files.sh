#!/bin/sh
# t_report_files.sh — the report files as outside tools read them: metrics.prom passes
# `promtool check metrics` (Debian's prometheus package; a strict Python checker of the
# text exposition format runs too, and alone when promtool is missing), every SVG parses
# as XML with an <svg> root, report.md embeds only pictures that exist, report.json has
# the docs/REPORT_SCHEMA.md fields. Cases: clean, straggler, comm (W1 matrix), host, regression.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
W=$(mktemp -d "${TMPDIR:-/tmp}/argus-rf.XXXXXX")
trap 'rm -rf "$W"' EXIT
for c in clean straggler comm host regression; do
    mkdir -p "$W/$c"
    "$top_builddir/tests/report/write_report" "$W/$c" "$c" >/dev/null
    if command -v promtool >/dev/null 2>&1; then
        out=$(promtool check metrics <"$W/$c/metrics.prom" 2>&1) || {
            echo "FAIL: promtool on $c: $out" >&2; exit 1; }
        [ -z "$out" ] || { echo "FAIL: promtool lint on $c: $out" >&2; exit 1; }
    else
        echo "note: promtool not installed; strict format checker only" >&2
    fi
    python3 "$top_srcdir/tests/report/check_report.py" "$W/$c" "$c" || {
        echo "FAIL: report files of $c" >&2; exit 1; }
    # report.html and the plots against report.json (the browser: t_html.sh)
    python3 "$top_srcdir/tests/report/check_html.py" "$W/$c" \
        "$([ "$c" = clean ] && echo clean || echo case)" >/dev/null || {
        echo "FAIL: report.html of $c" >&2; exit 1; }
done
[ -f "$W/comm/w1-1.svg" ] || { echo "FAIL: no W1 matrix for the comm case" >&2; exit 1; }
ls "$W/straggler"/heatmap-*.svg >/dev/null || { echo "FAIL: no anomaly heatmap" >&2; exit 1; }
echo "ok: report files of 5 cases"
