#!/usr/bin/env python3
"""check_html.py DIR case|clean [DOM] — report.html and its pictures as a reader sees them.

Static (the files): every *.svg parses as XML with an <svg> root; report.html is one
self-contained file (no script or style fetched, no external resource) that inlines each
SVG file's very text; the values the pictures show equal report.json's (the job median
step time, each rank's median step time, each anomaly's steps, the forecast's remaining
time); every anomaly has its section and its "what to look at next" box. clean: no
anomaly, and no cell of heatmap.svg beyond the colour scale's neutral band (value and
fill). case: at least one anomaly, its sources above the band on its heatmap.

DOM (chromium --dump-dom of the page with the probe script of t_html.sh): every <svg> has
a non-zero rendered size, the probe ran without an error, and each anomaly span's
rendered box lies at its steps on the plot's axis (within a pixel).
"""
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

NS = '{http://www.w3.org/2000/svg}'


def fail(msg):
    print("FAIL: check_html: " + msg, file=sys.stderr)
    sys.exit(1)


class Elems(HTMLParser):
    """Every start tag as (tag, attrs dict), in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def parse_html(text):
    p = Elems()
    p.feed(text)
    return p.tags


def near(a, b, tol):
    return abs(float(a) - float(b)) <= tol


def svg_files(d):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, '*.svg'))):
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError as e:
            fail(f"{f}: not XML: {e}")
        if root.tag != NS + 'svg':
            fail(f"{f}: root is {root.tag}")
        out[os.path.basename(f)] = root
    return out


def check_static(d, mode):
    rep = json.load(open(os.path.join(d, 'report.json')))
    svgs = svg_files(d)
    for need in ('steptime.svg', 'breakdown.svg', 'heatmap.svg'):
        if need not in svgs:
            fail(f"{d}: no {need}")
    html = open(os.path.join(d, 'report.html'), encoding='utf-8').read()
    tags = parse_html(html)
    for t, a in tags:
        if t in ('script', 'img', 'iframe', 'link', 'object', 'embed') and (
                'src' in a or 'href' in a or 'data' in a):
            fail(f"report.html fetches something: <{t} {a}>")
        if t == 'script':
            fail("report.html has a script: it must read without one")
    if re.search(r'url\(\s*["\']?https?:', html) or '@import' in html:
        fail("report.html's CSS fetches something")
    # the pictures are the files' very text
    for name in svgs:
        text = open(os.path.join(d, name), encoding='utf-8').read()
        body = text.split('\n', 1)[1] if text.startswith('<?xml') else text
        if body not in html:
            fail(f"report.html does not inline {name} as written")
    # values shown equal report.json's
    st = svgs['steptime.svg']
    if not near(st.get('data-median-ms'), rep['steps']['median_ms'], 0.0015):
        fail(f"steptime.svg median {st.get('data-median-ms')} != {rep['steps']['median_ms']}")
    spans = {(int(g.get('data-anomaly')), int(g.get('data-step-start')),
              int(g.get('data-step-end')), g.get('data-kind'))
             for g in st.iter(NS + 'g') if g.get('class') == 'anomaly-span'}
    want = {(a['id'], a['steps'][0], a['steps'][1], a['kind']) for a in rep['anomalies'][:64]}
    if spans != want:
        fail(f"steptime.svg spans {sorted(spans)} != report.json {sorted(want)}")
    marks = {(e.get('class'), int(e.get('data-anomaly')), int(e.get('data-step')))
             for e in st.iter() if e.get('class') in ('change-point', 'event')}
    for a in rep['anomalies'][:64]:
        if a['kind'] == 'step_regression' and ('change-point', a['id'], a['steps'][0]) not in marks:
            fail(f"steptime.svg: no change point at step {a['steps'][0]} (anomaly {a['id']})")
        for s in a.get('affected_steps', []) if a['kind'] == 'iteration_jitter' else []:
            if ('event', a['id'], s) not in marks:
                fail(f"steptime.svg: no event mark at step {s} (anomaly {a['id']})")
    med = {r['rank']: r['median_step_ms'] for r in rep['ranks']}
    sources = {x for a in rep['anomalies'] for x in a['ranks']}
    bars = [g for g in svgs['breakdown.svg'].iter(NS + 'g') if g.get('class') == 'bar']
    if not bars:
        fail("breakdown.svg has no bars")
    for g in bars:
        rk = int(g.get('data-rank'))
        if rk in med and not near(g.get('data-median-step-ms'), med[rk], 0.0015):
            fail(f"breakdown.svg rank {rk}: {g.get('data-median-step-ms')} != {med[rk]}")
        if (g.get('data-role') == 'source') != (rk in sources):
            fail(f"breakdown.svg rank {rk}: role {g.get('data-role')!r}, sources {sources}")
        parts = [float(r.get('data-ms')) for r in g.iter(NS + 'rect')]
        if not parts or min(parts) <= 0:
            fail(f"breakdown.svg rank {rk}: no parts")
    if 'forecast' in rep:
        fc = svgs.get('forecast.svg')
        if fc is None:
            fail("report.json has a forecast and there is no forecast.svg")
        for q in ('p10', 'p50', 'p90', 'p99'):
            if not near(fc.get(f'data-{q}-s'), rep['forecast']['remaining_s'][q], 0.01):
                fail(f"forecast.svg {q} {fc.get(f'data-{q}-s')} != report.json")
    # sections, boxes
    secs = {int(a['data-anomaly']): a for t, a in tags
            if t == 'section' and 'anomaly' in a.get('class', '').split()}
    boxes = {int(a['data-anomaly']) for t, a in tags if t == 'aside' and a.get('class') == 'next'}
    for a in rep['anomalies']:
        s = secs.get(a['id'])
        if not s or int(s['data-step-start']) != a['steps'][0] or \
                int(s['data-step-end']) != a['steps'][1]:
            fail(f"no section for anomaly {a['id']} at its steps")
        if a['id'] not in boxes:
            fail(f"no 'what to look at next' box for anomaly {a['id']}")
        if a.get('trace') and f'href="{a["trace"]}"' not in html:
            fail(f"anomaly {a['id']}: no link to its trace {a['trace']}")
    # the colour scale and the cells
    hm = svgs['heatmap.svg']
    scale = [g for g in hm.iter(NS + 'g') if g.get('class') == 'colour-scale']
    if len(scale) != 1:
        fail("heatmap.svg has no colour scale")
    lo, hi = float(scale[0].get('data-neutral-lo')), float(scale[0].get('data-neutral-hi'))
    neutral = scale[0].get('data-neutral-fill')
    cells = [g for g in hm.iter(NS + 'g') if g.get('class') == 'cell']
    if len(cells) != rep['job']['ranks']:
        fail(f"heatmap.svg has {len(cells)} cells for {rep['job']['ranks']} ranks")
    if mode == 'clean':
        if rep['anomalies']:
            fail(f"clean run with anomalies: {rep['anomalies']}")
        for g in cells:
            v, fill = float(g.get('data-value')), g.find(NS + 'rect').get('fill')
            if not (lo <= v <= hi) or g.get('data-band') != 'neutral' or fill != neutral:
                fail(f"clean heatmap: rank {g.get('data-rank')} at x{v} ({fill}) is beyond "
                     f"the neutral band [{lo}, {hi}]")
        ab = [float(g.get('data-abs')) for g in cells]
        print(f"clean heatmap: {len(cells)} cells within x[{lo}, {hi}]; absolute values "
              f"{min(ab):.3f}..{max(ab):.3f}")
    else:
        if not rep['anomalies']:
            fail("case run without an anomaly")
        for a in rep['anomalies'][:16]:
            f = svgs.get(f"heatmap-{a['id']}.svg")
            # the sources' own time (compute, host gap, a link's main collective) stands
            # out against their healthy peers
            if f is None or not a['ranks'] or a['kind'] not in (
                    'compute_straggler', 'persistent_imbalance', 'host_stall') and not (
                    a['kind'] == 'comm_degradation' and a['kernels']):
                continue
            for g in f.iter(NS + 'g'):
                if g.get('class') == 'cell' and int(g.get('data-rank')) in a['ranks'] and \
                        g.get('data-band') != 'above':
                    fail(f"heatmap-{a['id']}.svg: source rank {g.get('data-rank')} not above")
    return rep


def check_dom(dom_path, rep):
    tags = parse_html(open(dom_path, encoding='utf-8').read())
    body = [a for t, a in tags if t == 'body']
    if not body or body[0].get('data-probe') != 'done':
        fail(f"{dom_path}: the probe did not run")
    if body[0].get('data-errors'):
        fail(f"page errors: {body[0]['data-errors']}")
    n = 0
    for t, a in tags:
        if t == 'svg':
            n += 1
            if not (float(a.get('data-bw', 0)) > 0 and float(a.get('data-bh', 0)) > 0):
                fail(f"an <svg class={a.get('class')!r}> renders with size "
                     f"{a.get('data-bw')}x{a.get('data-bh')}")
    if n < 3:
        fail(f"only {n} svg elements in the page")
    frame = None
    seen = set()
    for i, (t, a) in enumerate(tags):
        if t == 'svg' and 'steptime' in a.get('class', ''):
            frame = [float(x) for x in a['data-frame'].split()]
        if t == 'g' and a.get('class') == 'anomaly-span' and frame:
            x0, _, w, _, xlo, xhi, _, _ = frame
            rt = tags[i + 1]
            if rt[0] != 'rect' or 'data-bbox' not in rt[1]:
                fail("anomaly span without a measured box")
            bx, _, bw, bh = (float(v) for v in rt[1]['data-bbox'].split())
            s0, s1 = int(a['data-step-start']), int(a['data-step-end'])
            px = lambda s: x0 + w * min(max((s - xlo) / (xhi - xlo), 0), 1)
            if abs(bx - px(s0 - 0.5)) > 1 or abs(bx + bw - max(px(s1 + 0.5), bx + 2)) > 1 or \
                    bh <= 0:
                fail(f"anomaly {a['data-anomaly']} drawn at x {bx:.1f}+{bw:.1f}, steps "
                     f"{s0}-{s1} are at {px(s0 - .5):.1f}-{px(s1 + .5):.1f}")
            seen.add((int(a['data-anomaly']), s0, s1))
    want = {(a['id'], a['steps'][0], a['steps'][1]) for a in rep['anomalies'][:64]}
    if seen != want:
        fail(f"DOM spans {sorted(seen)} != report.json {sorted(want)}")
    print(f"dom: {n} svg rendered, spans {sorted(seen)}")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[2] not in ('case', 'clean'):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rep = check_static(sys.argv[1], sys.argv[2])
    if len(sys.argv) == 4:
        check_dom(sys.argv[3], rep)
    print(f"ok: {sys.argv[1]} ({sys.argv[2]})")


if __name__ == '__main__':
    main()
