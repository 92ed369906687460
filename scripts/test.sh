#!/usr/bin/env bash
# Installs what is missing, builds Tessera with its tests, and runs them all with CTest.
# BUILD_DIR picks the build directory (default build/). The emulated CUDA device and its tests
# are built unless TESSERA_EMULATE_CUDA=OFF (docs/gpu.md). Arguments go to the configure step.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$root/build}
export TESSERA_EMULATE_CUDA=${TESSERA_EMULATE_CUDA:-ON}
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" -DTESSERA_BUILD_TESTS=ON "$@"
# CTEST_EXCLUDE: a regular expression of tests to leave out (scripts/test-starpu14.sh's checks
# that do not depend on StarPU).
exclude=()
if [ -n "${CTEST_EXCLUDE:-}" ]; then exclude=(-E "$CTEST_EXCLUDE"); fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j2 "${exclude[@]}"
