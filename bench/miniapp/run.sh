#!/usr/bin/env bash
# bench/miniapp/run.sh [ROUNDS]: what the default trace costs the main loop
# of a real Fortran MPI code (issue 31: <= 1%).
#
#   heat2d.F90 (a 2D heat solver on a Cartesian process grid: halo exchange
#   with MPI_Irecv/MPI_Isend overlapped with the interior update, a residual
#   MPI_Allreduce every 10 steps, a checkpoint-like reduction every 100) is
#   built three ways against the installed Release build, through pkg-config
#   as a user would:
#     base     every profiler call removed by the preprocessor (no -DSP_PROFILE)
#     default  -DSP_PROFILE, default settings: trace, 256 MiB bound, report
#              and summary printed, file written
#     pmpi     the same linked with libscopeprofiler_pmpi (its MPI calls recorded too)
#   and run with mpirun -np 2 --bind-to core, interleaved (base, default,
#   pmpi for each size, then the next size, ROUNDS times; default 5).
#   Sizes: a large grid (ms steps, ~10^3 region pairs/s a rank), a medium one
#   (~0.2-0.5 ms steps, ~10^4 a second), a small one (~10-20 us steps,
#   ~3x10^5 a second) and a tiny one that stresses the profiler (a few us
#   a step, ~10^6 a second).
#   Each run prints the main loop's time (MPI_Wtime around it, max over
#   ranks), its CPU time, the run from MPI_Init to sp_finalize's end and
#   sp_finalize alone; this script adds the wall time of the whole mpirun.
#   The residual and checksum of every run must be the same as the base
#   run's of its size (the profiler must not change the numbers).
#
#   SP_MINIAPP_PREFIX=DIR uses an installed Release build in DIR instead of
#   building one (bench/release_build.sh) in a temporary directory;
#   SP_MINIAPP_SIZES="NX:NY:STEPS ..." replaces the sizes, SP_MINIAPP_RANKS=N
#   the 2 ranks (1: no rank ever waits for another, so the loop's CPU time
#   is the work alone).
#   Figures measured so far, with their conditions: RESULTS.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
rounds="${1:-5}"
sizes="${SP_MINIAPP_SIZES:-2048:2048:300 512:512:4000 128:128:40000 64:64:100000}"
ranks="${SP_MINIAPP_RANKS:-2}"
work="$(mktemp -d)"
out="${here}/out"
mkdir -p "${out}"
trap 'rm -rf "${work}" "${out}"' EXIT
. "${here}/../release_build.sh"
prefix="${SP_MINIAPP_PREFIX:-}"
if [ -z "${prefix}" ]; then
  release_build "${root}" "${work}"
  prefix="${work}/prefix"
  cmake --install "${work}/build" --prefix "${prefix}" >/dev/null
fi
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
src="${here}/heat2d.F90"
fflags=(-O2 -std=f2008 -Wall -Wextra)
mkdir -p "${work}/mod-base" "${work}/mod-prof"
mpifort "${fflags[@]}" -J"${work}/mod-base" "${src}" -o "${work}/base"
# shellcheck disable=SC2046 # pkg-config's output is a list of words
mpifort "${fflags[@]}" -DSP_PROFILE -J"${work}/mod-prof" "${src}" \
  $(pkg-config --cflags --libs scopeprofiler-fortran) -o "${work}/default"
# The wrappers must come before MPI's Fortran libraries (mpifort adds them last).
# shellcheck disable=SC2046
mpifort "${fflags[@]}" -DSP_PROFILE -J"${work}/mod-prof" "${src}" \
  $(pkg-config --cflags --libs scopeprofiler-fortran) $(pkg-config --libs scopeprofiler-pmpi) \
  -o "${work}/pmpi"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Default settings: nothing of the caller's environment chooses for the profiler.
for var in $(compgen -e | grep '^SCOPE_PROFILER_' || true); do unset "${var}"; done

machine_line
results="${work}/results"
for round in $(seq "${rounds}"); do
  for size in ${sizes}; do
    IFS=: read -r nx ny steps <<<"${size}"
    for variant in base default pmpi; do
      rm -f "${out}/${variant}.h5"
      t0=$(date +%s.%N)
      mpirun -np "${ranks}" --bind-to core "${work}/${variant}" "${nx}" "${ny}" "${steps}" 10 100 \
        "${out}/${variant}.h5" >"${work}/log" 2>&1 || { cat "${work}/log" >&2; exit 1; }
      t1=$(date +%s.%N)
      line=$(grep '^heat2d:' "${work}/log")
      if [ "${variant}" != base ] && [ ! -s "${out}/${variant}.h5" ]; then
        echo "${variant}: no file written" >&2; cat "${work}/log" >&2; exit 1
      fi
      echo "round ${round} variant ${variant} wall_s $(awk -v a="${t0}" -v b="${t1}" 'BEGIN { printf "%.3f", b - a }') ${line}" >>"${results}"
    done
  done
  echo "round ${round} done: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
machine_line
echo "== medians [ranges] over ${rounds} rounds; ratios: profiled / base of the same round"
/usr/bin/python3 - "${results}" <<'PY'
import collections, re, statistics, sys
runs = collections.defaultdict(dict)   # (grid, steps) -> variant -> [(round, fields)]
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+) +(\S+)", line.replace("heat2d:", "")))
    runs[(f["grid"], int(f["steps"]))].setdefault(f["variant"], []).append(f)
bad = 0
def med(v):
    return f"{statistics.median(v):.4g} [{min(v):.4g}, {max(v):.4g}]"
for (grid, steps), by in runs.items():
    base = {r["round"]: r for r in by["base"]}
    loop = statistics.median(float(r["loop_s"]) for r in by["base"])
    pairs = int(by["base"][0]["region_pairs_per_rank"])
    print(f"grid {grid}, {steps} steps: {loop / steps * 1e3:.3f} ms a step (base median), "
          f"{pairs} region pairs a rank = {pairs / loop:,.0f} a second")
    for variant in ("base", "default", "pmpi"):
        rs = by.get(variant, [])
        for r in rs:
            b = base[r["round"]]
            if (r["residual"], r["checksum"]) != (b["residual"], b["checksum"]):
                print(f"  ERROR: {variant} round {r['round']}: residual {r['residual']} checksum "
                      f"{r['checksum']}, base {b['residual']} {b['checksum']}")
                bad += 1
        cols = {k: [float(r[k]) for r in rs] for k in ("loop_s", "loop_cpu_s", "run_s", "finalize_s", "wall_s")}
        line = (f"  {variant:8} loop {med(cols['loop_s'])} s  loop cpu {med(cols['loop_cpu_s'])} s  "
                f"run {med(cols['run_s'])} s  finalize {med(cols['finalize_s'])} s  wall {med(cols['wall_s'])} s")
        print(line)
        if variant != "base":
            for k in ("loop_s", "loop_cpu_s", "wall_s"):
                ratio = [float(r[k]) / float(base[r["round"]][k]) for r in rs]
                print(f"           {k:10} / base: median {statistics.median(ratio):.4f} "
                      f"[{min(ratio):.4f}, {max(ratio):.4f}]  (ratio of the best runs "
                      f"{min(cols[k]) / min(float(b[k]) for b in by['base']):.4f})")
sys.exit(1 if bad else 0)
PY
