#!/usr/bin/python3
"""The Fortran MPI mini-app of bench/miniapp (heat2d.F90) on 2 ranks for a
few steps: one file for the job with both ranks, every rank's regions
called as often as the loop says (solve once, 7 per-step regions, the
residual and checkpoint at their intervals), each under its parent
(timestep under solve, the phases under timestep); and the same residual
and checksum as the build with every profiler call removed, which writes
no file.

    miniapp_check.py MPIEXEC PROFILED BASE WORKDIR

Exit 0 pass, 1 fail, 77 skip (no h5py)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

needs.h5py()
import h5_calls  # noqa: E402  (needs h5py)

mpiexec, profiled, base, work = sys.argv[1:5]
STEPS, RESIDUAL_EVERY, CHECKPOINT_EVERY = 30, 10, 15
PHASES = ("halo_post", "interior", "halo_wait", "boundary")
check = checks.Checks("miniapp")
env = mpi_job.job_env(drop=[v for v in os.environ if v.startswith("SCOPE_PROFILER_")],
                      SCOPE_PROFILER_QUIET="1")


def run(program, sub):
    """Runs the mini-app on 2 ranks in WORKDIR/sub; its rank 0 line as a dict."""
    workdir = os.path.join(work, sub)
    outputs.fresh_workdir(workdir)
    args = [program, "40", "24", str(STEPS), str(RESIDUAL_EVERY), str(CHECKPOINT_EVERY), "job.h5"]
    done = mpi_job.run(mpi_job.launch(mpiexec, 2, ["SCOPE_PROFILER_QUIET"], args), workdir, env,
                       what=f"the {sub} mini-app")
    check(done.returncode == 0, f"{sub}: exit {done.returncode}")
    line = next((l for l in done.stdout.splitlines() if l.startswith("heat2d:")), "")
    check(line, f"{sub}: no 'heat2d:' line on stdout")
    return workdir, dict(re.findall(r"(\w+) +(\S+)", line.replace("heat2d:", "")))


base_dir, base_line = run(base, "base")
check(outputs.files_in(base_dir) == [], f"the base build wrote {outputs.files_in(base_dir)}")
prof_dir, prof_line = run(profiled, "profiled")
for key in ("residual", "checksum"):
    check(base_line.get(key) is not None and prof_line.get(key) == base_line.get(key),
          f"{key}: profiled {prof_line.get(key)}, base {base_line.get(key)}")

path = os.path.join(prof_dir, "job.h5")
if check(os.path.exists(path), "the profiled run wrote no job.h5"):
    calls = h5_calls.read_calls(path)
    want = {"solve": 1, "timestep": STEPS, "residual": STEPS // RESIDUAL_EVERY,
            "checkpoint": STEPS // CHECKPOINT_EVERY}
    want.update({phase: STEPS for phase in PHASES})
    by_id = {(c["rank"], c["id"]): c for c in calls}
    for rank in (0, 1):
        mine = [c for c in calls if c["rank"] == rank]
        got = {}
        for c in mine:
            got[c["region"]] = got.get(c["region"], 0) + 1
        check(got == want, f"rank {rank}: calls per region {got}, expected {want}")
        parents = {"solve": None, "timestep": "solve"}
        parents.update({r: "timestep" for r in PHASES + ("residual", "checkpoint")})
        wrong = []
        for c in mine:
            parent = by_id.get((rank, c["parent"])) if c["parent"] not in (None, -1) else None
            if (parent["region"] if parent else None) != parents.get(c["region"], "?"):
                wrong.append((c["region"], parent["region"] if parent else None))
        check(not wrong, f"rank {rank}: calls under the wrong parent (region, parent): {sorted(set(wrong))}")
check.finish()
