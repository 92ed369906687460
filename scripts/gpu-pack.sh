#!/usr/bin/env bash
# Phase 1 of the GPU check, on a machine without a GPU: builds every GPU program with nvcc
# against a StarPU 1.4 with CUDA and packs what a bare GPU node needs into one archive:
#   bash scripts/gpu-pack.sh [--starpu <prefix|starpu-1.4*-debian12.tar.gz>] [--out <pack.tar.gz>]
# Default StarPU: the project's prebuilt one, ../shared/deps/starpu-1.4.10-debian12.tar.gz
# (relative to the repository root; a scripts/build-starpu.sh prefix works as well).
# Default archive: build-gpupack/tessera-gpu.tar.gz. Phase 2 is scripts/gpu-run.sh, on the node:
#   tar -xzf tessera-gpu.tar.gz && bash tessera-gpu/src/scripts/gpu-run.sh
# Built in build-gpupack/ (kept, so a second pack only rebuilds what changed):
#   CUDA_ARCH (default 90: H100/H200), GPU_TARGETS (default below), JOBS (default nproc).
# ccache, when on PATH, is the compilers' launcher (CCACHE_DISABLE=1 turns it off).
# The programs are built for the baseline x86-64 (TESSERA_NATIVE=OFF: the node's CPU is not this
# one, and without FMA instructions the host code cannot contract) and without MPI (one node;
# Open MPI's plugins would have to travel too). The archive holds the sources (git ls-files:
# the tests' scripts), the GPU_TARGETS programs and CTest files, StarPU's library and tools (not
# its Python module, which needs Debian's libpython3.11), and every library the
# programs load that is not glibc's, the compiler's or CUDA's (the node's CUDA is used): Debian
# 12's hwloc, fxt, fftw3, metis, Kokkos and what they need (udev). gpu-run.sh uses a carried
# library only where the node's loader does not know its name.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-gpupack
starpu=$root/../shared/deps/starpu-1.4.10-debian12.tar.gz
out=$build/tessera-gpu.tar.gz
while [ $# -gt 0 ]; do
  case $1 in
    --starpu) starpu=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
