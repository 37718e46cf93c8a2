#!/usr/bin/python3
"""robust.py ANALYZE WORKDIR — the robustness pass over argus-analyze's Kineto and
steps.csv importers (tests/fuzz/t_robust.sh runs it from `make check`).

For each kind of hostile input (long strings, long keys, long numbers, deep nesting, huge
numbers, huge rank ids, many tiny events, many distinct names, truncated files, long CSV
lines, many CSV rows, CSV rows of absurd values and ranks) it writes the input at size N
and at 4N, runs argus-analyze on each under a memory limit (RLIMIT_AS, MEM_MB) and a
timeout, and checks:
  - no crash: the exit status is 0 or 1 (analysed, or nothing analysable), never a signal,
    and stderr has no sanitizer or assertion report; an input holding good steps beside
    the hostile part is analysed (exit 0);
  - bounded memory: it finishes under the limit (a limit hit is a failure like a crash);
  - linear time: CPU time (user + sys) at 4N is under RATIO times that at N (4x the input:
    linear is ~4x, quadratic ~16x). The smaller time is floored at FLOOR seconds so that
    noise on tiny runs cannot fail it; no absolute time is asserted.
Exit 0 when every kind passes, 1 otherwise (each failure is one line).
"""
import gzip
import os
import resource
import subprocess
import sys

MEM_MB = 1024
TIMEOUT = 60
RATIO = 8.0
FLOOR = 0.05

STEP = '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","ts":%d,"dur":900},'
KERN = ('{"ph":"X","cat":"kernel","name":"%s","ts":%d,"dur":%s,'
        '"args":{"stream":7,"device":0,"correlation":%d}},')


def head(rank=0):
    return '{"distributedInfo":{"rank":%d,"world_size":%d},"traceEvents":[' % (rank, rank + 1)


def steps(k=4):
    return "".join(STEP % (s, 1000 + 1000 * s) for s in range(k))


def tail():
    return STEP % (99, 99000) + '{"ph":"M","name":"x"}]}'


# Each generator returns (file name, bytes) for a size parameter n (about n bytes).
def k_long_name(n):
    return "name.json", head() + steps() + KERN % ("a" * n, 1010, "5", 1) + tail()


