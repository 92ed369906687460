#!/usr/bin/env bash
# Installs what is missing, builds Tessera with its tests, and runs them all with CTest.
# BUILD_DIR picks the build directory (default build/). The emulated CUDA device and its tests
# are built unless TESSERA_EMULATE_CUDA=OFF (docs/gpu.md), or TESSERA_GPU=ON (a real GPU build,
# which cannot link them). Arguments go to the configure step.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$root/build}
if [ "${TESSERA_GPU:-OFF}" = ON ]; then default_emulate=OFF; else default_emulate=ON; fi
export TESSERA_EMULATE_CUDA=${TESSERA_EMULATE_CUDA:-$default_emulate}
bash "$root/scripts/install-deps.sh"
# Passed on the configure line, not only through the environment: a build/ that
# run-heat3d.sh configured first holds TESSERA_EMULATE_CUDA=OFF in its cache, which the
# environment's default does not change, and the emulated tests would be left out without a word.
bash "$root/scripts/build.sh" -DTESSERA_BUILD_TESTS=ON -DTESSERA_EMULATE_CUDA="$TESSERA_EMULATE_CUDA" "$@"
# CTEST_EXCLUDE: a regular expression of tests to leave out (scripts/test-starpu14.sh's checks
# that do not depend on StarPU).
exclude=()
if [ -n "${CTEST_EXCLUDE:-}" ]; then exclude=(-E "$CTEST_EXCLUDE"); fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j2 "${exclude[@]}"
