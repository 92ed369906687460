#!/usr/bin/env bash
# The table of record of automatic heterogeneous tiles (docs/simulation.md, "Prediction:
# automatic tiles on a CPU+GPU node"; PREDICTIONS: simulated, not measured):
#   bash scripts/sim/hetero.sh [out-dir]          (default build/sim; about 15 minutes)
# Per platform and app, 100 steps of the default task graph (exchanges inside the tile tasks),
# every run with tiles the library chooses (no --tile):
#   cpu-only   --ncuda 0                       gpu-only   --ncpu 0
#   static     CPU and GPU workers: the split from the models (--rebalance-every 0): "automatic"
#   auto       the same, rebalanced from measured part times (--rebalance-every 5, or
#              REBALANCE_EVERY)
#   fraction   --gpu-fraction F: the split at that share of the planes, never rebalanced
#   perturbed  (PERTURB=1, the default) the CPU cores at half speed from the simulated time at
#              which the best fixed fraction reaches step 50 (a SimGrid speed profile of each CPU
#              host; the runs start their timed steps at the same simulated time): the automatic
#              run against that fraction, both perturbed alike
# Writes out-dir/hetero.{csv,md}. Settings: STEPS=100, ONLY=REGEX ("platform|app|size"),
# FRACTIONS="0.5 ..." (default per platform), PERTURB=0|1, REBALANCE_EVERY=5.
# Platforms and task times: scripts/sim/hybrid.sh and docs/simulation.md (Assumptions); the
# models are non-linear regressions on the task's bytes (simmodel.py --regression), so every
# tile size the chooser or a rebalance makes has a time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
[ -x build-sim/apps/cardiac/cardiac3d ] && [ -x build-14/apps/cardiac/cardiac3d ] || bash scripts/sim/setup.sh
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-hetero.XXXXXX")}
mkdir -p "$work/home"
export STARPU_HOME="$work/home"  # StarPU 1.4 would read ~/.starpu/sampling first (hybrid.sh)
steps=${STEPS:-100}
every=${REBALANCE_EVERY:-5}  # steps between two measurements of the automatic runs
source scripts/sim/common.sh
sampling="$work/sampling"
sample_platforms "$sampling" "$STARPU_TARBALL"

# platform | CPU workers | CPU GB/s per core | CPU latency us | GPU GB/s | GPU latency us | fractions
declare -A platform=([sirocco]="23|4.2|2|190|10|0.5 0.6 0.7 0.8"
                     [h100node]="63|6.7|2|2600|5|0.8 0.85 0.9 0.95")
# platform | app | binary | grid (GPU-filling: 8-10 GB of fields, under the K40m's 12 GB)
cases=("sirocco|heat3d|heat3d/heat3d|1024 1024 512"
       "sirocco|jacobi2d|jacobi2d/jacobi2d|16384 16384"
       "sirocco|cardiac3d|cardiac/cardiac3d|1024 1024 320"
       "h100node|heat3d|heat3d/heat3d|1024 1024 512"
       "h100node|jacobi2d|jacobi2d/jacobi2d|16384 16384"
       "h100node|cardiac3d|cardiac/cardiac3d|1024 1024 320")

csv="$out/hetero.csv"
kept=""
if [ -n "${ONLY:-}" ] && [ -f "$csv" ]; then
  for c in "${cases[@]}"; do
    IFS='|' read -r plat app bin grid <<< "$c"
    [[ "$c" =~ $ONLY ]] || kept+=$(grep "^$plat,$app," "$csv" || true)$'\n'
  done
fi
echo "platform,app,grid,mode,fraction,seconds,split,moves" > "$csv"
printf '%s' "$kept" | grep -v '^$' >> "$csv" || true

