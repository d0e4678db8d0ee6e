#!/usr/bin/python3
"""check_signals.py PROGRAM SCOPE_CHECK WORKDIR MODE: a program recording
from a 10 kHz SIGALRM handler while its main loop records nested calls.

For each clock (monotonic, tsc) and the given mode (trace or aggregate):
the file is written, scope-check accepts it (every parent encloses its
children), and every handler call is either in the file or was refused
with SP_ERR_UNSUPPORTED (the handler interrupted a recording call) and
reported at finalize.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

program, check_tool, workdir, mode = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
check = checks.Checks(f"signals {mode}")


def tick_calls(path):
    """The "tick" calls in the file: events in a trace, path counts in
    aggregate mode."""
    with h5py.File(path, "r") as f:
        tick = h5_calls.region_names(f).index("tick")
        idx = f["rank_region_index"]
        rows = [r for r, region in enumerate(idx["region_ids"][:]) if region == tick]
        if mode == "aggregate":
            return sum(int(idx["aggregate_counts"][r]) for r in rows)
        return sum(int(idx["event_counts"][r]) for r in rows)


for clock in ("monotonic", "tsc"):
    out = os.path.join(workdir, f"signals_{mode}_{clock}.h5")
    env = dict(os.environ, SCOPE_PROFILER_CLOCK=clock, SCOPE_PROFILER_MODE=mode)
    p = subprocess.run([program, out, "0.6"], env=env, capture_output=True, text=True,
                       timeout=120)
    print(clock, p.stdout.strip().splitlines()[:1], p.stderr.strip()[-500:])
    check(p.returncode == 0, f"{clock}: exit {p.returncode}")
    m = re.search(r"handler_calls=(\d+) refused=(\d+)", p.stdout)
    check(m is not None, f"{clock}: counts printed")
    if p.returncode != 0 or m is None:
        continue
    calls, refused = int(m.group(1)), int(m.group(2))
    check(calls > 500, f"{clock}: the handler ran ({calls} calls)")
    c = subprocess.run([check_tool, out], capture_output=True, text=True)
    check(c.returncode == 0, f"{clock}: scope-check accepts the file: {c.stdout[-2000:]}")
    recorded = tick_calls(out)
    # two "tick" calls come from the warm-up before the timer started
    check(recorded == calls - refused + 2,
          f"{clock}: tick calls in the file {recorded} == handler calls {calls} - refused "
          f"{refused} + 2")
    # how many are refused depends on the machine's speed (the share of the
    # loop spent inside recording calls): only that some were recorded
    check(refused < calls, f"{clock}: handler calls recorded ({calls - refused} of {calls})")
    if refused:
        check("interrupted" in p.stderr, f"{clock}: refused calls reported at finalize")
check.finish()
