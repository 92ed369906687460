#!/usr/bin/env bash
# Runs an application on CPU workers only, then on GPU workers only, and compares the result it
# prints as <key>=<value> (checksum, rnm2, rms):
#   app_gpu_vs_cpu.sh <cuda_probe> <tolerance> <key> <app> [app arguments...]
#   app_gpu_vs_cpu.sh --emulated  <tolerance> <key> <app> [app arguments...]
# <tolerance> is relative (0: identical digits). The applications are built with FMA
# contraction allowed, so a GPU floating-point result may differ in the last bits.
# With a probe the GPU run is one CUDA worker (--ncpu 0 --ncuda 1); the script exits 77 (CTest
# skip) with the probe's one-line reason when CUDA tasks cannot run. With --emulated (a build
# with TESSERA_EMULATE_CUDA) it is two CPU workers in strict emulation
# (TESSERA_EMULATED_CUDA=strict), standing for two GPU workers: every task runs its CUDA body,
# and a task without one stops the run with its name, as a GPU-only run would refuse it.
set -euo pipefail

probe=$1 tolerance=$2 key=$3 app=$4
shift 4
gpu_run=(--ncpu 0 --ncuda 1)
gpu_env=()
if [ "$probe" = --emulated ]; then
  gpu_run=(--ncpu 2 --ncuda 0)
  gpu_env=(TESSERA_EMULATED_CUDA=strict)
else
  rc=0
  "$probe" || rc=$?
  if [ "$rc" -ne 0 ]; then exit "$rc"; fi
fi

result() {
  local out
  out=$(env "$@" --quiet)
  echo "$out" >&2
  sed -n "s/.* $key=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1
}
cpu=$(result TESSERA_EMULATED_CUDA=0 "$app" "$@" --ncpu 2 --ncuda 0)
gpu=$(result "${gpu_env[@]}" "$app" "$@" "${gpu_run[@]}")
if [ -z "$cpu" ] || [ -z "$gpu" ]; then
  echo "app_gpu_vs_cpu: no $key= in the output" >&2
  exit 1
fi
if [ "$tolerance" = 0 ]; then
  [ "$cpu" = "$gpu" ] || { echo "$key: CPU $cpu, GPU $gpu: not identical" >&2; exit 1; }
  echo "$key: CPU $cpu, GPU $gpu (identical)"
  exit 0
fi
awk -v c="$cpu" -v g="$gpu" -v t="$tolerance" -v k="$key" 'BEGIN {
  d = c - g; if (d < 0) d = -d; s = c < 0 ? -c : c
  if (d > t * (1 + s)) { printf "%s: CPU %s, GPU %s, beyond relative %s\n", k, c, g, t; exit 1 }
  printf "%s: CPU %s, GPU %s (relative tolerance %s)\n", k, c, g, t }'
