#!/usr/bin/env bash
# The test suite against StarPU 1.4.10, the StarPU with CUDA (.ci/run runs it after
# scripts/test.sh, which tests Debian's StarPU 1.3). The prebuilt 1.4.10 of
# ../shared/deps/starpu-1.4.10-debian12.tar.gz (CUDA, FxT, StarPU-MPI; relocatable .pc files) is
# unpacked into deps/starpu-1.4 when missing, or STARPU_PREFIX names a StarPU 1.4 of one's own
# (scripts/build-starpu.sh). Without a GPU it runs with 0 CUDA workers; the programs are compiled
# by the host compiler so that the emulated CUDA device runs every CUDA body on CPU workers, as
# on 1.3. BUILD_DIR defaults to build-14/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$root/build-14}
tarball=${STARPU14_TARBALL:-$root/../shared/deps/starpu-1.4.10-debian12.tar.gz}
prefix=${STARPU_PREFIX:-$root/deps/starpu-1.4}

if [ ! -f "$prefix/lib/pkgconfig/starpu-1.4.pc" ]; then
  if [ ! -f "$tarball" ]; then
    echo "test-starpu14: no StarPU 1.4 at $prefix and no prebuilt tarball at $tarball;" \
         "give STARPU_PREFIX=<a StarPU 1.4 prefix> or STARPU14_TARBALL=<its tarball>" >&2
    exit 1
  fi
  mkdir -p "$prefix"
  tar -xzf "$tarball" -C "$prefix" --strip-components=1
fi
# The prebuilt StarPU links CUDA 13's runtime libraries (it was built with CUDA): a machine
# without them cannot load it at all, GPU or not.
if ldd "$prefix/lib/libstarpu-1.4.so" | grep -q 'not found'; then
  echo "test-starpu14: SKIPPED: $prefix/lib/libstarpu-1.4.so needs libraries this machine lacks:" >&2
  ldd "$prefix/lib/libstarpu-1.4.so" | grep 'not found' >&2
  exit 0
fi
export STARPU_PREFIX=$prefix
# Left out, to keep .ci/run within its budget: the benchmarks (their checks are the 1.3 run's)
# and the checks of the sources themselves, which no StarPU changes (vec.point_loops: the
# compiler's vectorisation report of the point loop; the README's commands, which configure with
# the system's StarPU whichever this suite builds against; the docs' checks).
export CTEST_EXCLUDE=${CTEST_EXCLUDE:-'^(format|tidy|layers|function_length.*|vec\.point_loops|reliability\.readme_commands_build_emulated_tests|docs\..*)$'}
exec bash "$root/scripts/test.sh" -DTESSERA_CUDA_APPS=OFF -DTESSERA_BUILD_BENCH=OFF
