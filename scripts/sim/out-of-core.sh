#!/usr/bin/env bash
# Issue #47's check in the calibrated simulation of the H100 node (docs/simulation.md, "Grids
# larger than the GPU"): heat3d 1024^3 and jacobi2d 49152^2 (several times the GPU's memory) on
# the node's platform with GPUs of GPU_MEM bytes (default 4 GiB), default options but the
# workers: GPU-only (--ncpu 0 --ncuda 1), CPU-only (--ncpu 15 --ncuda 0), both (--ncuda 1), and
# on 4 such GPUs without and with 12 cores (--ncpu 0 --ncuda 4, --ncpu 12 --ncuda 4), on a node
# whose GPUs each have their own full-duplex PCIe 5 x16 link (NODE, default "--gpus 4 --cpus
# 16": simmodel.py platform --gpus; the sample layout of the calibration routes every transfer,
# both ways, through one link).
#   bash scripts/sim/out-of-core.sh [out-dir]     (default build/sim)
# Writes out-dir/out-of-core.csv: per configuration the simulated seconds of STEPS steps (112)
# and of twice as many, the steady state (their difference over STEPS steps: the first pass,
# which fills the GPU and uploads both fields, left out; STEPS a multiple of every depth the
# planner takes, here 14 and 16, so that both windows end on a whole pass: 48 steps at depth 14
# gave heat3d 31.9 ms a step where whole passes give 35.3), what the planner chose (its placement
# line, with its predicted step) and the exit status (a run that SimGrid finds deadlocked exits
# 70). Needs build-sim/ (docs/simulation.md, "Build and run in
# simulation"). Settings: STEPS, GPU_MEM, NODE, ONLY=REGEX (app), RUNS (default: all five),
# RUN_TIMEOUT (host seconds a run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-ooc.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GPU_MEM=${GPU_MEM:-$((4 << 30))}
export NODE=${NODE:---gpus 4 --cpus 16}
: "${RUN_TIMEOUT:=3000}"
steps=${STEPS:-112}
source scripts/sim/node-calibration.sh
# app | binary | size (the rates: node-calibration.sh's fits)
apps=(
  "heat3d|heat3d/heat3d|--size 1024 1024 1024"
  "jacobi2d|jacobi2d/jacobi2d|--size 49152 49152"
)
csv="$out/out-of-core.csv"
echo "app,run,steps,gpu_mem,simulated_s,simulated_2x_s,steady_ms_per_step,status,placement" > "$csv.part"
for a in "${apps[@]}"; do
  IFS='|' read -r app bin size <<< "$a"
  IFS='|' read -r cpu gpu _ <<< "$(rates "$app")"
  [ -z "${ONLY:-}" ] || [[ "$app" =~ $ONLY ]] || continue
  for run in ${RUNS:-gpu-only cpu-only both 4-gpus 4-gpus+cpus}; do
    case $run in
      gpu-only) w=(--ncpu 0 --ncuda 1) ;;
      cpu-only) w=(--ncpu 15 --ncuda 0) ;;
      both) w=(--ncuda 1) ;;
      4-gpus) w=(--ncpu 0 --ncuda 4) ;;
      4-gpus+cpus) w=(--ncpu 12 --ncuda 4) ;;
    esac
    # shellcheck disable=SC2086  # the size's words
    row=$(steady_row "$steps" "$out/out-of-core-$app-$run.log" "$work/models-$app" "$cpu" "$gpu" "" \
      "$bin" $size "${w[@]}")
    echo "$app,$run,$steps,$GPU_MEM,$row" | tee -a "$csv.part"
  done
done
mv "$csv.part" "$csv"
echo "out-of-core: $csv"
