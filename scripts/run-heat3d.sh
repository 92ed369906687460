#!/usr/bin/env bash
# Installs what is missing, builds heat3d, and runs it at its default size (256^3, 50 steps).
# Arguments go to heat3d: bash scripts/run-heat3d.sh --ncpu 2 --trace heat3d.json
# TESSERA_GPU=ON on a machine with nvcc and a GPU: StarPU 1.4 with CUDA first (scripts/build.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
BUILD_TARGETS=heat3d bash "$root/scripts/build.sh"
"${BUILD_DIR:-$root/build}/apps/heat3d/heat3d" "$@"
