#!/usr/bin/env bash
# Checks that the CPU point loop (include/tessera/detail/tile_points.hpp) vectorises for the
# applications' functors: heat3d (double, Star, 3-D), jacobi2d (float, two inputs), life
# (uint8, Box) as the app writes it (|| and &&) and with | and &, a float Box blur,
# cardiac's reaction loop (two InOut doubles), cardiac's stencil (r in place) and cloudsim's
# (edge cases as selects). Each is compiled alone from
# tests/vec/point_loops.cpp with the compiler's vectorisation report (-fopt-info-vec) and the
# flags of the apps (-O3, TESSERA_NATIVE's -march=native -ffp-contract=off unless
# VEC_FLAGS says otherwise); a case fails when the report names no vectorised loop in
# tile_points.hpp. Exit status 1 if any case fails.
#   bash scripts/vec-report.sh                       # native
#   VEC_FLAGS="-O3 -ffp-contract=off" bash scripts/vec-report.sh   # the SSE2 baseline
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-c++}
flags=${VEC_FLAGS:-"-O3 -march=native -ffp-contract=off"}
kokkos=$(dirname "$(find /usr/include /usr/local/include -maxdepth 3 -name Kokkos_Core.hpp -print -quit 2>/dev/null)")
starpu=$(pkg-config --cflags starpu-1.4 2>/dev/null || pkg-config --cflags starpu-1.3)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names=(heat3d jacobi2d life life-bitwise box-float cardiac-reaction cardiac cloudsim)
failed=0
for i in "${!names[@]}"; do
  case_no=$((i + 1))
  # shellcheck disable=SC2086
  if ! "$cxx" -std=c++17 -DNDEBUG $flags -I"$root" -I"$root/include" -isystem "$kokkos" $starpu \
       -DPOINT_LOOP=$case_no -c "$root/tests/vec/point_loops.cpp" -o "$tmp/$case_no.o" \
       -fopt-info-vec-optimized 2>"$tmp/$case_no.txt"; then
    cat "$tmp/$case_no.txt" >&2
    echo "vec-report: ${names[$i]}: does not compile" >&2
    exit 2
  fi
  widths=$(grep -E 'tile_points\.hpp:[0-9]+:[0-9]+: optimized: loop vectorized using' "$tmp/$case_no.txt" \
             | sed -E 's/.*using ([0-9]+) byte vectors.*/\1/' | sort -nu | tr '\n' ' ' || true)
  if [ -n "$widths" ]; then
    printf 'vec-report: %-17s vectorised (%sbyte vectors)\n' "${names[$i]}" "$widths"
  else
    printf 'vec-report: %-17s NOT vectorised\n' "${names[$i]}"
    grep 'tile_points' "$tmp/$case_no.txt" || true
    failed=1
  fi
done
exit $failed
