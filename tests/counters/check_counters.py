"""check_counters.py TEST_COUNTERS WORKDIR - the counter groups with h5py
against FORMAT.md 1.7.

Runs test_counters' perf_software and likwid_fake cases into WORKDIR, then
reads rank0/perf_events and rank0/likwid the way the Python package does
and checks types, shapes and the fake back end's known values (the formulas
in c/src/counters/likwid_fake.c). Exit 77 when perf events are not
permitted here (the perf half is then skipped; the LIKWID half still runs).
"""
import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402

check = checks.Checks("counters")


def run(binary, case, workdir):
    d = os.path.join(workdir, case)
    p = subprocess.run([binary, case, d], capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode, d


def vstr_list(attr):
    return [x.decode() if isinstance(x, bytes) else str(x) for x in attr]


def check_perf(path):
    with h5py.File(path, "r") as f:
        check("rank0/perf_events" in f, "rank0/perf_events exists")
        g = f["rank0/perf_events"]
        want = ["busy"] + [f"busy.sample.{i}" for i in range(5)] + ["outer|inner", "touch"]
        check(sorted(g) == want, f"perf regions {sorted(g)}")
        for name in g:
            r = g[name]
            calls = r.attrs["calls"]
            check(np.asarray(calls).dtype == np.int64, f"{name} calls is int64")
            names = vstr_list(r.attrs["event_names"])
            check(names == ["task-clock", "page-faults", "context-switches"],
                  f"{name} event_names {names}")
            t = r.attrs.get_id("event_names").get_type()
            check(isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str(),
                  f"{name} event_names vlen str")
            v = r["values"]
            check(v.dtype == np.dtype("<u8") and v.shape == (len(names),),
                  f"{name} values u8[k] {v.dtype} {v.shape}")
        check(int(g["busy"].attrs["calls"]) == 5, "busy calls")
        check(int(g["touch"]["values"][1]) >= 1024, "touch page faults")
        # Nothing but the documented members under rank0
        check(sorted(f["rank0"]) == ["perf_events"], f"rank0 members {sorted(f['rank0'])}")


def check_likwid(path):
    with h5py.File(path, "r") as f:
        check("rank0/likwid" in f, "rank0/likwid exists")
        g = f["rank0/likwid"]
        check(int(g.attrs["num_regions"]) == 2, "num_regions")
        check(g.attrs.get("LIKWID_TEST_MARKER") in ("from-test", b"from-test"),
              "LIKWID_* env attr")
        regions = g["regions"]
        check(sorted(regions) == ["io|write", "solve"], f"likwid tags {sorted(regions)}")
        expect_calls = {"solve": [5, 0], "io/write": [0, 3]}
        for gname in regions:
            r = regions[gname]
            tag = r.attrs["tag"]
            tag = tag.decode() if isinstance(tag, bytes) else tag
            check(tag == gname.replace("|", "/"), f"tag attr {tag}")
            check(int(r.attrs["group_id"]) == 7, "group_id")
            check(r.attrs["group_name"] in ("FAKE", b"FAKE"), "group_name")
            check(r.attrs["source"] in ("marker_api", b"marker_api"), "source")
            check(vstr_list(r.attrs["event_names"]) == ["FAKE_EV0", "FAKE_EV1"], "event_names")
            check(vstr_list(r.attrs["counter_names"]) == ["PMC0", "PMC1"], "counter_names")
            check(vstr_list(r.attrs["metric_names"]) == ["Runtime (RDTSC) [s]", "FAKE ratio"],
                  "metric_names")
            calls = r["call_counts"][:]
            nt = len(calls)
            check(nt == 2, f"two hardware threads, got {nt}")
            check(r["cpus"].dtype == np.dtype("<i8") and list(r["cpus"][:]) == list(range(nt)),
                  "cpus i8")
            check(r["call_counts"].dtype == np.dtype("<i8"), "call_counts i8")
            check(r["times"].dtype == np.dtype("<f8"), "times f8")
            check(r["events"].dtype == np.dtype("<f8") and r["events"].shape == (2, nt),
                  "events f8[2, nthreads]")
            check(r["metrics"].dtype == np.dtype("<f8") and r["metrics"].shape == (2, nt),
                  "metrics f8[2, nthreads]")
            check(list(calls) == expect_calls[tag], f"{tag} calls {list(calls)}")
            ev = r["events"][:]
            for e in range(2):
                for t in range(nt):
                    check(ev[e, t] == 1000.0 * (e + 1) * calls[t] + t, f"{tag} events[{e},{t}]")
            check(np.allclose(r["times"][:], 0.001 * calls), f"{tag} times")
            check(np.allclose(r["metrics"][0], 0.001 * calls), f"{tag} metric 0")


def main():
    binary, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    rc, d = run(binary, "likwid_fake", workdir)
    check(rc == 0, f"likwid_fake exit {rc}")
    if rc == 0:
        check_likwid(os.path.join(d, "likwid_fake.h5"))
    rc, d = run(binary, "perf_software", workdir)
    skipped = rc == 77
    if not skipped:
        check(rc == 0, f"perf_software exit {rc}")
        if rc == 0:
            check_perf(os.path.join(d, "perf_software.h5"))
    print("h5py: LIKWID (fake back end) checked; perf_events",
          "SKIPPED (not permitted here)" if skipped else "checked")
    if check.failures:
        return 1
    return 77 if skipped else 0


sys.exit(main())