for c in "${cases[@]}"; do
  [ -z "${ONLY:-}" ] || [[ "$c" =~ $ONLY ]] || continue
  IFS='|' read -r plat app bin grid <<< "$c"
  IFS='|' read -r ncpu cpu_gbs cpu_lat gpu_gbs gpu_lat fracs <<< "${platform[$plat]}"
  fracs=${FRACTIONS:-$fracs}
  # The kinds' symbols (a small real run of each depth; its footprints are not used: the
  # regression prices every size), then the platform and the stated models.
  cal="$work/cal-$app"
  if [ ! -d "$cal/codelets" ]; then
    small=$(for v in $grid; do printf '%d ' 96; done)  # cardiac3d diverges below 80 a side
    for depth in 1 auto; do
      build-14/apps/$bin --size $small --steps 2 --ncpu 2 --steps-per-exchange $depth \
        --perfmodel-dir "$cal" --calibrate-models --quiet > "$work/cal.log" 2>&1 ||
        { cat "$work/cal.log" >&2; exit 1; }
    done
  fi
  dir="$work/models-$plat-$app"
  mkdir -p "$dir/bus"
  if [ "$plat" = sirocco ]; then
    cp "$sampling/bus/sirocco."* "$dir/bus/"
  else
    python3 scripts/sim/simmodel.py platform "$sampling" "$dir" "$plat" --cpus $((ncpu + 1)) > /dev/null
  fi
  python3 scripts/sim/simmodel.py models "$cal" "$dir" --regression --cpu-gbs "$cpu_gbs" \
    --cpu-lat-us "$cpu_lat" --gpu-gbs "$gpu_gbs" --gpu-lat-us "$gpu_lat" --gpus 4 > /dev/null
  simulate() {  # steps platform-dir app-args...: the result line
    local n=$1 pdir=$2
    shift 2
    # One exchange per step (--steps-per-exchange 1): a task's modelled time is its bytes over
    # the bandwidth, which would price a temporal block of several steps as one step.
    STARPU_PERF_MODEL_DIR=$pdir STARPU_HOSTNAME=$plat build-sim/apps/$bin --size $grid \
      --steps "$n" --steps-per-exchange 1 --quiet "$@" 2> "$work/run.err" | tr '\n' ' '
  }
  run() {  # mode fraction platform-dir app-args...
    local mode=$1 fraction=$2 pdir=$3 s line
    shift 3
    line=$(simulate "$steps" "$pdir" "$@")
    s=$(echo "$line" | seconds)
    [ -n "$s" ] || { cat "$work/run.err" >&2; echo "hetero: $plat $app $mode failed" >&2; exit 1; }
    local split moves
    split=$(echo "$line" | sed -n 's/.* split=[xyz]<\([0-9]*\)\/.*/\1/p')
    moves=$(echo "$line" | sed -n 's/.* rebalances=\([0-9]*\).*/\1/p')
    echo "$plat,$app,${grid// /x},$mode,$fraction,$s,${split:--},${moves:-0}" | tee -a "$csv"
  }
  run cpu-only 0 "$dir" --ncpu "$ncpu" --ncuda 0
  run gpu-only 1 "$dir" --ncpu 0 --ncuda 1
  run auto auto "$dir" --ncpu "$ncpu" --ncuda 1 --rebalance-every "$every"
  run static auto "$dir" --ncpu "$ncpu" --ncuda 1 --rebalance-every 0
  best=""; best_s=""
  for f in $fracs; do
    run fraction "$f" "$dir" --ncpu "$ncpu" --ncuda 1 --gpu-fraction "$f"
    s=$(tail -n 1 "$csv" | cut -d, -f6)
    if [ -z "$best_s" ] || python3 -c "import sys; sys.exit(0 if $s < $best_s else 1)"; then
      best=$f; best_s=$s
    fi
  done
  if [ "${PERTURB:-1}" = 1 ]; then
    # The CPU hosts at half speed from the simulated time at which the best fraction has run
    # half the steps (the end of a run of that many: its first steps, which upload the GPU
    # part, take longer than the others), as SimGrid's speed profile of each CPU host.
    pert="$work/models-$plat-$app-perturbed"
    rm -rf "$pert" && cp -r "$dir" "$pert"
    line=$(simulate $((steps / 2)) "$dir" --ncpu "$ncpu" --ncuda 1 --gpu-fraction "$best")
    at=$(python3 -c "print($(echo "$line" | sed -n 's/.* started=\([0-9.]*\).*/\1/p') + \
                           $(echo "$line" | seconds))")
    # (SimGrid looks a profile up beside the platform file, by a relative name, one per host.)
    for h in $(sed -n 's/.*<host id="\(CPU[0-9]*\)".*/\1/p' "$pert/bus/$plat.platform.v4.xml"); do
      printf '0 1.0\n%s 0.5\n' "$at" > "$pert/bus/half-$h.profile"
    done
    sed -i -E 's|(<host id="(CPU[0-9]+)"[^/]*)/>|\1 speed_file="half-\2.profile"/>|' \
      "$pert/bus/$plat.platform.v4.xml"
    run perturbed-fraction "$best" "$pert" --ncpu "$ncpu" --ncuda 1 --gpu-fraction "$best"
    run perturbed-auto auto "$pert" --ncpu "$ncpu" --ncuda 1 --rebalance-every "$every"
  fi
done
/usr/bin/python3 scripts/sim/tables.py hetero "$csv" > "$out/hetero.md"
cat "$out/hetero.md"
