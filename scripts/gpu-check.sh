#!/usr/bin/env bash
# Both phases of the GPU check on one machine that has nvcc and a GPU (docs/gpu.md):
#   bash scripts/gpu-check.sh [debian|<starpu .dsc>|<starpu tarball>|<StarPU prefix>]
# 1. StarPU 1.4 with CUDA: the prefix given, else deps/starpu-1.4-gpu, built there first by
#    scripts/build-starpu.sh from the source given (default: Debian's source package) when absent;
# 2. scripts/gpu-pack.sh builds every GPU program against it and packs them;
# 3. scripts/gpu-run.sh runs the pack's checks (results in $OUT, else build-gpupack/results).
# Where the GPU is lent briefly, run phase 1 (gpu-pack.sh) elsewhere beforehand instead.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source=${1:-debian}
if [ -f "$source/lib/pkgconfig/starpu-1.4.pc" ]; then
  prefix=$source
else
  prefix=$root/deps/starpu-1.4-gpu
  if ! grep -qs '^#define STARPU_USE_CUDA 1' "$prefix/include/starpu/1.4/starpu_config.h"; then
    bash "$root/scripts/build-starpu.sh" "$source" "$prefix" --no-mpi
  fi
fi
bash "$root/scripts/gpu-pack.sh" --starpu "$prefix" --out "$root/build-gpupack/tessera-gpu.tar.gz"
rm -rf "$root/build-gpupack/run" && mkdir -p "$root/build-gpupack/run"
tar -xzf "$root/build-gpupack/tessera-gpu.tar.gz" -C "$root/build-gpupack/run"
OUT=${OUT:-$root/build-gpupack/results} bash "$root/build-gpupack/run/tessera-gpu/src/scripts/gpu-run.sh"
