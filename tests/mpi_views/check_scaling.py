#!/usr/bin/python3
"""check_scaling.py - scope-diff across rank counts, on synthetic files of
known times (synthetic.py), no MPI needed.

    check_scaling.py SCOPE_DIFF WORKDIR scaling   --scaling over 1, 2, 4 ranks
    check_scaling.py SCOPE_DIFF WORKDIR ranks     BASE NEW on 1 and 4 ranks

Strong-scaling runs (every rank of a run has the same rows):
    solve   10 calls of 4 ms / 2 ms / 1.25 ms per rank (+-1 us): T = 40, 20,
            12.5 ms: speedup 2, 3.2; efficiency 1.0, 0.8; an improvement
    comm    10 calls of 0.1 / 0.2 / 0.4 ms: T = 1, 2, 4 ms: efficiency 0.25,
            0.0625; a regression
    setup   10 calls of 0.5 ms in every run: speedup 1, efficiency 0.5,
            0.25; unchanged
    jitter  10 calls alternating 0.1 ms / 2 ms, 10% slower on 2 and 4 ranks:
            beyond the 5% threshold but within noise (Welch |t| < 2)
Exit 0 pass, 1 fail, 77 skip (h5py missing).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

needs.h5py()
import synthetic  # noqa: E402  (after the skip: it needs h5py)

diff, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
NAMES = ["solve", "comm", "setup", "jitter"]
PER_CALL = {  # ranks -> region -> (base duration ns, +- spread ns)
    1: {"solve": (4_000_000, 1000), "comm": (100_000, 100), "setup": (500_000, 100)},
    2: {"solve": (2_000_000, 1000), "comm": (200_000, 100), "setup": (500_000, 100)},
    4: {"solve": (1_250_000, 1000), "comm": (400_000, 100), "setup": (500_000, 100)},
}
CALLS = 10


def durations(ranks, name):
    if name == "jitter":
        scale = 1.0 if ranks == 1 else 1.1
        return [int((100_000 if i % 2 else 2_000_000) * scale) for i in range(CALLS)]
    base, spread = PER_CALL[ranks][name]
    return [base - spread if i % 2 else base + spread for i in range(CALLS)]


def make(ranks):
    path = os.path.join(work, f"run{ranks}.h5")
    rows = []
    for rank in range(ranks):
        t = 1_000_000_000
        for region, name in enumerate(NAMES):
            d = durations(ranks, name)
            starts = []
            for x in d:
                starts.append(t)
                t += x + 10
            rows.append({"region": region, "rank": rank, "starts": starts, "durations": d})
    synthetic.write(path, NAMES, rows, mpi_size=ranks)
    return path


def per_rank_time(ranks, name):
    return sum(durations(ranks, name)) / 1e9  # every rank the same: the mean is one rank's


check = checks.Checks("check_scaling")


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def run(*argv):
    p = subprocess.run([diff, *argv], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
    return p


runs = {r: make(r) for r in (1, 2, 4)}
if case == "scaling":
    for weak in (False, True):
        p = run("--scaling", *(["--weak"] if weak else []), "--json", runs[1], runs[2], runs[4])
        check(p.returncode == 0, f"--scaling{' --weak' if weak else ''} exits 0")
        doc = json.loads(p.stdout)
        check(doc["scaling"] == ("weak" if weak else "strong"), "the kind of scaling is named")
        check([r["ranks"] for r in doc["runs"]] == [1, 2, 4], f"rank counts {doc['runs']}")
        regions = {r["name"]: r["runs"] for r in doc["regions"]}
        check(sorted(regions) == sorted(NAMES), f"regions {sorted(regions)}")
        for name in NAMES:
            t1 = per_rank_time(1, name)
            for k, ranks in enumerate((1, 2, 4)):
                cell = regions[name][k]
                tk = per_rank_time(ranks, name)
                ratio = t1 / tk
                speedup = ratio * ranks if weak else ratio
                eff = ratio if weak else ratio / ranks
                check(close(cell["time"], tk), f"{name} run {k + 1}: time {cell['time']} == {tk}")
                check(close(cell["speedup"], speedup),
                      f"{name} run {k + 1}: speedup {cell['speedup']} == {speedup}")
                check(close(cell["efficiency"], eff),
                      f"{name} run {k + 1}: efficiency {cell['efficiency']} == {eff}")
        expect = {"solve": "improvement", "comm": "regression", "setup": "unchanged",
                  "jitter": "within_noise"}
        for name, status in expect.items():
            got = [c["status"] for c in regions[name]]
            check(got == ["reference", status, status], f"{name} statuses {got}")
    text = run("--scaling", runs[1], runs[2], runs[4])
    check(text.returncode == 0, "--scaling (text) exits 0")
    lines = [l.split() for l in text.stdout.splitlines()]
    solve4 = [l for l in lines if l[:3] == ["solve", "3", "4"]]
    check(solve4 and solve4[0][3:6] == ["0.012500", "3.200", "80.0%"] and
          solve4[0][6] == "improvement", f"text line of solve on 4 ranks: {solve4}")
    check("strong" in text.stdout and "efficiency T_1/T_k * P_1/P_k" in text.stdout,
          "the text names the formula")
    usage = run("--scaling", runs[1])
    check(usage.returncode == 1, "--scaling with one run is a usage error")
elif case == "ranks":
    p = run("--json", runs[1], runs[4])
    check(p.returncode == 0, "BASE NEW on 1 and 4 ranks exits 0")
    doc = json.loads(p.stdout)
    check(doc["ranks_base"] == 1 and doc["ranks_new"] == 4 and doc["sums"] == "per_rank_mean",
          f"per-rank means by default: {doc['ranks_base']}, {doc['ranks_new']}, {doc['sums']}")
    regions = {r["name"]: r for r in doc["regions"]}
    check(close(regions["solve"]["base"], 0.04) and close(regions["solve"]["new"], 0.0125),
          f"solve per rank 0.04 -> 0.0125: {regions['solve']['base']} -> {regions['solve']['new']}")
    check(regions["solve"]["status"] == "improvement", "solve per rank improved")
    check(regions["setup"]["status"] == "unchanged", "setup per rank unchanged")
    p = run("--json", "--sum", runs[1], runs[4])
    doc = json.loads(p.stdout)
    regions = {r["name"]: r for r in doc["regions"]}
    check(doc["sums"] == "summed", "--sum compares the summed totals")
    check(close(regions["solve"]["new"], 0.05), f"solve summed over 4 ranks: {regions['solve']['new']}")
    check(regions["setup"]["status"] == "regression", "setup summed: 4x the CPU time")
    text = run(runs[1], runs[4])
    check("Ranks:     1 -> 4: sums (total, exclusive, calls) compared as per-rank means" in
          text.stdout, "the text says the sums are per-rank means")
    same = run(runs[2], runs[2])
    check("Ranks:" not in same.stdout, "equal rank counts: no rank line")
    calls = run("--json", "--metric", "calls", runs[1], runs[4])
    rows = {r["name"]: r for r in json.loads(calls.stdout)["regions"]}
    check(rows["solve"]["base"] == 10 and rows["solve"]["new"] == 10,
          f"calls per rank: {rows['solve']['base']} -> {rows['solve']['new']}")
else:
    print(f"unknown case {case}")
    sys.exit(1)

if check.failures:
    check.finish()
print("ok")
