"""check_report.py DIR CASE — validate an Argus report directory (used by t_report_files.sh).

metrics.prom: a strict reading of the Prometheus text exposition format 0.0.4 (HELP then
TYPE once per family before its samples, valid metric and label names, escaped label
values, float values, no duplicate series, no timestamps, counters end in _total).
*.svg: parse as XML with an svg root in the SVG namespace. report.md: every embedded
picture exists. report.json: the docs/REPORT_SCHEMA.md fields with their types.
"""
import json, os, re, sys
import xml.etree.ElementTree as ET

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
VALUE = re.compile(r'^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|NaN|[+-]Inf)$')

def fail(msg):
    print("check_report: " + msg, file=sys.stderr)
    sys.exit(1)

def parse_labels(s, where):
    labels, i = {}, 0
    while i < len(s):
        m = re.match(r'([a-zA-Z_][a-zA-Z0-9_]*)="', s[i:])
        if not m:
            fail(f"{where}: bad label at {s[i:]!r}")
        name, i = m.group(1), i + m.end()
        val = []
        while True:
            if i >= len(s):
                fail(f"{where}: unterminated label value")
            ch = s[i]
            if ch == '\\':
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    fail(f"{where}: bad escape")
                val.append(s[i:i + 2]); i += 2; continue
            if ch == '"':
                i += 1; break
            if ch == '\n':
                fail(f"{where}: newline in label value")
            val.append(ch); i += 1
        if name in labels:
            fail(f"{where}: duplicate label {name}")
        labels[name] = ''.join(val)
        if i < len(s):
            if s[i] != ',':
                fail(f"{where}: expected ',' in labels")
            i += 1
    return labels

def check_prom(path):
    text = open(path, encoding='utf-8').read()
    if not text.endswith('\n'):
        fail("metrics.prom: no final newline")
    help_, type_, seen, series = {}, {}, set(), set()
    cur = None
    for n, line in enumerate(text.split('\n')[:-1], 1):
        where = f"metrics.prom:{n}"
        if line.startswith('# HELP '):
            name = line.split(' ', 3)[2]
            if name in help_: fail(f"{where}: second HELP for {name}")
            help_[name] = True
            if not NAME.match(name): fail(f"{where}: bad name {name}")
            continue
        if line.startswith('# TYPE '):
            parts = line.split(' ')
            if len(parts) != 4 or parts[3] not in ('counter', 'gauge', 'untyped', 'summary', 'histogram'):
                fail(f"{where}: bad TYPE line")
            name = parts[2]
            if name in type_ or name in seen: fail(f"{where}: TYPE after samples or twice: {name}")
            if name not in help_: fail(f"{where}: TYPE without HELP: {name}")
            type_[name] = parts[3]
            if parts[3] == 'counter' and not name.endswith('_total'):
                fail(f"{where}: counter {name} without _total")
            cur = name
            continue
        if line.startswith('#') or not line.strip():
            fail(f"{where}: unexpected comment or blank line")
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m: fail(f"{where}: bad sample line {line!r}")
        name, labels, val = m.group(1), m.group(3) or '', m.group(4)
        if name != cur: fail(f"{where}: sample of {name} outside its family")
        if not VALUE.match(val): fail(f"{where}: bad value {val!r}")
        lab = parse_labels(labels, where)
        key = (name, tuple(sorted(lab.items())))
        if key in series: fail(f"{where}: duplicate series")
        series.add(key)
        seen.add(name)
    for name in type_:
        if name not in seen: fail(f"metrics.prom: family {name} has no samples")
    for need in ('argus_job_ranks', 'argus_anomalies', 'argus_step_time_median_seconds', 'argus_job_complete'):
        if need not in seen: fail(f"metrics.prom: no {need}")
    return series

def main():
    d, case = sys.argv[1], sys.argv[2]
    series = check_prom(os.path.join(d, 'metrics.prom'))
    r = json.load(open(os.path.join(d, 'report.json')))
    for k in ('argus_report_version', 'job', 'layout', 'steps', 'collection', 'anomalies', 'ranks'):
        if k not in r: fail(f"report.json: no {k}")
    for a in r['anomalies']:
        for k in ('id', 'level', 'kind', 'steps', 'ranks', 'victims', 'slowdown', 'score',
                  'detected_at_step', 'evidence', 'data_level', 'confidence'):
            if k not in a: fail(f"report.json: anomaly without {k}")
        if a['data_level'] not in ('kernels', 'phases', 'steps'):
            fail(f"report.json: data_level {a['data_level']!r}")
        if not 0 < a['confidence'] <= 1: fail("report.json: confidence not in (0, 1]")
    if r['collection'].get('data_level') not in ('kernels', 'phases', 'steps', 'none'):
        fail("report.json: collection.data_level missing")
    total = sum(1 for (n, lab) in series if n == 'argus_anomalies')
    if total != 8: fail("metrics.prom: argus_anomalies must list all 8 kinds")
    per_kind = {}
    for line in open(os.path.join(d, 'metrics.prom')):
        m = re.match(r'argus_anomalies\{.*kind="(\w+)"\} (\S+)', line)
        if m: per_kind[m.group(1)] = float(m.group(2))
    if sum(per_kind.values()) != len(r['anomalies']):
        fail("metrics.prom: anomaly counts differ from report.json")
    if case == 'clean' and r['anomalies']:
        fail("clean case has anomalies")
    if case != 'clean' and not r['anomalies']:
        fail(f"{case} case has no anomaly")
    svgs = [f for f in os.listdir(d) if f.endswith('.svg')]
    if 'heatmap.svg' not in svgs: fail("no heatmap.svg")
    for f in svgs:
        try:
            root = ET.parse(os.path.join(d, f)).getroot()
        except ET.ParseError as e:
            fail(f"{f}: not XML: {e}")
        if root.tag != '{http://www.w3.org/2000/svg}svg': fail(f"{f}: root is {root.tag}")
        # cells, bars or bands, possibly grouped (<g class="cell">, <g class="bar">)
        if len(list(root.iter('{http://www.w3.org/2000/svg}rect'))) < 2: fail(f"{f}: no cells")
    md = open(os.path.join(d, 'report.md'), encoding='utf-8').read()
    pics = re.findall(r'!\[[^\]]*\]\(([^)]+)\)', md)
    if 'heatmap.svg' not in pics: fail("report.md does not embed heatmap.svg")
    for p in pics:
        if not os.path.exists(os.path.join(d, p)): fail(f"report.md embeds missing {p}")
    for s in svgs:
        if s not in pics: fail(f"{s} not embedded in report.md")
    if r['anomalies'] and '## Summary' not in md: fail("report.md: no summary")

main()