def k_long_escaped(n):
    body = "\\u00e9\\\"x" * (n // 9)  # escapes all the way: a cut must not split one
    return "esc.json", head() + steps() + KERN % (body, 1010, "5", 1) + tail()


def k_long_utf8(n):
    return "utf8.json", head() + steps() + KERN % ("\u00e9\u4e2d" * (n // 5), 1010, "5", 1) \
        + tail()


def k_long_key(n):
    return "key.json", head() + steps() + '{"' + "k" * n + '":1},' + tail()


def k_long_number(n):
    return "num.json", head() + steps() + KERN % ("k", 1010, "1" + "0" * n, 1) + tail()


def k_long_fraction(n):
    return "frac.json", head() + steps() + KERN % ("k", 1010, "0." + "0" * n + "1", 1) \
        + tail()


def k_huge_numbers(n):
    ev = "".join(KERN % ("k", 1010 + i, "1e308", i + 1) for i in range(n // 90))
    return "huge.json", head() + steps() + ev + tail()


def k_bad_durations(n):
    ev = "".join(KERN % ("k", 1010 + i, "-5" if i % 2 else "1e30", i + 1)
                 for i in range(n // 90))
    return "durs.json", head() + steps() + ev + tail()


def k_deep_nesting(n):
    return "deep.json", head() + steps() + "[" * n + "]" * n + "," + tail()


def k_many_events(n):
    ev = "".join(KERN % ("k%d" % (i % 7), 1010 + (i % 3000), "1", i + 1)
                 for i in range(n // 95))
    return "many.json", head() + steps() + ev + tail()


def k_many_names(n):
    ev = "".join(KERN % ("kernel_%d" % i, 1010 + (i % 3000), "1", i + 1)
                 for i in range(n // 100))
    return "names.json", head() + steps() + ev + tail()


def k_huge_rank(n):
    return "rank.json", head(2 ** 31 - 2) + steps() + "[" * (n // 1000) + "]" * (n // 1000) \
        + "," + tail()


def k_truncated(n):
    ev = "".join(KERN % ("k", 1010 + (i % 3000), "1", i + 1) for i in range(n // 90))
    text = head() + steps() + ev + tail()
    return "cut.json", text[: len(text) * 2 // 3]


def k_gzip_name(n):
    return "name.json.gz", gzip.compress((head() + steps() + KERN % ("b" * n, 1010, "5", 1)
                                          + tail()).encode(), 6)


CSV_HEAD = "step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms\n"


def row(step, rank, wall=100000000):
    s = 1700000000000000000 + step * 200000000
    return "%d,%d,%d,%d,30,50,10,5,1\n" % (step, rank, s, s + wall)


def c_many_rows(n):
    k = n // 60
    return "rows.csv", CSV_HEAD + "".join(row(i // 8, i % 8) for i in range(k))


def c_long_line(n):
    return "line.csv", CSV_HEAD + row(0, 0) + "1," * (n // 2) + "\n" + row(1, 0)


def c_huge_ranks(n):
    k = n // 60  # rank ids in the millions (below 2^24) and beyond 2^32
    return "ranks.csv", CSV_HEAD + row(0, 0) + "".join(
        row(i, 4000000 + i % 1000 if i % 2 else 2 ** 32 + i) for i in range(1, k))


def c_absurd(n):
    k = n // 80
    bad = "%d,1,1700000000000000000,100000000000000000000000,1,1,1,1,1e300\n"
    return "absurd.csv", CSV_HEAD + row(0, 0) + "".join(bad % i for i in range(k))


def c_duplicates(n):
    k = n // 60
    return "dups.csv", CSV_HEAD + "".join(row(i % 5, 0) for i in range(k))


def c_truncated(n):
    text = c_many_rows(n)[1]
    return "cut.csv", text[: len(text) * 2 // 3 + 7]


# (generator, N in bytes, exit status wanted: 0 analysed, 1 nothing analysable, None
# either): N makes the larger run take a fraction of a second. Inputs that hold good
# steps beside the hostile part must still be analysed.
KINDS = [
    (k_long_name, 4 << 20, 0), (k_long_escaped, 2 << 20, 0), (k_long_utf8, 2 << 20, 0),
    (k_long_key, 4 << 20, 0), (k_long_number, 4 << 20, 0), (k_long_fraction, 4 << 20, 0),
    (k_huge_numbers, 1 << 20, 0), (k_bad_durations, 1 << 20, 0), (k_deep_nesting, 1 << 20, 1),
    (k_many_events, 2 << 20, 0), (k_many_names, 1 << 20, 0), (k_huge_rank, 1 << 20, 1),
    (k_truncated, 1 << 20, 1), (k_gzip_name, 4 << 20, 0),
    (c_many_rows, 1 << 20, 0), (c_long_line, 2 << 20, 0), (c_huge_ranks, 1 << 20, 0),
    (c_absurd, 1 << 20, 0), (c_duplicates, 1 << 20, 0), (c_truncated, 1 << 20, 0),
]


def limit():
    lim = MEM_MB << 20
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(analyze, work, name, data):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    out = os.path.join(work, "out-" + name)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run([analyze, "-o", out, path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, preexec_fn=limit, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT, 0.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    err = p.stderr.decode(errors="replace")
    os.unlink(path)
    subprocess.run(["rm", "-rf", out])
    return p.returncode, err, cpu


def main():
    analyze, work = sys.argv[1], sys.argv[2]
    fails = 0
    for gen, n, want in KINDS:
        times = []
        for size in (n, 4 * n):
            name, data = gen(size)
            best = None
            for _ in range(2 if size == n else 1):  # the small run twice: its minimum
                rc, err, cpu = run(analyze, work, name, data)
                if rc is None or rc not in (0, 1) or (want is not None and rc != want) or \
                        "Sanitizer" in err or "Assertion" in err:
                    print("FAIL %s at %d bytes: exit %s: %s" % (gen.__name__, len(data), rc,
                                                                err.strip()[-300:]))
                    fails += 1
                    best = None
                    break
                best = cpu if best is None else min(best, cpu)
            if best is None:
                break
            times.append(best)
        if len(times) != 2:
            continue
        ratio = times[1] / max(times[0], FLOOR)
        ok = ratio < RATIO
        print("%s %s: %.3f s at N, %.3f s at 4N, ratio %.1f (bound %.0f)" %
              ("ok  " if ok else "FAIL", gen.__name__, times[0], times[1], ratio, RATIO))
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
