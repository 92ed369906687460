#!/usr/bin/env bash
# Installs what is missing, builds, and runs heat3d at its default size (256^3, 50 steps).
# Arguments go to heat3d: bash scripts/run-heat3d.sh --ncpu 2 --trace heat3d.json
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
"${BUILD_DIR:-$root/build}/apps/heat3d/heat3d" "$@"
