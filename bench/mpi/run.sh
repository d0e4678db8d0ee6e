#!/usr/bin/env bash
# bench/mpi/run.sh BUILD_DIR [CALLS_PER_RANK] [REPEATS]: the collective
# finalize at np = 1, 2, 4, 8 (oversubscribed on a small machine) with both
# writers, at a fixed number of calls per rank (default 1,000,000), each
# point REPEATS times (default 3; report the median). In a parallel-HDF5
# build "default" is the collective writer and "funnel" is forced through
# SCOPE_PROFILER_MPI_WRITER=funnel; in a serial-HDF5 build both lines are
# the funnel. The goals (issue 15): with the collective writer, rank 0's
# peak RSS does not grow with np, and at np 8 finalize is no slower than
# the funnel. Default settings: the report and the summary are printed on
# rank 0 (only the figures' line is kept); SP_BENCH_QUIET=1 measures the
# run without them. docs/SCALING.md turns these figures into a model.
set -euo pipefail
build="${1:?usage: bench/mpi/run.sh BUILD_DIR [CALLS_PER_RANK] [REPEATS]}"
calls="${2:-1000000}"
repeats="${3:-3}"
exe="${build}/bench/mpi/sp_bench_mpi_finalize"
[ -x "${exe}" ] || { echo "build ${exe} first (an MPI build)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
echo "== ${calls} calls per rank, ${repeats} runs per point; $(nproc) cores; output on $(df -P "${work}" | awk 'NR==2{print $1}')"
for np in 1 2 4 8; do
  for writer in funnel default; do
    for _ in $(seq "${repeats}"); do
      rm -f "${work}/job.h5"
      if [ "${writer}" = funnel ]; then
        SCOPE_PROFILER_MPI_WRITER=funnel mpirun --oversubscribe -np "${np}" "${exe}" "${calls}" "${work}/job.h5" | grep -a " writer "
      else
        env -u SCOPE_PROFILER_MPI_WRITER mpirun --oversubscribe -np "${np}" "${exe}" "${calls}" "${work}/job.h5" | grep -a " writer "
      fi
    done
  done
done
