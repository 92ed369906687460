#!/usr/bin/env bash
# The measured H100 node, simulated (docs/simulation.md, "Calibration: the measured H100 node"):
#   bash scripts/sim/node.sh [out-dir]          (default build/sim; a few minutes)
# Simulates the rows of ../shared/measurements/h100-node-2026-11-26.md at their sizes and steps,
# default options, on the h100node platform as that node is (16 cores: 15 CPU workers and the
# one that drives the GPU), with the task times calibrated below, and writes
# out-dir/node.{csv,md}: measured next to simulated, with the ratio. Per app:
#   cpu-only  --ncpu 15 --ncuda 0     gpu-only  --ncpu 0 --ncuda 1     both  --ncuda 1
#   old       --ncuda 1 --gpu-fraction F: the split the measured (older) code chose, forced
# heat3d 512^3 as bench_heat3d_gpu ran it: one step per exchange, seconds per step in the steady
# state, (T(20 + STEADY) - T(20)) / STEADY simulated steps.
# Needs build-sim/ (docs/simulation.md, "Build and run in simulation"); no real StarPU: the
# kinds' models are written for the symbols each simulated run asks for (simmodel.py
# regression). Settings: ONLY=REGEX (app), STEADY=100, and the calibration below.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
: "${STARPU_TARBALL:=/work/shared/deps/starpu_1.4.10+dfsg.orig.tar.gz}"
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-node.XXXXXX")}
mkdir -p "$work/home"
export STARPU_HOME="$work/home"  # StarPU 1.4 would read ~/.starpu/sampling first (hybrid.sh)
source scripts/sim/common.sh
sample_platforms "$work/sampling" "$STARPU_TARBALL"
steady=${STEADY:-100}

