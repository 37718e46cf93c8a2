"""check_stacks.py — judge a job's host call stacks (tests/stacks/t_python.sh, t_native.sh).

    check_stacks.py DIR stall python|native RANK FUNC [FILE LINE]
        the host_stall of RANK carries stacks whose top source stack of that kind is in FUNC
        (Python: the innermost frame is FUNC at FILE:LINE; native: a frame of FUNC), beside
        the healthy peers' stacks of the same moments (elsewhere), and stacks.folded has it
    check_stacks.py DIR healthy
        no anomaly carries stacks and there is no stacks.folded
    check_stacks.py DIR owned RANK
        the host_stall of RANK is there, without stacks, and there is no stacks.folded
"""
import json
import os
import sys


def main():
    d, mode = sys.argv[1], sys.argv[2]
    r = json.load(open(os.path.join(d, "report.json")))
    folded = os.path.join(d, "stacks.folded")
    kinds = [(a["kind"], a["ranks"], a["steps"]) for a in r["anomalies"]]
    print("anomalies:", kinds)
    if mode == "healthy":
        with_stacks = [a["id"] for a in r["anomalies"] if "stacks" in a]
        assert not with_stacks, "anomalies %s carry stacks in a healthy run" % with_stacks
        assert not os.path.exists(folded), "a healthy run wrote stacks.folded"
        print("healthy: no stacks")
        return
    if mode == "owned":
        rank = int(sys.argv[3])
        stalls = [a for a in r["anomalies"] if a["kind"] == "host_stall" and a["ranks"] == [rank]]
        assert stalls, "no host_stall of rank %d: %s" % (rank, kinds)
        assert all("stacks" not in a for a in r["anomalies"]), "stacks despite the signal"
        assert not os.path.exists(folded), "stacks.folded despite the signal"
        print("owned: host_stall without stacks")
        return
    lang, rank, func = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    stalls = [a for a in r["anomalies"] if a["kind"] == "host_stall" and a["ranks"] == [rank]]
    assert stalls, "no host_stall of rank %d: %s" % (rank, kinds)
    a = stalls[0]
    assert "stacks" in a, "the host_stall has no stacks: %s" % a
    st = a["stacks"]
    src = st[lang]["sources"]
    assert src["samples"] >= 3 and src["ranks"] == 1, src
    top = src["top"][0]
    print("top %s stack: %d of %d samples: %s" % (lang, top["samples"], src["samples"],
                                                 " <- ".join(reversed(top["frames"]))))
    print("sample cost on the training thread: mean %.3f ms, max %.3f ms"
          % (st["sample_cost_ms"]["mean"], st["sample_cost_ms"]["max"]))
    assert st["sample_cost_ms"]["mean"] <= 1.0, st["sample_cost_ms"]
    if lang == "python":
        leaf = top["leaf"]
        want_file, want_line = sys.argv[6], int(sys.argv[7])
        assert leaf["function"] == func, leaf
        assert leaf["file"].endswith(want_file), leaf
        assert leaf["line"] == want_line, leaf
        assert st[lang]["differ"][0].startswith(func + " ("), st[lang]["differ"]
    else:
        assert any(f.startswith(func + " (") for f in top["frames"]), top["frames"]
    assert top["samples"] * 2 > src["samples"], "the stalled function is not most samples"
    # the healthy peers rank 0 asked at the same moments, beside them, elsewhere
    peers = st[lang]["peers"]
    print("peers: %d samples of %d ranks; top: %s" % (
        peers["samples"], peers["ranks"],
        " <- ".join(reversed(peers["top"][0]["frames"])) if peers["top"] else "-"))
    assert peers["samples"] >= 1 and peers["ranks"] >= 1, peers
    assert peers["top"][0]["frames"][-1] != top["frames"][-1], peers  # elsewhere
    text = open(folded).read()
    lines = [ln for ln in text.splitlines() if ln.startswith("anomaly %d " % a["id"])]
    assert any(func + " (" in ln for ln in lines), text[:2000]
    for ln in text.splitlines():  # flamegraph.pl's folded format: frames, a space, a count
        frames, _, count = ln.rpartition(" ")
        assert frames and int(count) > 0, ln
    print("stall: ok")


if __name__ == "__main__":
    main()
