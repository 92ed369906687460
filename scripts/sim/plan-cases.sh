#!/usr/bin/env bash
# Issue 70's cases in the calibrated simulation (docs/simulation.md, "One plan for every
# tiling"): the same grid planned as the library's tiles and as a user's, along the axis and on
# the GPU count the planner's prices choose, against the one-GPU run.
#   pcie      4 PCIe GPUs, GPU to GPU staged by the host, 64 cores (multi-gpu.sh's node):
#             heat3d 2048x2048x64 and 2048x1024x512 on 1 and 4 GPUs
#   4gib      4 GPUs of 4 GiB, 16 cores (out-of-core.sh's node): heat3d 1024^3 in the
#             library's tiles and in --tile 1024 1024 64, on 1 GPU (with and without 15
#             cores) and on 4; 8192x8192x64 (z planes
#             too large for a slab: streamed along y) on 1 and 4 GPUs
#   bash scripts/sim/plan-cases.sh [out-dir]     (default build/sim)
# Writes out-dir/plan-cases.csv: per case the simulated seconds of STEPS and 2 x STEPS steps,
# the steady step, the status and the placement line. Settings: STEPS (default 100),
# ONLY=REGEX (node|case), RUN_TIMEOUT (host seconds a run), MORE_CASES (cases of one's own, a
# line each as below: "4gib|4|2gpus|--size 1024 1024 1024|--ncpu 0 --ncuda 2"; a sixth field
# names another application of node-calibration.sh's: "...|--ncpu 0 --ncuda 4|jacobi2d").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-plan.XXXXXX")
trap 'rm -rf "$work"' EXIT
steps=${STEPS:-100}
: "${RUN_TIMEOUT:=3000}"
# node | GPU memory | case | size and tiles | workers
cases=(
  "pcie|80|thin-1gpu|--size 2048 2048 64|--ncpu 0 --ncuda 1"
  "pcie|80|thin-4gpus|--size 2048 2048 64|--ncpu 0 --ncuda 4"
  "pcie|80|slab-1gpu|--size 2048 1024 512|--ncpu 0 --ncuda 1"
  "pcie|80|slab-4gpus|--size 2048 1024 512|--ncpu 0 --ncuda 4"
  "4gib|4|library-tiles|--size 1024 1024 1024|--ncpu 0 --ncuda 1"
  "4gib|4|user-tiles|--size 1024 1024 1024 --tile 1024 1024 64|--ncpu 0 --ncuda 1"
  "4gib|4|user-tiles-cpus|--size 1024 1024 1024 --tile 1024 1024 64|--ncuda 1"
  "4gib|4|library-tiles-4gpus|--size 1024 1024 1024|--ncpu 0 --ncuda 4"
  "4gib|4|user-tiles-4gpus|--size 1024 1024 1024 --tile 1024 1024 64|--ncpu 0 --ncuda 4"
  "4gib|4|y-slabs-1gpu|--size 8192 8192 64|--ncpu 0 --ncuda 1"
  "4gib|4|y-slabs-4gpus|--size 8192 8192 64|--ncpu 0 --ncuda 4"
)
while IFS= read -r c; do [ -z "$c" ] || cases+=("$c"); done <<< "${MORE_CASES:-}"
csv="$out/plan-cases.csv"
echo "node,case,steps,simulated_s,simulated_2x_s,steady_ms_per_step,status,placement" > "$csv.part"
for c in "${cases[@]}"; do
  IFS='|' read -r node gib name size workers app <<< "$c"
  [ -z "${ONLY:-}" ] || [[ "$node|$name" =~ $ONLY ]] || continue
  case $node in
    pcie) description="--gpus 4 --cpus 64 --gpu-link-gbs 0" ;;
    4gib) description="--gpus 4 --cpus 16" ;;
  esac
  mkdir -p "$work/$node-$name"
  row=$(
    work=$work/$node-$name
    export NODE=$description GPU_MEM=$((gib << 30))
    source scripts/sim/node-calibration.sh
    app=${app:-heat3d}
    IFS='|' read -r cpu gpu kinds <<< "$(rates "$app")"
    # shellcheck disable=SC2086  # the size's and the workers' words
    steady_row "$steps" "$out/plan-cases-$node-$name.log" "$work/models-$app" "$cpu" "$gpu" \
      "$kinds" "$app/$app" $size $workers
  )
  echo "$node,$name,$steps,$row" | tee -a "$csv.part"
done
mv "$csv.part" "$csv"
echo "plan-cases: $csv"
