#!/usr/bin/env bash
# bench/pmpi/run.sh BUILD_DIR: the cost of a wrapped MPI call over the bare
# PMPI call, in the same run, recording in trace mode and in aggregate
# mode, one rank. Goal: <= 150 ns per call (docs: docs/guide/mpi.md "MPI calls without
# code changes").
set -euo pipefail
build="${1:?usage: bench/pmpi/run.sh BUILD_DIR [CALLS [ROUNDS]]}"
shift
exe="${build}/bench/pmpi/sp_bench_pmpi_overhead"
[ -x "${exe}" ] || { echo "build ${exe} first (an MPI build)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export SCOPE_PROFILER_QUIET=1
for mode in trace aggregate; do
  echo "== SCOPE_PROFILER_MODE=${mode}"
  SCOPE_PROFILER_MODE=${mode} SCOPE_PROFILER_FILE="${work}/${mode}.h5" \
    mpirun -np 1 -x SCOPE_PROFILER_MODE -x SCOPE_PROFILER_FILE -x SCOPE_PROFILER_QUIET "${exe}" "$@"
done
echo "== SCOPE_PROFILER_MPI=off (the wrappers only pass calls on)"
SCOPE_PROFILER_MPI=off mpirun -np 1 -x SCOPE_PROFILER_MPI -x SCOPE_PROFILER_QUIET "${exe}" "$@"
