#!/usr/bin/env bash
# Builds what the simulation experiments need (docs/simulation.md), each only when missing:
#   StarPU 1.4 in SimGrid mode   $SIM_PREFIX   (default deps/starpu-simgrid)
#   StarPU 1.4 real              $REAL_PREFIX  (default deps/starpu-1.4): calibrates the models
#                                and gives the measured times the simulation is checked on
#   (each unpacked from ../shared/deps's prebuilt tarball, or built: scripts/sim/common.sh)
#   Tessera's apps against each  build-sim/ and build-14/ (apps only; the apps are compiled
#                                by nvcc in build-sim so their kinds have CUDA implementations)
# SIM_ONLY=1: the simulator and build-sim/ only (what node.sh, planner.sh and out-of-core.sh
# need; they run this when build-sim/ is missing).
#   bash scripts/sim/setup.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source scripts/sim/common.sh
export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc)

# SimGrid and matplotlib (the plots): the optional simulation group of install-deps.sh.
bash scripts/install-deps.sh --simulation

starpu_at "$SIM_PREFIX" starpu-1.4 starpu-1.4.10-simgrid-debian12.tar.gz --simgrid
apps_only=(-DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF)
cmake -S . -B build-sim "${apps_only[@]}" -DTESSERA_STARPU_PREFIX="$SIM_PREFIX" -DTESSERA_WITH_MPI=OFF > /dev/null
cmake --build build-sim -j"$jobs" --target heat3d jacobi2d life cardiac2d cardiac3d cloudsim nbody
if [ -n "${SIM_ONLY:-}" ]; then
  echo "setup: build-sim/ (simulated) is ready"
  exit 0
fi
starpu_at "$REAL_PREFIX" starpu-1.4 starpu-1.4.10-debian12.tar.gz --no-cuda --no-mpi
cmake -S . -B build-14 "${apps_only[@]}" -DTESSERA_STARPU_PREFIX="$REAL_PREFIX" -DTESSERA_WITH_MPI=OFF \
  -DTESSERA_WITH_CUDA=OFF > /dev/null
cmake --build build-14 -j"$jobs" --target heat3d jacobi2d life cardiac3d
echo "setup: build-sim/ (simulated) and build-14/ (real) are ready"
