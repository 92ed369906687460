#!/usr/bin/env bash
# Issue #48's check in the calibrated simulation (docs/simulation.md, "Several GPUs"): heat3d
# 1024^3, jacobi2d 32768^2, cardiac3d 512^3 and nbody 65536, default options but the workers, on 1, 2 and 4 GPUs and on 4 GPUs
# with the node's other cores, on two simulated nodes written from a short description
# (scripts/sim/simmodel.py platform --gpus): each GPU its own PCIe 5 x16 link (50 GB/s, 10 us),
#   nvlink  4 H100-class GPUs talking over NVLink (300 GB/s each way), 64 cores
#   pcie    4 PCIe GPUs, GPU to GPU staged through the host's memory, 64 cores
#   pcie-p2p  the same, GPU to GPU in one copy over both PCIe links (a PCIe switch)
# with the H100 node's calibrated models for one GPU (node-calibration.sh).
#   bash scripts/sim/multi-gpu.sh [out-dir]     (default build/sim)
# Writes out-dir/multi-gpu.csv: per node, app and workers the simulated seconds of STEPS and 2 x
# STEPS steps, the steady step (their difference over STEPS: the first upload left out), what
# the planner chose and predicted (its placement line) and the exit status. Builds build-sim/
# when missing (scripts/sim/setup.sh). Settings: STEPS (default 100; nbody NBODY_STEPS, 10),
# ONLY=REGEX (node|app), RUN_TIMEOUT (host seconds a run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-multi-gpu.XXXXXX")}
[ -n "${SIM_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
steps=${STEPS:-100}
: "${RUN_TIMEOUT:=1200}"
nodes=(
  "nvlink|--gpus 4 --cpus 64 --gpu-link-gbs 300"
  "pcie|--gpus 4 --cpus 64 --gpu-link-gbs 0"
  "pcie-p2p|--gpus 4 --cpus 64 --gpu-link-gbs 0 --pcie-p2p"
)
csv="$out/multi-gpu.csv"
echo "node,app,workers,steps,simulated_s,simulated_2x_s,steady_ms_per_step,status,placement" > "$csv.part"
for n in "${nodes[@]}"; do
  IFS='|' read -r node description <<< "$n"
  export NODE=$description
  mkdir -p "$work/$node"
  (
    work=$work/$node
    source scripts/sim/node-calibration.sh
    # app | binary | size (the rates: node-calibration.sh's fits)
    apps=(
      "heat3d|heat3d/heat3d|--size 1024 1024 1024"
      "jacobi2d|jacobi2d/jacobi2d|--size 32768 32768"
      "cardiac3d|cardiac/cardiac3d|--size 512 512 512"
      "nbody|nbody/nbody|--size 65536"
    )
    for a in "${apps[@]}"; do
      IFS='|' read -r app bin size <<< "$a"
      IFS='|' read -r cpu gpu kinds <<< "$(rates "$app")"
      [ -z "${ONLY:-}" ] || [[ "$node|$app" =~ $ONLY ]] || continue
      # nbody's step is 0.75 s on one GPU, of 4096 tasks with the cores: NBODY_STEPS (10).
      n=$steps
      [ "$app" != nbody ] || n=${NBODY_STEPS:-10}
      for run in 1-gpu 2-gpus 4-gpus 4-gpus+cpus; do
        case $run in
          1-gpu) w=(--ncpu 0 --ncuda 1) ;;
          2-gpus) w=(--ncpu 0 --ncuda 2) ;;
          4-gpus) w=(--ncpu 0 --ncuda 4) ;;
          4-gpus+cpus) w=(--ncpu 60 --ncuda 4) ;;
        esac
        # shellcheck disable=SC2086  # the size's words
        row=$(steady_row "$n" "$out/multi-gpu-$node-$app-$run.log" "$work/models-$app" "$cpu" \
          "$gpu" "$kinds" "$bin" $size "${w[@]}")
        echo "$node,$app,$run,$n,$row" | tee -a "$csv.part"
      done
    done
  )
done
mv "$csv.part" "$csv"
echo "multi-gpu: $csv"
