#!/usr/bin/env bash
# The measured H100 node, simulated (docs/simulation.md, "Calibration: the measured H100 node"):
#   bash scripts/sim/node.sh [out-dir]          (default build/sim; a few minutes)
# Simulates the rows of docs/notebook/h100-node-2026-11-26.md at their sizes and steps,
# default options, on the h100node platform as that node is (16 cores: 15 CPU workers and the
# one that drives the GPU), with the task times calibrated below, and writes
# out-dir/node.{csv,md}: measured next to simulated, with the ratio. Per app:
#   cpu-only  --ncpu 15 --ncuda 0     gpu-only  --ncpu 0 --ncuda 1     both  --ncuda 1
#   old       --ncuda 1 --gpu-fraction F: the split the measured (older) code chose, forced
# heat3d 512^3 as bench_heat3d_gpu ran it: one step per exchange, seconds per step in the steady
# state, (T(20 + STEADY) - T(20)) / STEADY simulated steps.
# Needs build-sim/ (docs/simulation.md, "Build and run in simulation"); no real StarPU: the
# kinds' models are written for the symbols each simulated run asks for (simmodel.py
# regression). Settings: ONLY=REGEX (app), STEADY=100, and the calibration of
# scripts/sim/node-calibration.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-node.XXXXXX")}
# The calibration, the per-app cases and simulate/field/chose (shared with planner.sh).
source scripts/sim/node-calibration.sh
steady=${STEADY:-100}

# heat3d 512^3, bench_heat3d_gpu's rows: name | arguments | measured s/step. The 16 tiles the
# node ran GPU-only are kept (--keep-gpu-tiles): the planner would merge them into one now.
bench=(
  "GPU-only: tiles 512x512x32|--ncpu 0 --ncuda 1 --tile 512 512 32 --keep-gpu-tiles|0.001123"
  "GPU-only: automatic tiles|--ncpu 0 --ncuda 1|0.000825"
  "15 CPU + 1 GPU: tiles 512x512x32|--ncuda 1 --tile 512 512 32|0.020395|dmda task by task"
  "15 CPU + 1 GPU: tiles 512x512x32; one on a core (old)|--ncuda 1 --tile 512 512 32 --gpu-fraction 0.9375|0.020395"
  "hand-set GPU share 0.5|--ncuda 1 --gpu-fraction 0.5|0.01116"
  "hand-set GPU share 0.7|--ncuda 1 --gpu-fraction 0.7|0.00616"
  "hand-set GPU share 0.8|--ncuda 1 --gpu-fraction 0.8|0.00399"
  "hand-set GPU share 0.9|--ncuda 1 --gpu-fraction 0.9|0.00168"
  "hand-set GPU share 0.95|--ncuda 1 --gpu-fraction 0.95|0.00130"
  "automatic split|--ncuda 1|0.000826|z<512/512"
)

csv="$out/node.csv"
echo "app,run,arguments,measured_s,simulated_s,choice,measured_choice" > "$csv"
mkdir -p "$out/node-logs"
row() {  # app run arguments measured simulated choice [measured choice]; keeps the output
  echo "$1,$2,$3,$4,$5,$6,${7:-}" | tee -a "$csv"
  cp "$work/run.log" "$out/node-logs/$1-${2//[^a-zA-Z0-9.]/_}.log"
}
for c in "${cases[@]}"; do
  IFS='|' read -r app bin args cpu gpu kinds measured m_chose old <<< "$c"
  [ -z "${ONLY:-}" ] || [[ "$app" =~ $ONLY ]] || continue
  read -r m_cpu m_gpu m_both <<< "$measured"
  dir="$work/models-$app"
  # shellcheck disable=SC2086
  for run in cpu-only gpu-only both old; do
    case $run in
      cpu-only) w="--ncpu 15 --ncuda 0"; m=$m_cpu ;;
      gpu-only) w="--ncpu 0 --ncuda 1"; m=$m_gpu ;;
      both) w="--ncuda 1"; m=$m_both ;;
      old) [ "$old" != - ] || continue; w="--ncuda 1 --gpu-fraction $old"; m=$m_both ;;
    esac
    line=$(simulate "$dir" "$cpu" "$gpu" "$kinds" "$bin" $args $w)
    row "$app" "$run" "$args $w" "$m" "$(echo "$line" | field seconds)" "$(chose "$line")" \
      "$(if [ "$run" = both ]; then echo "$m_chose"; fi)"
  done
done
if [ -z "${ONLY:-}" ] || [[ heat3d =~ $ONLY ]]; then
  dir="$work/models-heat3d"
  for b in "${bench[@]}"; do
    IFS='|' read -r name args m m_chose <<< "$b"
    # shellcheck disable=SC2206  # the row's arguments, split
    common=(heat3d/heat3d --size 512 512 512 --steps-per-exchange 1 $args)
    l0=$(simulate "$dir" "$HEAT_CPU_GBS" "$HEAT_GPU_GBS" "" "${common[@]}" --steps 20)
    l1=$(simulate "$dir" "$HEAT_CPU_GBS" "$HEAT_GPU_GBS" "" "${common[@]}" --steps $((20 + steady)))
    s=$(python3 -c "print(f'{($(echo "$l1" | field seconds) - $(echo "$l0" | field seconds)) / $steady:.6f}')")
    row heat3d "$name" "${common[*]:1}" "$m" "$s" "$(chose "$l1")" "${m_chose:-}"
  done
fi
python3 scripts/sim/tables.py node "$csv" > "$out/node.md"
cat "$out/node.md"
