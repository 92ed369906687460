#!/usr/bin/env bash
# Builds what the simulation experiments need (docs/simulation.md), each only when missing:
#   StarPU 1.4 in SimGrid mode   $SIM_PREFIX   (default /work/opt/starpu-simgrid)
#   StarPU 1.4 real, CPU only    $REAL_PREFIX  (default /work/opt/starpu-1.4): calibrates the
#                                models and gives the measured times the simulation is checked on
#   Tessera's apps against each  build-sim/ and build-14/ (apps only; the apps are compiled
#                                by nvcc in build-sim so their kinds have CUDA implementations)
# Then prints the variables the experiment scripts read. Source it or run it first:
#   bash scripts/sim/setup.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
: "${SIM_PREFIX:=/work/opt/starpu-simgrid}" "${REAL_PREFIX:=/work/opt/starpu-1.4}"
: "${STARPU_TARBALL:=/work/shared/deps/starpu_1.4.10+dfsg.orig.tar.gz}"
export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc)

# SimGrid and matplotlib (the plots): the optional simulation group of install-deps.sh.
bash scripts/install-deps.sh --simulation

[ -f "$SIM_PREFIX/lib/pkgconfig/starpu-1.4.pc" ] ||
  bash scripts/build-starpu.sh "$STARPU_TARBALL" "$SIM_PREFIX" --simgrid -j"$jobs"
[ -f "$REAL_PREFIX/lib/pkgconfig/starpu-1.4.pc" ] ||
  bash scripts/build-starpu.sh "$STARPU_TARBALL" "$REAL_PREFIX" --no-cuda --no-mpi -j"$jobs"

apps_only=(-DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF)
cmake -S . -B build-sim "${apps_only[@]}" -DTESSERA_STARPU_PREFIX="$SIM_PREFIX" -DTESSERA_WITH_MPI=OFF > /dev/null
cmake --build build-sim -j"$jobs" --target heat3d jacobi2d life cardiac3d
cmake -S . -B build-14 "${apps_only[@]}" -DTESSERA_STARPU_PREFIX="$REAL_PREFIX" -DTESSERA_WITH_MPI=OFF \
  -DTESSERA_WITH_CUDA=OFF > /dev/null
cmake --build build-14 -j"$jobs" --target heat3d jacobi2d life cardiac3d
echo "setup: build-sim/ (simulated) and build-14/ (real) are ready"
