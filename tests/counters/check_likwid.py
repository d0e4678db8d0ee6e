"""check_likwid.py CASE TEST_COUNTERS SCOPE_INSPECT WORKDIR - LIKWID results
beyond storage, on the fake back end's file (counters/likwid_fake.c):

  inspect  scope-inspect shows the LIKWID tables per rank and group (a known
           metric value appears) and --json has them under stable keys.
  damaged  rank0/likwid groups damaged with h5py (wrong shape of events,
           and more) give SP_ERR_CORRUPT naming the file and the group
           through the public API (test_counters likwid_damaged) and exit 2
           from scope-inspect, never a crash; tolerated variations open.

Known values (calls per hardware thread: solve [5, 0], io/write [0, 3]):
events[e][t] = 1000*(e+1)*calls[t] + t, "FAKE ratio" = events[1]/events[0].
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

case, test_counters, inspect, workdir = sys.argv[1:5]
check = checks.Checks(f"LIKWID {case}")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return p


def make_fake_file():
    d = os.path.join(workdir, "record")
    p = run([test_counters, "likwid_fake", d])
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print(f"FAIL: test_counters likwid_fake exit {p.returncode}")
        sys.exit(1)
    return os.path.join(d, "likwid_fake.h5")


def case_inspect(path):
    p = run([inspect, path])
    check(p.returncode == 0, f"scope-inspect exit {p.returncode}: {p.stderr}")
    text = p.stdout
    print(text)
    check("LIKWID group FAKE (id 7), rank 0" in text, "LIKWID block header")
    lines = text.splitlines()
    ratio = [l for l in lines if l.strip().startswith("FAKE ratio")]
    # io/write on hardware thread 1: 6001/3001 = 1.99967 (%.6g)
    check(any(l.split()[-1] == "1.99967" for l in ratio), f"FAKE ratio 1.99967 in {ratio}")
    check(any("HWThread 0" in l and "HWThread 1" in l for l in lines), "HWThread columns")
    check(any(l.split()[:2] == ["FAKE_EV1", "(PMC1)"] and l.split()[2:] == ["10000", "1"]
              for l in lines), "solve FAKE_EV1 row 10000 1")
    check(text.index("region io/write") < text.index("region solve"), "regions in file order")

    p = run([inspect, "--json", path])
    check(p.returncode == 0, f"scope-inspect --json exit {p.returncode}")
    try:
        doc = json.loads(p.stdout)
    except ValueError as exc:
        check(False, f"--json is not JSON: {exc}")
        return
    counters = doc.get("counters")
    check(isinstance(counters, dict) and sorted(counters) == ["likwid", "perf_events"],
          f"counters keys {counters and sorted(counters)}")
    if not isinstance(counters, dict):
        return
    check(counters["perf_events"] == [], "no perf events in this file")
    lk = counters["likwid"]
    check(len(lk) == 2, f"two LIKWID records, got {len(lk)}")
    keys = ["call_counts", "cpus", "events", "group_id", "group_name", "metrics",
            "num_threads", "rank", "source", "tag", "times"]
    want_calls = {"io/write": [0, 3], "solve": [5, 0]}
    for rec in lk:
        check(sorted(rec) == keys, f"record keys {sorted(rec)}")
        tag = rec.get("tag")
        check(tag in want_calls, f"tag {tag}")
        if tag not in want_calls:
            continue
        calls = want_calls[tag]
        check(rec["rank"] == 0 and rec["group_name"] == "FAKE" and rec["group_id"] == 7
              and rec["source"] == "marker_api" and rec["num_threads"] == 2, f"{tag} header")
        check(rec["cpus"] == [0, 1] and rec["call_counts"] == calls, f"{tag} cpus/calls")
        check(rec["times"] == [0.001 * c for c in calls], f"{tag} times {rec['times']}")
        ev = {e["name"]: e for e in rec["events"]}
        check([e["name"] for e in rec["events"]] == ["FAKE_EV0", "FAKE_EV1"], f"{tag} events")
        check([e["counter"] for e in rec["events"]] == ["PMC0", "PMC1"], f"{tag} counters")
        for k in range(2):
            want = [1000.0 * (k + 1) * c + t for t, c in enumerate(calls)]
            check(ev[f"FAKE_EV{k}"]["values"] == want, f"{tag} FAKE_EV{k} {ev[f'FAKE_EV{k}']}")
        m = {x["name"]: x["values"] for x in rec["metrics"]}
        check(list(m) == ["Runtime (RDTSC) [s]", "FAKE ratio"], f"{tag} metric names {list(m)}")
        ratio = [(ev["FAKE_EV1"]["values"][t] / ev["FAKE_EV0"]["values"][t]) if c else 0.0
                 for t, c in enumerate(calls)]
        check(m.get("FAKE ratio") == ratio, f"{tag} FAKE ratio {m.get('FAKE ratio')} != {ratio}")


def damage(src, name, fn):
    dst = os.path.join(workdir, name + ".h5")
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        fn(f["rank0/likwid/regions/solve"], f["rank0/likwid/regions/io|write"],
           f["rank0/likwid/regions"])
    return dst


def replace(group, name, data):
    del group[name]
    group.create_dataset(name, data=data)


def case_damaged(path):
    variants = {
        # the brief's case: events with the wrong shape
        "events_1d": lambda s, w, r: replace(s, "events", np.zeros(4)),
        "events_threads": lambda s, w, r: replace(s, "events", np.zeros((2, 3))),
        "events_3d": lambda s, w, r: replace(s, "events", np.zeros((2, 2, 1))),
        "events_strings": lambda s, w, r: replace(s, "events", np.array([[b"a", b"b"]] * 2)),
        "metrics_rows": lambda s, w, r: replace(s, "metrics", np.zeros((3, 2))),
        "times_length": lambda s, w, r: replace(s, "times", np.zeros(5)),
        "cpus_missing": lambda s, w, r: s.__delitem__("cpus"),
        "counter_names_length": lambda s, w, r: s.attrs.__setitem__("counter_names", ["PMC0"]),
        "region_not_group": lambda s, w, r: r.create_dataset("stray", data=[1]),
    }
    listing = []
    for name, fn in variants.items():
        listing.append((damage(path, name, fn), "corrupt"))

    def tolerated(s, w, r):
        del w.attrs["tag"]
        del w.attrs["counter_names"]

    listing.append((damage(path, "no_tag_no_counter_names", tolerated), "ok"))
    with open(os.path.join(workdir, "damaged.txt"), "w") as f:
        for file, want in listing:
            f.write(f"{file}\t{want}\n")
    p = run([test_counters, "likwid_damaged", workdir])
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    check(p.returncode == 0, f"test_counters likwid_damaged exit {p.returncode}")
    for file, want in listing:
        for extra in ([], ["--json"]):
            q = run([inspect] + extra + [file])
            check(q.returncode >= 0, f"scope-inspect {extra} {file} died of signal {-q.returncode}")
            if want == "ok":
                check(q.returncode == 0, f"scope-inspect {extra} {file} exit {q.returncode}")
                continue
            check(q.returncode == 2, f"scope-inspect {extra} {file} exit {q.returncode}, want 2")
            check(file in q.stderr and "rank0/likwid/regions/" in q.stderr,
                  f"scope-inspect message names file and group: {q.stderr!r}")
            check("Sanitizer" not in q.stderr and "runtime error" not in q.stderr,
                  f"sanitizer report: {q.stderr}")


os.makedirs(workdir, exist_ok=True)
fake = make_fake_file()
if case == "inspect":
    case_inspect(fake)
elif case == "damaged":
    case_damaged(fake)
else:
    print(f"unknown case {case}")
    sys.exit(2)
check.finish()
