#!/usr/bin/env bash
# The CPU+GPU prediction tables of docs/simulation.md (PREDICTIONS: simulated, not measured).
#   bash scripts/sim/hybrid.sh [out-dir]           (default build/sim)
#   ONLY="REGEX"  runs only the cases matching it ("platform|app|grid|tile"), keeping the other
#                 cases' rows of out-dir/hybrid.csv;  STEPS=10  FRACTIONS="0 0.2 ..."
#   SCHEDS="dmda dmdas heteroprio" (the automatic runs; an entry may add StarPU settings for
#                 its run: "dmdas+STARPU_SCHED_BETA=0.5+STARPU_PREFETCH=0")
#   HAND=1        also the cpu-only, gpu-only and hand-set fraction runs (default)
#   CSV=hybrid    the table's file name
# Platforms (every number is an assumption, stated in docs/simulation.md):
#   sirocco   StarPU's sample platform (tools/perfmodels/sampling in StarPU's sources):
#             24 Haswell cores, Tesla K40m GPUs of which one is used (STARPU_NCUDA=1); bus
#             figures as StarPU measured them there (~10.5 GB/s, ~10 us)
#   h100node  modelled: 64 cores and one H100-class GPU (80 GB) over PCIe 5 (50 GB/s, 10 us)
# Task times (scripts/sim/simmodel.py): bytes moved / bandwidth + latency, CPU bandwidth per
# core with every core busy, GPU bandwidth the device's achievable streaming bandwidth.
# Models are keyed by the footprints of real models: each tile size is first calibrated here
# (real StarPU, CPU, a 3x3(x3) grid so that every kind of tile occurs), then rewritten.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
[ -x build-sim/apps/heat3d/heat3d ] && [ -x build-14/apps/heat3d/heat3d ] || bash scripts/sim/setup.sh
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-hybrid.XXXXXX")}
mkdir -p "$work/home"
# StarPU 1.4 reads (and updates) a model found in ~/.starpu/sampling before one missing from
# --perfmodel-dir: a private STARPU_HOME keeps these runs off the user's own models.
export STARPU_HOME="$work/home"
host=$(hostname)
steps=${STEPS:-10}
fractions=${FRACTIONS:-"0 0.2 0.4 0.6 0.7 0.8 0.9 1"}


# platform | CPU workers | CPU GB/s per core | CPU latency us | GPU GB/s | GPU latency us
declare -A platform=([sirocco]="23|4.2|2|190|10" [h100node]="63|6.7|2|2600|5")
# platform | app | grid | tile (the cases of the tables)
cases=("h100node|heat3d|1024 1024 512|256x256x128"
       "h100node|heat3d|1024 1024 512|128x128x128"
       "h100node|jacobi2d|16384 16384|4096x4096"
       "h100node|jacobi2d|16384 16384|2048x2048"
       "sirocco|heat3d|1024 1024 512|256x256x128"
       "sirocco|jacobi2d|16384 16384|4096x4096"
       "sirocco|jacobi2d|16384 16384|2048x2048")

source scripts/sim/common.sh
sampling="$work/sampling"
sample_platforms "$sampling" "$STARPU_TARBALL"

name=${CSV:-hybrid}
csv="$out/$name.csv"
kept=""
if [ -n "${ONLY:-}" ] && [ -f "$csv" ]; then
  for c in "${cases[@]}"; do
    IFS='|' read -r plat app grid tile <<< "$c"
    [[ "$c" =~ $ONLY ]] || kept+=$(grep "^$plat,$app,$tile," "$csv" || true)$'\n'
  done
fi
echo "platform,app,tile,mode,sched,fraction,seconds" > "$csv"
printf '%s' "$kept" | grep -v '^$' >> "$csv" || true
for c in "${cases[@]}"; do
  [ -z "${ONLY:-}" ] || [[ "$c" =~ $ONLY ]] || continue
  IFS='|' read -r plat app grid tile <<< "$c"
  IFS='|' read -r ncpu cpu_gbs cpu_lat gpu_gbs gpu_lat <<< "${platform[$plat]}"
  t=(${tile//x/ })
  dir="$work/models-$plat-$app-$tile"
  node_models "$work" "$sampling" "$dir" "$plat" "$app" "$tile" "$ncpu" "$cpu_gbs" "$cpu_lat" \
    "$gpu_gbs" "$gpu_lat"
  run() {  # mode sched[+VAR=value...] fraction workers...
    local mode=$1 sched=${2%%+*} fraction=$3 label=$2 settings=()
    [ "$label" = "$sched" ] || IFS='+' read -ra settings <<< "${label#*+}"
    shift 3
    local s
    # Step by step (--steps-per-exchange 1) with exchange tasks of their own: the models are of
    # the interior, halo-pack and boundary tasks, not of the apps' default temporal blocks and
    # interior tasks that exchange.
    s=$(env "${settings[@]}" STARPU_PERF_MODEL_DIR=$dir STARPU_HOSTNAME=$plat build-sim/apps/$app/$app --size $grid \
          --tile "${t[@]}" --steps "$steps" --sched "$sched" --quiet --steps-per-exchange 1 --separate-exchange-tasks "$@" 2> "$work/run.err" | seconds)
    [ -n "$s" ] || { cat "$work/run.err" >&2; echo "hybrid: $plat $app $mode failed" >&2; exit 1; }
    echo "$plat,$app,$tile,$mode,$label,$fraction,$s" | tee -a "$csv"
  }
  if [ "${HAND:-1}" = 1 ]; then
    run cpu-only dmda 0 --ncpu "$ncpu" --ncuda 0
    run gpu-only dmda 1 --ncpu 0 --ncuda 1
  fi
  for s in ${SCHEDS:-dmda dmdas heteroprio}; do run auto "$s" auto --ncpu "$ncpu" --ncuda 1; done
  if [ "${HAND:-1}" = 1 ]; then
    for f in $fractions; do run fraction dmda "$f" --ncpu "$ncpu" --ncuda 1 --gpu-fraction "$f"; done
  fi
done
/usr/bin/python3 scripts/sim/tables.py hybrid "$csv" "$out/$name.svg" > "$out/$name.md"
cat "$out/$name.md"
