#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU (no package registry needed):
#   bash scripts/gpu-check.sh [starpu-1.4.x.tar.gz]
# 1. unpacks the carried Debian packages (deps/offline-debs, from scripts/offline-deps.sh pack)
#    when the machine lacks some of them, and uses them through deps/offline/env.sh;
# 2. builds StarPU 1.4 with CUDA from the tarball (default: deps/starpu_1.4*.tar.gz) into
#    deps/starpu-1.4-gpu with scripts/build-starpu.sh (skipped when already built there);
# 3. builds Tessera against it in build-gpu/: only what the check runs (the library, test_cuda,
#    the CUDA probe, heat3d, jacobi2d, life, bench_heat3d_gpu), every program compiled by nvcc;
# 4. checks that CUDA tasks can run here, then runs the cuda.* tests;
# 5. runs compute-sanitizer memcheck and racecheck on the CUDA test program and on heat3d;
# 6. runs bench_heat3d_gpu.
# FULL=1 builds every target and runs the full ctest in step 4 (about 3 times the build).
# Logs go to $OUT when set, else to build-gpu/gpu-check/. Exits non-zero on the first failure.
# CUDA_ARCH (default 90: H100/H200) sets CMAKE_CUDA_ARCHITECTURES; TESSERA_OFFLINE_DEPS=1 uses the
# carried packages even where the system has them.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=$root/build-gpu
logs=${OUT:-$build/gpu-check}
mkdir -p "$logs"
jobs=$(nproc)
# Each step's line says how long the step before it took (docs/gpu.md lists the figures).
started=$SECONDS
step() {
  echo "== gpu-check: $* (after $((SECONDS - started)) s)" | tee -a "$logs/summary.txt"
}
fail() { echo "gpu-check: FAILED: $*" | tee -a "$logs/summary.txt" >&2; exit 1; }

cuda_bin=""
if command -v nvcc >/dev/null; then cuda_bin=$(dirname "$(command -v nvcc)");
elif [ -x /usr/local/cuda/bin/nvcc ]; then cuda_bin=/usr/local/cuda/bin; fi
[ -n "$cuda_bin" ] || fail "no nvcc on PATH or in /usr/local/cuda/bin: install the CUDA toolkit"
export PATH="$cuda_bin:$PATH"
nvidia-smi -L > "$logs/nvidia-smi.txt" 2>&1 || true

# 1. Carried packages, only when something is missing (a Debian/Ubuntu with them all is used as is).
missing=0
for p in libhwloc-dev libfxt-dev libtrilinos-kokkos-dev libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev \
         pkg-config; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then missing=1; fi
done
if [ "$missing" = 1 ] || [ "${TESSERA_OFFLINE_DEPS:-0}" = 1 ]; then  # =1: use them anyway (to test)
  [ -d deps/offline-debs ] || fail "packages are missing and deps/offline-debs was not carried (docs/gpu.md)"
  step "unpacking deps/offline-debs into deps/offline"
  bash scripts/offline-deps.sh unpack deps/offline-debs deps/offline > "$logs/offline-deps.log" 2>&1 ||
    fail "offline-deps unpack (see $logs/offline-deps.log)"
  # shellcheck disable=SC1091
  source deps/offline/env.sh
fi

# 2. StarPU 1.4 with CUDA.
prefix=$root/deps/starpu-1.4-gpu
if ! grep -qs '^#define STARPU_USE_CUDA' "$prefix/include/starpu/1.4/starpu_config.h"; then
  tarball=${1:-$(ls deps/starpu_1.4*.tar.gz 2>/dev/null | head -n 1)}
  if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
    fail "no StarPU tarball: pass one or carry deps/starpu_1.4.10+dfsg.orig.tar.gz (docs/gpu.md)"
  fi
  step "building StarPU from $tarball into $prefix"
  bash scripts/build-starpu.sh "$tarball" "$prefix" -j"$jobs" > "$logs/build-starpu.log" 2>&1 ||
    fail "StarPU build (see $logs/build-starpu.log)"
fi

# 3. Tessera against it.
step "building Tessera in $build"
{
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTESSERA_STARPU_PREFIX="$prefix" \
    -DTESSERA_BUILD_TESTS=ON -DTESSERA_BUILD_BENCH=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" &&
    if [ "${FULL:-0}" = 1 ]; then
      cmake --build "$build" -j"$jobs"
    else
      cmake --build "$build" -j"$jobs" --target test_cuda tessera_cuda_probe heat3d jacobi2d life \
        bench_heat3d_gpu
    fi
} > "$logs/build-tessera.log" 2>&1 || fail "Tessera build (see $logs/build-tessera.log)"
grep -- '-- Tessera:' "$logs/build-tessera.log" | tee -a "$logs/summary.txt"
grep -q 'CUDA apps ON' "$logs/build-tessera.log" || fail "Tessera was not built with CUDA apps"

