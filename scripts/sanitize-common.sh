#!/usr/bin/env bash
# Shared by scripts/asan.sh and scripts/tsan.sh: configure a build directory with the given
# sanitizer flags (tests and apps, no benchmarks, no CUDA: nvcc does not take the sanitizers),
# build it, and run the test suite without the tests labelled `slow` (unless SLOW=1). The
# emulated CUDA device is in (its fibers announce their stack switches to the sanitizers:
# tessera/detail/cuda_emulation.hpp), so the stand-in GPUs' tests run under them too.
#   sanitize_build_and_test BUILD_DIR "compile and link flags" [ctest args...]
# SANITIZE_CMAKE_ARGS: more cmake options, split on spaces (tsan.sh's TSAN_STARPU=1).
# shellcheck disable=SC2086  # SANITIZE_CMAKE_ARGS: options, split on spaces
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize_build_and_test() {
  local build=$1 flags=$2
  shift 2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_BUILD_BENCH=OFF \
    -DTESSERA_WITH_CUDA=OFF -DTESSERA_CUDA_APPS=OFF -DTESSERA_EMULATE_CUDA=ON \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" ${SANITIZE_CMAKE_ARGS:-}
  cmake --build "$build" -j"${JOBS:-$(nproc)}"
  local labels=(-LE slow)
  [ "${SLOW:-0}" = 1 ] && labels=()
  ctest --test-dir "$build" --output-on-failure -j"${JOBS:-2}" "${labels[@]}" "$@"
}
