#!/usr/bin/env bash
# Installs a built Tessera into <work-dir>/prefix, then builds and runs tests/install/main.cpp
# against that prefix twice: with find_package(Tessera) and with pkg-config.
#   bash tests/install/run.sh <tessera-source-dir> <tessera-build-dir> <work-dir>
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 <tessera-source-dir> <tessera-build-dir> <work-dir>" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
mkdir -p "$3"
work=$(cd "$3" && pwd)
prefix="$work/prefix"
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

echo "== install $build into $prefix"
rm -rf "$prefix" "$work/cmake-consumer" "$work/pkgconfig-consumer"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

echo "== find_package(Tessera) consumer"
cmake -S "$src/tests/install" -B "$work/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake-consumer.log"
cmake --build "$work/cmake-consumer" -j"$(nproc)" >>"$work/cmake-consumer.log"
"$work/cmake-consumer/consumer"

echo "== pkg-config consumer"
pc=$(find "$prefix" -name tessera.pc -print -quit)
if [ -z "$pc" ]; then
  echo "run.sh: no tessera.pc installed under $prefix" >&2
  exit 1
fi
PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# tessera.pc requires the StarPU module; a StarPU from scripts/build-starpu.sh is found
# through its prefix, as the build was told with TESSERA_STARPU_PREFIX.
starpu_prefix=$(sed -n 's/^TESSERA_STARPU_PREFIX:PATH=//p' "$build/CMakeCache.txt")
if [ -n "$starpu_prefix" ]; then PKG_CONFIG_PATH="$PKG_CONFIG_PATH:$starpu_prefix/lib/pkgconfig"; fi
export PKG_CONFIG_PATH
mkdir -p "$work/pkgconfig-consumer"
flags=$(pkg-config --cflags --libs tessera)
echo "pkg-config --cflags --libs tessera: $flags"
# shellcheck disable=SC2086  # the flags are meant to split
"${CXX:-c++}" -O2 "$src/tests/install/main.cpp" -o "$work/pkgconfig-consumer/consumer" $flags
"$work/pkgconfig-consumer/consumer"

echo "== tessera-trace (the trace tool) installed and runs"
"$prefix/bin/tessera-trace" --help | grep -q -- "--compare"

echo "install test: both consumers passed"