# Calibration (docs/simulation.md says where each number comes from).
# Platform: 16 cores; the bus (PCIe 5 x16) PCIE_GBS and PCIE_LAT_US each way.
: "${PCIE_GBS:=50}" "${PCIE_LAT_US:=10}"
# Per task, on top of its bytes: GPU_LAT_US on the GPU (launch and StarPU's handling: the node's
# heat3d 512^3 in 16 tiles against 1 tile), CPU_LAT_US on a core.
: "${GPU_LAT_US:=15}" "${CPU_LAT_US:=5}"
# Per app: CPU GB/s per core and GPU GB/s over the bytes of a task (kind=CPU:GPU for a kind of
# its own), fitted to the node's CPU-only and GPU-only rows; the measured seconds of
# CPU-only / GPU-only / both, what the measured "both" run chose, and that split as a
# --gpu-fraction (- where it was no split: dmda placed tiles task by task, not forceable now).
# app | binary | arguments | CPU GB/s | GPU GB/s | kinds | measured cpu gpu both | chose | old
cases=(
  "cardiac2d|cardiac/cardiac2d|--size 2048 2048 --steps 50|12.2|1500||0.0330 0.0065 0.0215|y<2039/2048|0.9956"
  "cardiac3d|cardiac/cardiac3d|--size 256 256 128 --steps 20|10.8|1150||0.0443 0.0085 0.0124|z<128/128|1"
  "cloudsim|cloudsim/cloudsim|--size 2048 2048 --steps 50|11.6|1250||0.0225 0.0048 0.0170|2 tiles|-"
  "jacobi2d|jacobi2d/jacobi2d|--size 8192 8192 --steps 100|22.1|2600||0.2570 0.0482 0.0556|y<7786/8192|0.9504"
  "life|life/life|--size 8192 8192 --steps 100|2.29|500||0.4157 0.0319 0.0465|16 tiles|-"
  "nbody|nbody/nbody|--size 16384 --steps 4|20|2600|pairs=0.0145:0.445|0.4142 0.2082 0.2135|16 tiles|-"
)
# heat3d 512^3, bench_heat3d_gpu's rows: name | arguments | measured s/step
bench=(
  "GPU-only: tiles 512x512x32|--ncpu 0 --ncuda 1 --tile 512 512 32|0.001123"
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
: "${HEAT_CPU_GBS:=7.16}" "${HEAT_GPU_GBS:=2745}"

platform="$work/platform"
python3 scripts/sim/simmodel.py platform "$work/sampling" "$platform" h100node --cpus 16 \
  --pcie-gbs "$PCIE_GBS" --pcie-lat-us "$PCIE_LAT_US" > /dev/null

# One simulated run: its result line on stdout, its output in $work/run.log. A kind without a
# model stops StarPU with its symbol: the model is written (simmodel.py regression) and the run
# repeated. A time-block task advances as many steps as the run's depth (printed by the app):
# models per depth (base-dN), and the run repeated where its depth was not the one assumed.
simulate() {  # model-dir-base cpu-gbs gpu-gbs kinds binary args...
  local base=$1 cpu=$2 gpu=$3 kinds=$4 bin=$5 tries new k depth=4 ran dir
  shift 5
  local kopts=()
  for k in ${kinds//,/ }; do kopts+=(--kind "$k"); done
  models() {  # dir symbols...: the stated models of these symbols at this depth
    python3 scripts/sim/simmodel.py regression "$@" --cpu-gbs "$cpu" --gpu-gbs "$gpu" \
      --cpu-lat-us "$CPU_LAT_US" --gpu-lat-us "$GPU_LAT_US" --block-steps "$depth" "${kopts[@]}" > /dev/null
  }
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    dir="$base-d$depth"
    if [ ! -d "$dir" ]; then  # the platform, and the symbols known at another depth
      cp -r "$platform" "$dir"
      # shellcheck disable=SC2046
      [ -z "$(ls "$base"-d*/codelets/45 2>/dev/null)" ] ||
        models "$dir" $(ls "$base"-d*/codelets/45 | grep '^tessera\.' | sort -u)
    fi
    if STARPU_PERF_MODEL_DIR=$dir STARPU_HOSTNAME=h100node timeout "${RUN_TIMEOUT:-300}" \
         build-sim/apps/$bin "$@" > "$work/run.log" 2>&1 && grep -q ' seconds=' "$work/run.log"; then
      ran=$(sed -n 's/.*: \([0-9]*\) step(s) per halo exchange.*/\1/p' "$work/run.log" | head -n 1)
      if [ -n "$ran" ] && [ "$ran" != "$depth" ] && [ "$ran" -gt 1 ]; then depth=$ran; continue; fi
      grep ' seconds=' "$work/run.log" | tail -n 1
      return
    fi
    new=$(sed -n -e 's/.*model \(tessera\.[^ ]*\) is not calibrated.*/\1/p' \
                 -e 's/^Codelet \(tessera\.[^ ]*\) does not have a perfmodel.*/\1/p' "$work/run.log" | sort -u)
    [ -n "$new" ] || break
    # shellcheck disable=SC2086
    models "$dir" $new
  done
  cat "$work/run.log" >&2
  echo "node: $bin $* failed" >&2
  exit 1
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }  # key=value of a result line
chose() {  # what the run chose: the split, else the tile count, and the depth
  local line=$1 s
  s=$(echo "$line" | sed -n 's/.* split=\([xyz]<[0-9]*\/[0-9]*\).*/\1/p')
  local d
  d=$(sed -n 's/.*: \([0-9]*\) step(s) per halo exchange.*/\1/p' "$work/run.log" | head -n 1)
  echo "${s:-$(echo "$line" | field tiles) tiles}${d:+; depth $d}"
}

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
      "$([ "$run" = both ] && echo "$m_chose" || true)"
  done
done
if [ -z "${ONLY:-}" ] || [[ heat3d =~ $ONLY ]]; then
  dir="$work/models-heat3d"
  for b in "${bench[@]}"; do
    IFS='|' read -r name args m m_chose <<< "$b"
    common=(heat3d/heat3d --size 512 512 512 --steps-per-exchange 1 $args)
    l0=$(simulate "$dir" "$HEAT_CPU_GBS" "$HEAT_GPU_GBS" "" "${common[@]}" --steps 20)
    l1=$(simulate "$dir" "$HEAT_CPU_GBS" "$HEAT_GPU_GBS" "" "${common[@]}" --steps $((20 + steady)))
    s=$(python3 -c "print(f'{($(echo "$l1" | field seconds) - $(echo "$l0" | field seconds)) / $steady:.6f}')")
    row heat3d "$name" "${common[*]:1}" "$m" "$s" "$(chose "$l1")" "${m_chose:-}"
  done
fi
python3 scripts/sim/tables.py node "$csv" > "$out/node.md"
cat "$out/node.md"
