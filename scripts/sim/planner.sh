#!/usr/bin/env bash
# Issue #40's check in the calibrated simulation of the measured H100 node (docs/simulation.md,
# "#40's check: never slower than the best single device"):
#   bash scripts/sim/planner.sh [out-dir]       (default build/sim)
# Per app at the node's measured size and STEPS simulated steps (1000), on node.sh's platform
# and calibration (scripts/sim/node-calibration.sh), default options but the workers:
#   gpu-only  --ncpu 0 --ncuda 1     cpu-only  --ncpu 15 --ncuda 0     both  --ncuda 1
# heat3d 512^3 with its default options (the automatic depth, not the bench's one step per
# exchange). For heat3d, jacobi2d and life the same three again with the tiles a user would
# write: heat3d --tile 512 512 32, jacobi2d and life 8192^2 --tile 8192 512 (16 tiles along y).
# The check: both at least 0.98x the faster single device (best single s / both s >= 0.98;
# with explicit tiles, the single-device runs with the same tiles); nbody also at least 0.85x
# the sum of the two throughputs (1 / (1/cpu s + 1/gpu s) / both s >= 0.85). Writes
# out-dir/planner.{csv,md} and out-dir/planner-logs/ (each run's output), nothing else.
# Needs build-sim/ (docs/simulation.md, "Build and run in simulation"). Settings: ONLY=REGEX
# (app), STEPS=1000, NBODY_STEPS (default STEPS), RUN_TIMEOUT=1800 (host seconds a run),
# SIM_WORK (scratch directory, kept; default a temporary one, removed), and the calibration of
# scripts/sim/node-calibration.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
if [ -n "${SIM_WORK:-}" ]; then
  work=$SIM_WORK
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/sim-planner.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
: "${RUN_TIMEOUT:=1800}"
# The calibration, the per-app cases and simulate/field/chose (shared with node.sh).
source scripts/sim/node-calibration.sh
steps=${STEPS:-1000}
nbody_steps=${NBODY_STEPS:-$steps}

# The explicit tiles a user would write: app | --tile arguments | what they give
tiled=(
  "heat3d|--tile 512 512 32|16 tiles 512x512x32"
  "jacobi2d|--tile 8192 512|16 tiles 8192x512"
  "life|--tile 8192 512|16 tiles 8192x512"
)

csv="$out/planner.csv"
tmp_csv="$out/planner.csv.part"
echo "app,tiles,run,steps,arguments,simulated_s,choice,predicted_ms" > "$tmp_csv"
rm -rf "$out/planner-logs"
mkdir -p "$out/planner-logs"
run_rows() {  # app tiles-name model-dir cpu-gbs gpu-gbs kinds steps binary args...
  local app=$1 tname=$2 dir=$3 cpu=$4 gpu=$5 kinds=$6 n=$7 bin=$8 run line s choice predicted w=()
  shift 8
  for run in gpu-only cpu-only both; do
    case $run in
      gpu-only) w=(--ncpu 0 --ncuda 1) ;;
      cpu-only) w=(--ncpu 15 --ncuda 0) ;;
      both) w=(--ncuda 1) ;;
    esac
    line=$(simulate "$dir" "$cpu" "$gpu" "$kinds" "$bin" "$@" --steps "$n" "${w[@]}")
    s=$(echo "$line" | field seconds)
    choice=$(chose "$line")
    predicted=$(python3 scripts/sim/tables.py predicted "$work/run.log" "$run" "$choice")
    echo "$app,$tname,$run,$n,$* --steps $n ${w[*]},$s,$choice,$predicted" | tee -a "$tmp_csv"
    cp "$work/run.log" "$out/planner-logs/$app-${tname//[^a-zA-Z0-9.]/_}-$run.log"
  done
}
tiles_of() {  # app: the --tile arguments of its explicit-tile rows, and their name
  local t a targs tn
  for t in "${tiled[@]}"; do
    IFS='|' read -r a targs tn <<< "$t"
    [ "$a" = "$1" ] && { echo "$targs|$tn"; return; }
  done
  return 0
}
for c in "${cases[@]}" "heat3d|heat3d/heat3d|--size 512 512 512|$HEAT_CPU_GBS|$HEAT_GPU_GBS||||"; do
  IFS='|' read -r app bin args cpu gpu kinds _ <<< "$c"
  [ -z "${ONLY:-}" ] || [[ "$app" =~ $ONLY ]] || continue
  n=$steps
  [ "$app" != nbody ] || n=$nbody_steps
  read -r -a size <<< "${args% --steps *}"  # the measured size, without the node's steps
  dir="$work/models-$app"
  run_rows "$app" default "$dir" "$cpu" "$gpu" "$kinds" "$n" "$bin" "${size[@]}"
  IFS='|' read -r targs tname <<< "$(tiles_of "$app")"
  if [ -n "$targs" ]; then
    read -r -a t <<< "$targs"
    run_rows "$app" "$tname" "$dir" "$cpu" "$gpu" "$kinds" "$n" "$bin" "${size[@]}" "${t[@]}"
  fi
done
mv "$tmp_csv" "$csv"
python3 scripts/sim/tables.py planner "$csv" > "$out/planner.md"
cat "$out/planner.md"
