#!/usr/bin/env bash
# Configures and builds Tessera (Release) into build/, or into $BUILD_DIR.
# Extra arguments go to the configure step: bash scripts/build.sh -DTESSERA_BUILD_BENCH=OFF
# nvcc in /usr/local/cuda/bin is put on PATH, so the CUDA kernels are compiled when it exists.
# STARPU_PREFIX=<prefix> (or -DTESSERA_STARPU_PREFIX=<prefix>) uses a StarPU built by
# scripts/build-starpu.sh instead of the system's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# STARPU_PREFIX=<prefix> builds against a StarPU from scripts/build-starpu.sh.
starpu=()
if [ -n "${STARPU_PREFIX:-}" ]; then starpu=(-DTESSERA_STARPU_PREFIX="$(cd "$STARPU_PREFIX" && pwd)"); fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${starpu[@]}" "$@"
cmake --build "$build" -j"$(nproc)"
