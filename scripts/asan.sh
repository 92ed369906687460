#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of Tessera (build-asan/), then the test
# suite under it; any report fails the test that triggered it. SLOW=1 also runs the tests
# labelled slow; extra arguments go to ctest (e.g. -R mpi). See docs/reliability.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/sanitize-common.sh"
# StarPU, MPI and Kokkos are not instrumented and keep allocations until exit: no leak check.
# halt_on_error so that a report ends the test (and the run's exit status says so).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# mpirun's own child processes are not instrumented: nothing to preload.
sanitize_build_and_test "${BUILD_DIR:-$root/build-asan}" \
  "-fsanitize=address,undefined -fno-sanitize-recover=undefined" "$@"
