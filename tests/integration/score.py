#!/usr/bin/env python3
"""score.py REPORT_JSON TRUTH_JSON — exit 0 when the report names every injected fault
exactly (source ranks equal, an accepted kind, overlapping steps) and no anomaly blames a
rank that was not injected; prints one line per finding. A clean truth (no injections)
requires "anomalies": []."""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def overlap(a, b):
    return a[0] <= b[1] and b[0] <= a[1]


def main():
    report, truth = load(sys.argv[1]), load(sys.argv[2])
    anomalies = report["anomalies"]
    inj = [i for i in truth["injections"] if i["kind"] != "crash"]
    ok = True
    if not inj and anomalies:
        print("clean run but report has anomalies:", json.dumps(anomalies))
        return 1
    injected_ranks = set()
    for i in inj:
        injected_ranks.update(i["ranks"])
        match = [a for a in anomalies
                 if a["kind"] in i["accepted_kinds"] and sorted(a["ranks"]) == sorted(i["ranks"])
                 and overlap(a["steps"], i["steps"])]
        if match:
            a = match[0]
            print(f"found {i['kind']} ranks={i['ranks']} steps={i['steps']} as "
                  f"{a['kind']} steps={a['steps']} phase={a.get('phase')} slowdown={a.get('slowdown')}")
        else:
            print(f"MISSED {i['kind']} ranks={i['ranks']} steps={i['steps']}; report has:",
                  json.dumps([{k: a.get(k) for k in ('kind', 'ranks', 'steps', 'victims')}
                              for a in anomalies]))
            ok = False
    for a in anomalies:
        wrong = set(a["ranks"]) - injected_ranks
        if wrong:
            print(f"WRONG: anomaly {a['id']} {a['kind']} blames ranks {sorted(wrong)} "
                  f"that were not injected")
            ok = False
        if set(a.get("victims", [])) & set(a["ranks"]):
            print(f"WRONG: anomaly {a['id']} lists a rank as both source and victim")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
