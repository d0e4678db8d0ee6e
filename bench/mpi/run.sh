#!/usr/bin/env bash
# bench/mpi/run.sh BUILD_DIR: 4 ranks x 1M calls vs 1 rank x 4M calls, in
# the same run, written to one file each. The goal: rank 0's memory does
# not grow with the other ranks' events (it streams them in bounded chunks),
# and the 4-rank finalize is not slower than writing the same events alone.
set -euo pipefail
build="${1:?usage: bench/mpi/run.sh BUILD_DIR}"
exe="${build}/bench/mpi/sp_bench_mpi_finalize"
[ -x "${exe}" ] || { echo "build ${exe} first (an MPI build)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
echo "== 4 ranks x 1,000,000 calls"
mpirun --oversubscribe -np 4 "${exe}" 1000000 "${work}/four.h5"
echo "== 1 rank x 4,000,000 calls"
mpirun --oversubscribe -np 1 "${exe}" 4000000 "${work}/one.h5"
ls -l "${work}"/*.h5 | awk '{print "   ", $5, "bytes", $9}'
