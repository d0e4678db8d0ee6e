"""Compare what the C reader reports for a fixture with the Python package's
expected/<name>.summary.json: per (region, rank) call counts and total ns,
and num_ranks. Nothing is hard-coded; the JSON is the oracle.

Usage: check_expected.py READER_TEST DATA_DIR NAME
NAME is e.g. driver-serial (file driver/serial.h5, JSON
expected/driver-serial.summary.json). The file is read twice: fully, and
summary-only when it can give a summary (the totals must agree either way).
"""
import json
import os
import subprocess
import sys

reader, data, name = sys.argv[1:4]
folder, stem = name.split("-", 1)
path = os.path.join(data, folder, stem + ".h5")
with open(os.path.join(data, "expected", name + ".summary.json")) as fh:
    expected = json.load(fh)

want = {}
for region, ranks in expected["per_rank"].items():
    for rank, values in ranks.items():
        want[(region, int(rank))] = (values["num_calls"], values["total_ns"])
# Region totals over ranks, in ns. For the aggregate layout the package's
# per_rank total_ns is 0 (it sums absent events) while the region total is
# the stored aggregate total, so totals are checked at region level there.
region_total_ns = {r["name"]: round(r["total_duration"] * 1e9) for r in expected["regions"]}

failures = 0


def check(mode):
    global failures
    args = [reader, "dump", path] + ([mode] if mode else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    if lines and lines[0].startswith("error "):
        if mode == "summary" and "SP_ERR_NO_SUMMARY" in lines[0]:
            print(f"{name}: no summary-only read ({lines[0]})")
            return
        print(f"{name} [{mode or 'full'}]: {lines[0]}")
        failures += 1
        return
    got = {}
    num_ranks = None
    aggregate = False
    for line in lines:
        if line.startswith("num_ranks "):
            num_ranks = int(line.split()[1])
        elif line.startswith("aggregate "):
            aggregate = line.split()[1] == "1"
        elif line.startswith("row "):
            _, rank, calls, total, region = line.split(" ", 4)
            got[(region, int(rank))] = (int(calls), int(total))
    # Rows with zero calls are optional in a file; the JSON lists them too.
    for key, value in want.items():
        if value[0] == 0 and key not in got:
            got[key] = value
    sums = {}
    for (region, _), (_, total) in got.items():
        sums[region] = sums.get(region, 0) + total
    for region, total in region_total_ns.items():
        if sums.get(region, 0) != total:
            print(f"{name} [{mode or 'full'}] region {region}: total {sums.get(region, 0)} ns, expected {total}")
            failures += 1
    if aggregate:
        got = {key: (calls, 0) for key, (calls, _) in got.items()}
    if got != want:
        for key in sorted(set(got) | set(want)):
            if got.get(key) != want.get(key):
                print(f"{name} [{mode or 'full'}] {key}: got {got.get(key)}, expected {want.get(key)}")
        failures += 1
    if num_ranks != expected["num_ranks"]:
        print(f"{name} [{mode or 'full'}]: num_ranks {num_ranks}, expected {expected['num_ranks']}")
        failures += 1


check(None)
check("summary")
print(f"{name}: {len(want)} (region, rank) pairs checked, {failures} failure(s)")
sys.exit(1 if failures else 0)
