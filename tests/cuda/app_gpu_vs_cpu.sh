#!/usr/bin/env bash
# Runs an application on CPU workers only, then on one CUDA worker only, and compares the
# checksums it prints:
#   app_gpu_vs_cpu.sh <cuda_probe> <tolerance> <app> [app arguments...]
# <tolerance> is relative (0: identical digits). The applications are built with FMA
# contraction allowed, so a GPU floating-point checksum may differ in the last bits.
# Exits 77 (CTest skip) with the probe's one-line reason when CUDA tasks cannot run.
set -euo pipefail

probe=$1 tolerance=$2 app=$3
shift 3
rc=0
"$probe" || rc=$?
if [ "$rc" -ne 0 ]; then exit "$rc"; fi

checksum() {
  local out
  out=$("$app" "$@" --quiet)
  echo "$out" >&2
  sed -n 's/.* checksum=\([^ ]*\).*/\1/p' <<<"$out"
}
cpu=$(checksum "$@" --ncpu 2 --ncuda 0)
gpu=$(checksum "$@" --ncpu 0 --ncuda 1)
if [ -z "$cpu" ] || [ -z "$gpu" ]; then
  echo "app_gpu_vs_cpu: no checksum= in the output" >&2
  exit 1
fi
awk -v c="$cpu" -v g="$gpu" -v t="$tolerance" 'BEGIN {
  d = c - g; if (d < 0) d = -d; s = c < 0 ? -c : c
  if (d > t * (1 + s)) { printf "checksum: CPU %s, CUDA %s, beyond relative %s\n", c, g, t; exit 1 }
  printf "checksum: CPU %s, CUDA %s (relative tolerance %s)\n", c, g, t }'
