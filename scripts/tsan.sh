#!/usr/bin/env bash
# ThreadSanitizer build of Tessera (build-tsan/), then the test suite under it. StarPU, MPI and
# Kokkos are not instrumented: reports inside them (StarPU's workers hand data over through
# their own locks that TSan does not see) are suppressed by scripts/tsan.supp, so what remains
# points at Tessera's code (its recorder callbacks, the progress thread, the runtime context).
# SLOW=1 also runs the tests labelled slow; extra arguments go to ctest. docs/reliability.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/sanitize-common.sh"
# history_size=7: the longest access history, so that the other side of a report can be restored
# and matched against tsan.supp. With the default, Open MPI's progress (StarPU-MPI's thread,
# completing a blocking collective's request that lives on the main thread's stack) came back as
# "failed to restore the stack", which no suppression can match, whenever later main-thread code
# reused that stack slot (mpi.autotile.np2 and np3, 3 runs in 8).
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$root/scripts/tsan.supp:halt_on_error=1:report_signal_unsafe=0:second_deadlock_stack=1:history_size=7}
# Open MPI copies large messages into the receiver's buffer with process_vm_readv from its
# btl/vader plugin, on whichever thread drives MPI's progress (often StarPU-MPI's): TSan sees
# that write but not the request's completion flag that orders it before the program's reads
# (reported in the field gather of mpi.app.ft.S). Without the single copy, Open MPI copies in
# libopen-pal, whose calls tsan.supp ignores. (Plugins cannot go under called_from_lib: TSan
# exits when Open MPI unloads them at MPI_Finalize.)
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# The stand-ins with a memory node of their own (emulated.numa.*: StarPU moves their tiles
# between RAM nodes) are left out unless TSAN_NUMA=1: TSan cannot see how an uninstrumented
# StarPU orders those copies (its spin locks are its own atomics), and reports races that an
# instrumented StarPU shows are not there (docs/reliability.md, "Sanitizer runs").
numa=(-E 'emulated\.numa\.')
[ "${TSAN_NUMA:-0}" = 1 ] && numa=()
build=${BUILD_DIR:-$root/build-tsan}
# TSAN_STARPU=1: against a StarPU 1.4 built with -fsanitize=thread too (once, into
# deps/starpu-1.4-tsan, from ../shared/deps's source package where there is one, else Debian's;
# no MPI, no CUDA), in build-tsan-starpu, the NUMA stand-ins included. TSan then sees StarPU's
# own order; what StarPU races with itself (counters and flags it reads without its locks) is
# left to it by scripts/tsan-starpu.supp (top frames in StarPU); tsan.supp's lines for StarPU
# (and for its unregister hand-off, which TSan then sees ordered) are left out.
if [ "${TSAN_STARPU:-0}" = 1 ]; then
  prefix=$root/deps/starpu-1.4-tsan
  if [ ! -f "$prefix/lib/pkgconfig/starpu-1.4.pc" ]; then
    src=debian
    for dsc in "$root"/../shared/deps/starpu_*.dsc; do [ -f "$dsc" ] && src=$dsc; done
    CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" LDFLAGS="-fsanitize=thread" \
      bash "$root/scripts/build-starpu.sh" "$src" "$prefix" --no-mpi --no-cuda
  fi
  export SANITIZE_CMAKE_ARGS="-DTESSERA_STARPU_PREFIX=$prefix -DTESSERA_WITH_MPI=OFF"
  build=${BUILD_DIR:-$root/build-tsan-starpu}
  mkdir -p "$build"
  { grep -v -E 'starpu_|^race_top:pthread_(mutex|cond)_init$' "$root/scripts/tsan.supp"
    cat "$root/scripts/tsan-starpu.supp"; } > "$build/tsan.supp"
  export TSAN_OPTIONS=${TSAN_OPTIONS/$root\/scripts\/tsan.supp/$build/tsan.supp}
  numa=()
fi
sanitize_build_and_test "$build" "-fsanitize=thread" "${numa[@]}" "$@"
