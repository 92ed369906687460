#!/usr/bin/env bash
# Issue 71's all-pairs rows (docs/simulation.md, "All-pairs work priced as a GPU runs it"): nbody
# of 4096, 16384 and 65536 bodies on the nvlink node of multi-gpu.sh (4 GPUs over NVLink, 64
# cores), a pairs task priced by a CUDA kernel's measured curve (simmodel.py PAIRS_KERNELS;
# KERNEL, default thread-per-target: today's kernel as an H200 ran it), on 1 GPU, 4 GPUs, 60
# cores and 4 GPUs with 60 cores (the planner's choice), steady over NBODY_STEPS (10) of 2 x.
#   bash scripts/sim/pairs.sh [out-dir]     (default build/sim)
# Writes out-dir/pairs.csv and prints its table: per size the steady ms a step, the speed-up
# over 1 GPU, and the planner's result against the best single class (GPUs or cores).
# TABLE_ONLY=1: the table of an existing out-dir/pairs.csv (and its logs), no runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-pairs.XXXXXX")}
[ -n "${SIM_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
: "${RUN_TIMEOUT:=1200}" "${KERNEL:=thread-per-target}"
steps=${NBODY_STEPS:-10}
export NODE="--gpus 4 --cpus 64 --gpu-link-gbs 300"
csv="$out/pairs.csv"
if [ -z "${TABLE_ONLY:-}" ]; then
  source scripts/sim/node-calibration.sh
  echo "kernel,bodies,workers,steps,simulated_s,simulated_2x_s,steady_ms_per_step,status,placement" > "$csv.part"
  for n in ${NBODY_SIZES:-4096 16384 65536}; do
    for run in 1-gpu 4-gpus 60-cpus 4-gpus+cpus; do
      case $run in
        1-gpu) w=(--ncpu 0 --ncuda 1) ;;
        4-gpus) w=(--ncpu 0 --ncuda 4) ;;
        60-cpus) w=(--ncpu 60 --ncuda 0) ;;
        4-gpus+cpus) w=(--ncpu 60 --ncuda 4) ;;
      esac
      row=$(steady_row "$steps" "$out/pairs-$n-$run.log" "$work/models-$KERNEL" 20 2600 \
        "pairs=0.1753:$KERNEL" nbody/nbody --size "$n" "${w[@]}")
      echo "$KERNEL,$n,$run,$steps,$row" | tee -a "$csv.part"
    done
  done
  mv "$csv.part" "$csv"
fi
python3 - "$csv" "$out" <<'PY'
import csv, os, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))


def chose(n):  # the planner's tiles and whether it split, from the run's log
    log = open(os.path.join(sys.argv[2], f"pairs-{n}-4-gpus+cpus.log")).read()
    tiles = re.findall(r" tiles=(\d+)", log)
    split = re.findall(r" split=(\S+)", log)
    return (f"split {split[-1]}, " if split else "GPUs only, ") + f"{tiles[-1] if tiles else '?'} tile(s)"



print("| kernel priced | bodies | 1 GPU ms | 4 GPUs ms (x 1 GPU) | 60 cores ms | 4 GPUs + 60 cores ms | best single / planner's | planner chose |")
print("|---|---|---|---|---|---|---|---|")
for n in dict.fromkeys(r["bodies"] for r in rows):
    by = {r["workers"]: r for r in rows if r["bodies"] == n}
    ms = {k: float(v["steady_ms_per_step"]) for k, v in by.items()}
    best = min(ms["4-gpus"], ms["60-cpus"])
    predicted = re.search(r"predicted step: GPU-only ([^;]*)", by["4-gpus+cpus"]["placement"])
    chose_text = chose(n) + (f" (predicted {predicted.group(1)})" if predicted else "")
    print(f"| {rows[0]['kernel']} | {n} | {ms['1-gpu']:.3f} | {ms['4-gpus']:.3f} ({ms['1-gpu'] / ms['4-gpus']:.2f}x) "
          f"| {ms['60-cpus']:.3f} | {ms['4-gpus+cpus']:.3f} | {best / ms['4-gpus+cpus']:.3f} | {chose_text} |")
PY
