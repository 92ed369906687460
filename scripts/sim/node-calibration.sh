# shellcheck shell=bash
# Shared by node.sh and planner.sh (sourced from the repository root, after `work` names a
# scratch directory): the calibration of the measured H100 node (docs/simulation.md,
# "Calibration: the measured H100 node, simulated"), its per-app cases, the simulated platform
# in $work/platform, and the simulated run: simulate, field, chose. Each script's own rows and
# output stay in the script.
mkdir -p "$work/home"
export STARPU_HOME="$work/home"  # StarPU 1.4 would read ~/.starpu/sampling first (hybrid.sh)
source scripts/sim/common.sh
[ -x build-sim/apps/nbody/nbody ] || SIM_ONLY=1 bash scripts/sim/setup.sh >&2
sample_platforms "$work/sampling" "$STARPU_TARBALL"

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
# nbody ran its then default tiles of 1024 bodies (--tile after --steps: planner.sh keeps the
# arguments before --steps, so it runs the planner's tiles, today's default; --keep-gpu-tiles:
# on the GPU as the node ran them, where the planner would merge them into one now). Its GPU
# pairs model is a kernel's curve (simmodel.py PAIRS_KERNELS, issue 71): the H200's task times
# of today's kernel by tile side, whose 1024-body task (178 us) is the node's 184 us.
# shellcheck disable=SC2034  # read by the scripts that source this file
cases=(
  "cardiac2d|cardiac/cardiac2d|--size 2048 2048 --steps 50|10.9|1450||0.0330 0.0065 0.0215|y<2039/2048|0.9956"
  "cardiac3d|cardiac/cardiac3d|--size 256 256 128 --steps 20|8.35|1100||0.0443 0.0085 0.0124|z<128/128|1"
  "cloudsim|cloudsim/cloudsim|--size 2048 2048 --steps 50|10.6|1200||0.0225 0.0048 0.0170|2 tiles|-"
  "jacobi2d|jacobi2d/jacobi2d|--size 8192 8192 --steps 100|21.5|2600||0.2570 0.0482 0.0556|y<7786/8192|0.9504"
  "life|life/life|--size 8192 8192 --steps 100|2.22|500||0.4157 0.0319 0.0465|16 tiles|-"
  "nbody|nbody/nbody|--size 16384 --steps 4 --tile 1024 --keep-gpu-tiles|20|2600|pairs=0.1753:thread-per-target|0.4142 0.2082 0.2135|16 tiles|-"
)
# heat3d (512^3 on the node): fitted to bench_heat3d_gpu's 1-tile GPU-only row and its hand-set
# share 0.5 (no CPU-only row).
: "${HEAT_CPU_GBS:=7.16}" "${HEAT_GPU_GBS:=2745}"

# The calibrated rates of an app, "CPU GB/s|GPU GB/s|kinds": its case above (heat3d's own).
rates() {  # app
  local c app bin args cpu gpu kinds
  if [ "$1" = heat3d ]; then echo "$HEAT_CPU_GBS|$HEAT_GPU_GBS|"; return; fi
  for c in "${cases[@]}"; do
    IFS='|' read -r app bin args cpu gpu kinds _ <<< "$c"
    if [ "$app" = "$1" ]; then echo "$cpu|$gpu|$kinds"; return; fi
  done
  echo "node-calibration: no rates for $1" >&2
  return 1
}

platform="$work/platform"
# GPU_MEM: the simulated GPU's memory in bytes (the H100's 80 GiB unless said; out-of-core.sh
# makes it a small one). NODE: more of simmodel.py platform's options, e.g. a node of several
# GPUs each with its own link ("--gpus 4 --cpus 64 --gpu-link-gbs 300": multi-gpu.sh); unset,
# the calibrated one-GPU node of the tables of record (the sample's layout).
# shellcheck disable=SC2086  # NODE: options, split on spaces
python3 scripts/sim/simmodel.py platform "$work/sampling" "$platform" h100node --cpus 16 \
  --pcie-gbs "$PCIE_GBS" --pcie-lat-us "$PCIE_LAT_US" --gpu-mem "${GPU_MEM:-$((80 << 30))}" ${NODE:-} > /dev/null

# One simulated run: its result line on stdout, its output in $work/run.log. A kind without a
# model stops StarPU with its symbol: the model is written (simmodel.py regression) and the run
# repeated. (A time block is sized by the bytes its steps stream, so one model serves every
# depth.) RUN_TIMEOUT (seconds of host time, default 300) bounds one run.
simulate() {  # model-dir cpu-gbs gpu-gbs kinds binary args...
  local dir=$1 cpu=$2 gpu=$3 kinds=$4 bin=$5 new k
  shift 5
  local kopts=()
  for k in ${kinds//,/ }; do kopts+=(--kind "$k"); done
  [ -d "$dir" ] || cp -r "$platform" "$dir"
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    if STARPU_PERF_MODEL_DIR=$dir STARPU_HOSTNAME=h100node timeout "${RUN_TIMEOUT:-300}" \
         "build-sim/apps/$bin" "$@" > "$work/run.log" 2>&1 && grep -q ' seconds=' "$work/run.log"; then
      grep ' seconds=' "$work/run.log" | tail -n 1
      return
    fi
    new=$(sed -n -e 's/.*model \(tessera\.[^ ]*\) is not calibrated.*/\1/p' \
                 -e 's/^Codelet \(tessera\.[^ ]*\) does not have a perfmodel.*/\1/p' "$work/run.log" | sort -u)
    [ -n "$new" ] || break
    # shellcheck disable=SC2086
    python3 scripts/sim/simmodel.py regression "$dir" $new --cpu-gbs "$cpu" --gpu-gbs "$gpu" \
      --cpu-lat-us "$CPU_LAT_US" --gpu-lat-us "$GPU_LAT_US" "${kopts[@]}" > /dev/null
  done
  cat "$work/run.log" >&2
  echo "$(basename "$0" .sh): $bin $* failed" >&2
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

# A row of a steady-state table: `simulate` at STEPS and 2 x STEPS steps. Prints
# "seconds,seconds_2x,steady_ms,status,placement" (steady: the difference over STEPS steps, the
# first pass left out; status: the first failing run's; placement: the planner's line, commas
# as semicolons) and keeps the second run's output as LOG.
steady_row() {  # steps log model-dir-base cpu-gbs gpu-gbs binary args...
  local steps=$1 log=$2 status=0 line ms placement n
  shift 2
  local s=()
  for n in "$steps" $((2 * steps)); do
    line=$(simulate "$@" --steps "$n") || status=$?
    s+=("$(echo "$line" | field seconds)")
  done
  ms=$(awk -v a="${s[0]:-0}" -v b="${s[1]:-0}" -v n="$steps" 'BEGIN { printf "%.3f", (b - a) * 1000 / n }')
  placement=$(grep -m1 -E '^tessera: (tiles|placement) of' "$work/run.log" | sed 's/^tessera: //; s/,/;/g')
  cp "$work/run.log" "$log"
  echo "${s[0]},${s[1]},$ms,$status,$placement"
}
