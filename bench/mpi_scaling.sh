#!/usr/bin/env bash
# Strong and weak scaling of heat3d over 1 and 2 MPI ranks (one StarPU CPU worker per rank),
# with the halo traffic per step and, from the traces, computation versus idle (waiting) time.
# usage: bench/mpi_scaling.sh BUILD_DIR [OUT_DIR]   (N, STEPS: grid edge and steps)
# Strong: the same N^3 grid on 1 and 2 ranks. Weak: N x N x (N/2 per rank).
set -euo pipefail
build=${1:?usage: mpi_scaling.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/mpi-scaling}
n=${N:-128}
steps=${STEPS:-20}
tile_z=$((n / 8))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"
# Step by step (the app blocks by default): the halo traffic and overlap per step of the plain
# exchange, as docs/performance.md reports them.
run() {  # ranks, label, size...
  local ranks=$1 label=$2
  shift 2
  STARPU_NCPU=1 STARPU_SILENT=1 mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$ranks" \
    "$build/apps/heat3d/heat3d" --size "$@" --tile "$n" "$n" "$tile_z" --steps "$steps" \
    --quiet --steps-per-exchange 1 --trace "$out/$label.json" | sed "s/^/$label ranks=$ranks: /"
}
for ranks in 1 2; do
  run "$ranks" "strong-np$ranks" "$n" "$n" "$n"
  run "$ranks" "weak-np$ranks" "$n" "$n" $((n / 2 * ranks))
done
python3 "$here/../trace/tessera-trace" "$out"/*.json
