"""check_mpi_perf.py MPIEXEC PROGRAM TEST_COUNTERS WORKDIR - an MPI job
(mpi_perf.c, 2 ranks) with perf events stores rank0/perf_events AND
rank1/perf_events with the right calls; checked with h5py (FORMAT.md 1.7)
and with our reader (test_counters mpi_perf_read).

PROGRAM is "NO_MPI" when the build has no MPI: exit 77. Exit 77 too when
perf events are not permitted here (mpi_perf prints "SKIP: ...").
"""
import os
import shutil
import subprocess
import sys

mpiexec, program, test_counters, workdir = sys.argv[1:5]
inspect = sys.argv[5] if len(sys.argv) > 5 else None
if program == "NO_MPI" or not mpiexec or mpiexec.endswith("NOTFOUND"):
    print("SKIP: this build has no MPI")
    sys.exit(77)
try:
    import h5py
    import numpy as np
except ImportError as exc:
    print(f"SKIP: {exc}")
    sys.exit(77)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
out = os.path.join(workdir, "mpi_perf.h5")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")
# Open MPI keeps allocations from MPI_Init alive past exit by design; under
# AddressSanitizer those would fail the run as leaks that are not ours.
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
cmd = [mpiexec, "--oversubscribe", "-np", "2", program, out]
run = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=150)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
if "SKIP:" in run.stdout:
    sys.exit(77)
check(run.returncode == 0, f"mpirun exit code {run.returncode}")
check(os.path.exists(out), "the job's file exists")
if failures:
    sys.exit(1)

EVENTS = ["task-clock", "page-faults"]
with h5py.File(out, "r") as f:
    for rank in (0, 1):
        path = f"rank{rank}/perf_events"
        check(path in f, f"{path} exists")
        if path not in f:
            continue
        g = f[path]
        want = {"work": 2 * (rank + 1), f"rank.{rank}": rank + 1}
        check(sorted(g) == sorted(want), f"{path} regions {sorted(g)}, want {sorted(want)}")
        for region, calls in want.items():
            if region not in g:
                continue
            r = g[region]
            check(np.asarray(r.attrs["calls"]).dtype == np.int64, f"{path}/{region} calls i8")
            check(int(r.attrs["calls"]) == calls,
                  f"{path}/{region} calls {int(r.attrs['calls'])}, want {calls}")
            names = [x.decode() if isinstance(x, bytes) else str(x) for x in r.attrs["event_names"]]
            check(names == EVENTS, f"{path}/{region} event_names {names}")
            v = r["values"]
            check(v.dtype == np.dtype("<u8") and v.shape == (2,),
                  f"{path}/{region} values u8[2]: {v.dtype} {v.shape}")
            if region == "work":
                # 1 ms of busy CPU per call: task-clock is at least half of it.
                check(int(v[0]) >= 500_000 * calls, f"{path}/work task-clock {int(v[0])} ns")
    check("rank2" not in f, "no rank2 group in a 2-rank job")

rd = subprocess.run([test_counters, "mpi_perf_read", workdir], capture_output=True, text=True)
sys.stdout.write(rd.stdout)
sys.stderr.write(rd.stderr)
check(rd.returncode == 0, f"our reader: test_counters mpi_perf_read exit {rd.returncode}")
# scope-inspect --ranks selects the counter records too, in text and JSON.
if inspect:
    import json
    for chosen in (0, 1):
        js = subprocess.run([inspect, "--json", "--ranks", str(chosen), out],
                            capture_output=True, text=True)
        check(js.returncode == 0, f"scope-inspect --json --ranks {chosen}: {js.stderr.strip()}")
        if js.returncode == 0:
            records = json.loads(js.stdout)["counters"]["perf_events"]
            ranks = sorted({r["rank"] for r in records})
            check(ranks == [chosen], f"--ranks {chosen}: perf records of ranks {ranks}")
            check(sorted(r["region"] for r in records) == sorted(["work", f"rank.{chosen}"]),
                  f"--ranks {chosen}: regions {[r['region'] for r in records]}")
        txt = subprocess.run([inspect, "--ascii", "--ranks", str(chosen), out],
                             capture_output=True, text=True)
        other = 1 - chosen
        check(f"perf events, rank {chosen}" in txt.stdout and
              f"perf events, rank {other}" not in txt.stdout,
              f"text tables show rank {chosen} only")
print("MPI perf events: rank0 and rank1 checked with h5py and our reader")
sys.exit(1 if failures else 0)
