#!/usr/bin/env bash
# Configures and builds Tessera (Release) into build/, or into $BUILD_DIR.
# Extra arguments go to the configure step: bash scripts/build.sh -DTESSERA_BUILD_BENCH=OFF
# nvcc in /usr/local/cuda/bin is put on PATH, so the CUDA kernels are compiled when it exists.
# STARPU_PREFIX=<prefix> (or -DTESSERA_STARPU_PREFIX=<prefix>) uses a StarPU built by
# scripts/build-starpu.sh instead of the system's.
# TESSERA_GPU=ON (a machine with nvcc and a GPU) needs a StarPU with CUDA, which Debian's is not:
# without STARPU_PREFIX, the user's own starpu-1.4 on PKG_CONFIG_PATH is used if it has CUDA,
# else StarPU 1.4 is built once into deps/starpu-1.4-gpu (scripts/build-starpu.sh, from
# $STARPU_SOURCE: default `debian`, Debian's source package; offline, a .dsc at hand).
# BUILD_TARGETS="a b" builds only those targets (default: all).
# ccache, where installed, compiles the C++ and CUDA sources (TESSERA_CCACHE=0: without it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# Prints the prefix of starpu-1.4 on pkg-config's path when that StarPU has CUDA.
starpu_with_cuda() {
  local inc
  pkg-config --exists starpu-1.4 2>/dev/null || return 1
  inc=$(pkg-config --variable=includedir starpu-1.4)
  grep -qs '^#define STARPU_USE_CUDA 1' "$inc/starpu/1.4/starpu_config.h" || return 1
  (cd "$(pkg-config --variable=prefix starpu-1.4)" && pwd)
}

if [ "${TESSERA_GPU:-OFF}" = ON ] && [ -z "${STARPU_PREFIX:-}" ] &&
   [[ " $* " != *TESSERA_STARPU_PREFIX=* ]]; then
  command -v nvcc >/dev/null || {
    echo "build: TESSERA_GPU=ON needs nvcc (the CUDA Toolkit) on PATH or in /usr/local/cuda/bin" >&2
    exit 2; }
  if own=$(starpu_with_cuda); then
    echo "build: TESSERA_GPU=ON, StarPU with CUDA from PKG_CONFIG_PATH: $own"
    STARPU_PREFIX=$own
  else
    STARPU_PREFIX=$root/deps/starpu-1.4-gpu
    if ! PKG_CONFIG_PATH=$STARPU_PREFIX/lib/pkgconfig starpu_with_cuda >/dev/null; then
      echo "build: TESSERA_GPU=ON and no StarPU with CUDA: building StarPU 1.4 into $STARPU_PREFIX (minutes)"
      bash "$root/scripts/build-starpu.sh" "${STARPU_SOURCE:-debian}" "$STARPU_PREFIX" -j"$(nproc)"
    fi
  fi
fi

# STARPU_PREFIX=<prefix> builds against a StarPU from scripts/build-starpu.sh.
starpu=()
fresh=()
if [ -n "${STARPU_PREFIX:-}" ]; then
  STARPU_PREFIX=$(cd "$STARPU_PREFIX" && pwd)
  starpu=(-DTESSERA_STARPU_PREFIX="$STARPU_PREFIX")
  # pkg-config's results stay in the cache: another StarPU needs a fresh configure.
  cached=$(sed -n 's/^TESSERA_STARPU_PREFIX:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  if [ -f "$build/CMakeCache.txt" ] && [ "$cached" != "$STARPU_PREFIX" ]; then fresh=(--fresh); fi
fi

# ccache: a second configuration of the same checkout (.ci/run's StarPU 1.4 after 1.3) recompiles
# only the sources whose preprocessed text differs, those that include StarPU's headers (its
# preprocessor mode leaves the include paths out of the hash): that build took 91 s instead of
# 411 (docs/building.md, "CI's time"). A launcher given on the command line wins.
# Without it (TESSERA_CCACHE=0, or not installed) a cached launcher is cleared.
launcher=()
if [[ " $* " != *CMAKE_CXX_COMPILER_LAUNCHER=* ]]; then
  if [ "${TESSERA_CCACHE:-1}" != 0 ] && command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  else
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
  fi
fi

cmake "${fresh[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${starpu[@]}" \
  "${launcher[@]}" "$@"
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