targets=${GPU_TARGETS:-"tessera_cuda_probe test_cuda bench_heat3d_gpu bench_bus_duplex heat3d jacobi2d life cardiac2d
  cardiac3d cloudsim nbody airfoil mg ft"}
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
command -v nvcc >/dev/null || { echo "gpu-pack: no nvcc (CUDA Toolkit) on PATH" >&2; exit 2; }
mkdir -p "$build"
log=$build/gpu-pack.log
: > "$log"

# StarPU: a prefix as it is, or the prebuilt tarball unpacked once into build-gpupack/.
if [ -f "$starpu" ]; then
  if [ ! -f "$build/starpu/.from" ] || [ "$(cat "$build/starpu/.from")" != "$starpu" ]; then
    rm -rf "$build/starpu" && mkdir -p "$build/starpu"
    tar -xzf "$starpu" -C "$build/starpu" --strip-components=1
    echo "$starpu" > "$build/starpu/.from"
  fi
  starpu=$build/starpu
fi
[ -f "$starpu/lib/pkgconfig/starpu-1.4.pc" ] ||
  { echo "gpu-pack: '$starpu' is no StarPU 1.4 prefix or tarball (--starpu)" >&2; exit 2; }
starpu=$(cd "$starpu" && pwd)
grep -qs '^#define STARPU_USE_CUDA 1' "$starpu/include/starpu/1.4/starpu_config.h" ||
  { echo "gpu-pack: the StarPU in $starpu has no CUDA" >&2; exit 2; }

echo "gpu-pack: building $targets" | tr -s ' \n' ' '; echo
t0=$SECONDS
launcher=()
if command -v ccache >/dev/null; then
  for lang in C CXX CUDA; do launcher+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=ccache"); done
fi
cmake -S "$root" -B "$build/tessera" -DCMAKE_BUILD_TYPE=Release -DTESSERA_STARPU_PREFIX="$starpu" \
  -DTESSERA_WITH_MPI=OFF -DTESSERA_NATIVE=OFF -DTESSERA_EMULATE_CUDA=OFF -DTESSERA_BUILD_TESTS=ON \
  -DTESSERA_BUILD_BENCH=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" "${launcher[@]}" >> "$log" 2>&1 ||
  { tail -n 30 "$log" >&2; echo "gpu-pack: configure failed ($log)" >&2; exit 1; }
grep -- '-- Tessera: StarPU' "$log" | tail -n 1
grep -q 'CUDA apps ON' "$log" || { echo "gpu-pack: Tessera would not compile its apps as CUDA" >&2; exit 1; }
# shellcheck disable=SC2046,SC2086
cmake --build "$build/tessera" -j"${JOBS:-$(nproc)}" $(printf -- '--target %s ' $targets) >> "$log" 2>&1 ||
  { grep -m 20 -i 'error' "$log" >&2; echo "gpu-pack: build failed ($log)" >&2; exit 1; }
echo "gpu-pack: configured and built in $((SECONDS - t0)) s (JOBS=${JOBS:-$(nproc)}${launcher:+, ccache${CCACHE_DISABLE:+ disabled}})"

# The tree that travels: tessera-gpu/{src,build,starpu/lib,lib}; gpu-run.sh rewrites the CTest
# files' absolute paths of this machine to wherever it is unpacked.
stage=$build/stage/tessera-gpu
rm -rf "$build/stage" && mkdir -p "$stage/src" "$stage/lib" "$stage/starpu"
git -C "$root" ls-files -z | (cd "$root" && xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$stage/src"
mkdir -p "$stage/build"
# The CTest files, and of the programs only the targets': a build tree that has built more (a
# wider GPU_TARGETS earlier) packs no more than asked.
names=()
for t in $targets; do names+=(-o -name "$t"); done
(cd "$build/tessera" && find . -name CMakeFiles -prune -o \( -name CTestTestfile.cmake -o \
   -name '*_tests.cmake' -o -name '*_include.cmake' -o \( -type f -perm -u+x \( -false "${names[@]}" \) \) \) \
   -print0 | tar -cf - --null -T -) | tar -xf - -C "$stage/build"
for t in $targets; do
  [ -n "$(find "$stage/build" -type f -name "$t")" ] || { echo "gpu-pack: no program $t built" >&2; exit 1; }
done
cp -a "$starpu/lib" "$stage/starpu/"
# StarPU-MPI stays behind: the programs are built without MPI, and it would bring Open MPI.
# Nor its Python module (starpupy needs the packing machine's libpython) and module file.
rm -rf "$stage/starpu/lib/pkgconfig" "$stage/starpu/lib"/*.a "$stage/starpu/lib"/*.la \
  "$stage/starpu/lib"/libstarpumpi* "$stage/starpu/lib"/python3* "$stage/starpu/lib/starpu/python" \
  "$stage/starpu/lib/modules"
cp -a "$starpu/bin" "$stage/starpu/" 2>/dev/null || true  # starpu_fxt_tool and friends
printf 'build=%s\nsrc=%s\nstarpu=%s\n' "$build/tessera" "$root" "$starpu" > "$stage/paths.txt"

# Libraries: everything the programs and StarPU load, less glibc, the compiler's runtime, CUDA's
# and what the pack holds itself, then what those need in turn.
skip='/(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s|libgomp|libcuda[^/]*|libcu[A-Za-z]*|libnvJitLink|libnvrtc|libnvidia[^/]*)\.so'
needs() { for f in "$@"; do ldd "$f" 2>/dev/null || true; done | awk '$3 ~ /^\// {print $3}' | sort -u |
            grep -Ev "$skip" | grep -v -e "^$build/" -e "^$starpu/" || true; }
mapfile -t bins < <(find "$stage/build" -type f -executable ! -name '*.sh' -exec sh -c 'file -b "$1" | grep -q ELF' _ {} \; -print)
for l in $(needs "${bins[@]}" "$stage"/starpu/lib/*.so*); do cp -Ln "$l" "$stage/lib/"; done
for l in $(needs "$stage"/lib/*); do cp -Ln "$l" "$stage/lib/" 2>/dev/null || true; done
strip --strip-unneeded "${bins[@]}" "$stage"/lib/* 2>/dev/null || true

mkdir -p "$(dirname "$out")"
tar -czf "$out" -C "$build/stage" tessera-gpu
size=$(stat -c %s "$out")
echo "gpu-pack: $(find "$stage/lib" -type f | wc -l) carried libraries: $(cd "$stage/lib" && ls | tr '\n' ' ')"
echo "gpu-pack: $(find "$stage/build" -type f -perm -u+x | wc -l) programs, $(du -sh "$stage" | cut -f1) unpacked"
echo "gpu-pack: $out, $((size / 1024 / 1024)) MB ($size bytes), $((SECONDS - t0)) s in all"
if [ "$size" -ge $((40 * 1024 * 1024)) ]; then echo "gpu-pack: over 40 MB" >&2; exit 1; fi
echo "gpu-pack: on the GPU node: tar -xzf $(basename "$out") && bash tessera-gpu/src/scripts/gpu-run.sh"