# StarPU's performance models and other state stay inside the build directory.
export STARPU_HOME=$build/starpu-home
mkdir -p "$STARPU_HOME"

# 4. CUDA must really be usable here, else the CUDA tests would only be skipped.
"$build/tests/tessera_cuda_probe" | tee -a "$logs/summary.txt" || fail "CUDA tasks cannot run on this machine"
tests=(-R '^cuda\.')
if [ "${FULL:-0}" = 1 ]; then tests=(); fi
step "ctest ${tests[*]:-(all)}"
ctest --test-dir "$build" -j"$(( jobs < 8 ? jobs : 8 ))" --output-on-failure --no-tests=error "${tests[@]}" \
  > "$logs/ctest.log" 2>&1 || { tail -n 30 "$logs/ctest.log"; fail "ctest (see $logs/ctest.log)"; }
tail -n 3 "$logs/ctest.log" | tee -a "$logs/summary.txt"
if grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: cuda\.' "$logs/ctest.log" | grep -q Skipped; then
  fail "a CUDA test was skipped on a machine with a GPU (see $logs/ctest.log)"
fi

# 5. compute-sanitizer on the CUDA code paths.
sanitizer=$cuda_bin/compute-sanitizer
[ -x "$sanitizer" ] || fail "no compute-sanitizer in $cuda_bin"
for tool in memcheck racecheck; do
  step "compute-sanitizer --tool $tool: test_cuda, heat3d"
  "$sanitizer" --tool "$tool" --error-exitcode 1 "$build/tests/test_cuda" > "$logs/$tool-test_cuda.log" 2>&1 ||
    fail "$tool on test_cuda (see $logs/$tool-test_cuda.log)"
  "$sanitizer" --tool "$tool" --error-exitcode 1 "$build/apps/heat3d/heat3d" --size 48 40 32 \
    --tile 48 40 8 --steps 5 --ncpu 0 --ncuda 1 --quiet > "$logs/$tool-heat3d.log" 2>&1 ||
    fail "$tool on heat3d (see $logs/$tool-heat3d.log)"
  grep -h 'ERROR SUMMARY' "$logs/$tool-test_cuda.log" "$logs/$tool-heat3d.log" | tee -a "$logs/summary.txt"
done
# 6. The GPU benchmark (docs/performance.md): Tessera GPU-only, automatic CPU+GPU and hand-set
# GPU fractions against a hand-written CUDA stencil and device copy bandwidth, bitwise checked.
# SKIP_BENCH=1 leaves it out.
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "bench_heat3d_gpu (GPU-only, auto, fractions 0.5..1)"
  "$build/bench/bench_heat3d_gpu" --fractions 0.5,0.6,0.7,0.8,0.9,1 ${BENCH_ARGS:-} \
    > "$logs/bench_heat3d_gpu.log" 2>&1 || fail "bench_heat3d_gpu (see $logs/bench_heat3d_gpu.log)"
  grep -E '^(bench|copy|kernel|gpu|auto|fraction|ratio)' "$logs/bench_heat3d_gpu.log" | tee -a "$logs/summary.txt"
fi
# 7. Automatic heterogeneous tiles (issue #26; docs/simulation.md has the predictions): the same
# benchmark with tiles the library chooses (--tile 0 0 0): GPU-only, the automatic split (the
# GPU's speed against a core's from the calibrated models) and hand-set shares of the split
# axis's planes. Twice: the first pass calibrates the CPU and CUDA models the split is read
# from; the second is the figure. SKIP_BENCH=1 leaves it out.
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "bench_heat3d_gpu, automatic tiles (GPU-only, automatic split, shares 0.5..1)"
  auto_bench=("$build/bench/bench_heat3d_gpu" --tile 0 0 0 --variants gpu,auto
              --fractions 0.5,0.6,0.7,0.8,0.9,0.95,1 ${BENCH_ARGS:-})
  "${auto_bench[@]}" --reps 1 > "$logs/bench_heat3d_gpu_auto_calibrate.log" 2>&1 &&
    "${auto_bench[@]}" > "$logs/bench_heat3d_gpu_auto.log" 2>&1 ||
    fail "bench_heat3d_gpu --tile 0 0 0 (see $logs/bench_heat3d_gpu_auto*.log)"
  grep -E '^(bench|gpu|auto|fraction|ratio|tessera: tiles)' "$logs/bench_heat3d_gpu_auto.log" |
    tee -a "$logs/summary.txt"
fi
step "all checks passed; logs in $logs"
