"""check_mpi_perf.py MPIEXEC PROGRAM TEST_COUNTERS WORKDIR - an MPI job
(mpi_perf.c, 2 ranks) with perf events stores rank0/perf_events AND
rank1/perf_events with the right calls; checked with h5py (FORMAT.md 1.7)
and with our reader (test_counters mpi_perf_read).

PROGRAM is "NO_MPI" when the build has no MPI: exit 77. Exit 77 too when
perf events are not permitted here (mpi_perf prints "SKIP: ...").
"""
import os
import subprocess
import sys

mpiexec, program, test_counters, workdir = sys.argv[1:5]
inspect = sys.argv[5] if len(sys.argv) > 5 else None
if program == "NO_MPI" or not mpiexec or mpiexec.endswith("NOTFOUND"):
    print("SKIP: this build has no MPI")
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

check = checks.Checks("MPI perf events")
outputs.fresh_workdir(workdir)
out = os.path.join(workdir, "mpi_perf.h5")
env = mpi_job.job_env()
run = mpi_job.run(mpi_job.launch(mpiexec, 2, (), [program, out]), workdir, env)
if "SKIP:" in run.stdout:
    sys.exit(needs.SKIP)
check(run.returncode == 0, f"mpirun exit code {run.returncode}")
check(os.path.exists(out), "the job's file exists")
if check.failures:
    check.finish()

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
check.finish()
