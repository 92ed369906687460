#!/usr/bin/env bash
# Builds StarPU 1.4 from a source tarball and installs it into a prefix:
#   bash scripts/build-starpu.sh <starpu-1.4.x.tar.gz> <prefix> [--mpi|--no-mpi] [--no-cuda] [--simgrid] [-jN]
# e.g.
#   bash scripts/build-starpu.sh /work/shared/deps/starpu_1.4.10+dfsg.orig.tar.gz deps/starpu-1.4
#   bash scripts/build-starpu.sh /work/shared/deps/starpu_1.4.10+dfsg.orig.tar.gz /work/opt/starpu-simgrid --simgrid
#
# What is enabled, and why:
#   CUDA   when nvcc is found (PATH, then /usr/local/cuda/bin); --no-cuda turns it off.
#   FxT    when pkg-config finds fxt (libfxt-dev), for StarPU's own traces.
#   MPI    --mpi / --no-mpi; by default on when mpicc is on PATH (starpumpi-1.4).
#   64 CPU workers (Debian's StarPU stops at 4); no docs, examples, tests, Fortran, OpenCL.
#   --simgrid: StarPU's simulation mode (libsimgrid-dev; docs/simulation.md). Tasks do not run:
#     their durations come from calibrated performance models and the machine from a SimGrid
#     platform file, so CPU+GPU nodes can be simulated here. StarPU refuses CUDA and FxT in this
#     mode (CUDA workers are simulated without the CUDA toolkit) and MPI is off by default:
#     with --mpi, StarPU-MPI is built over SimGrid's SMPI (smpicc) and, as SMPI requires,
#     statically (--disable-shared).
# CUDA 13 removed cudaDeviceProp::computeMode, which StarPU 1.4.10 still reads in two CUDA
# drivers; when the CUDA headers lack that member, the read is replaced by
# cudaDeviceGetAttribute(cudaDevAttrComputeMode) (a no-op on sources already fixed).
# The build directory is temporary; on success the script prints the option for Tessera:
#   -DTESSERA_STARPU_PREFIX=<prefix>
# Offline machines: source scripts/offline-deps.sh's env file first (docs/gpu.md).
set -euo pipefail

usage() { sed -n '2,3p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
tarball=$1
prefix=$2
shift 2
mpi=auto
cuda=auto
simgrid=no
jobs=$(nproc)
for arg in "$@"; do
  case $arg in
    --mpi) mpi=yes ;;
    --no-mpi) mpi=no ;;
    --no-cuda) cuda=no ;;
    --simgrid) simgrid=yes ;;
    -j*) jobs=${arg#-j} ;;
    *) echo "build-starpu: unknown argument '$arg'" >&2; usage ;;
  esac
done
[ -f "$tarball" ] || { echo "build-starpu: tarball '$tarball' not found" >&2; exit 2; }
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

flags=(--prefix="$prefix" --enable-maxcpus=64 --disable-opencl --disable-build-doc
       --disable-build-examples --disable-build-tests --disable-fortran --disable-socl
       --disable-starpufft --disable-hdf5)

if [ "$simgrid" = yes ]; then
  pkg-config --exists simgrid || {
    echo "build-starpu: --simgrid needs SimGrid (apt-get install libsimgrid-dev)" >&2; exit 2; }
  flags+=(--enable-simgrid --disable-fxt)
  cuda=no
  [ "$mpi" = auto ] && mpi=no
  if [ "$mpi" = yes ]; then flags+=(--disable-shared --enable-static); fi
  echo "build-starpu: SimGrid $(pkg-config --modversion simgrid) simulation mode"
fi

nvcc=""
if [ "$cuda" != no ]; then
  nvcc=$(command -v nvcc || true)
  if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; fi
fi
if [ -n "$nvcc" ]; then
  cuda_dir=$(cd "$(dirname "$nvcc")/.." && pwd)
  export PATH="$cuda_dir/bin:$PATH"
  flags+=(--with-cuda-dir="$cuda_dir")
  echo "build-starpu: CUDA from $cuda_dir"
else
  flags+=(--disable-cuda)
  if [ "$simgrid" = yes ]; then echo "build-starpu: CUDA workers simulated"; else echo "build-starpu: no nvcc, CUDA off"; fi
fi

if [ "$simgrid" = yes ]; then
  :
elif pkg-config --exists fxt 2>/dev/null; then
  flags+=(--with-fxt)
  echo "build-starpu: FxT found"
else
  echo "build-starpu: no fxt.pc (libfxt-dev), FxT off"
fi

if [ "$mpi" = auto ]; then
  if command -v mpicc >/dev/null; then mpi=yes; else mpi=no; fi
fi
if [ "$simgrid" = yes ] && [ "$mpi" = yes ] && ! command -v smpicc >/dev/null; then
  echo "build-starpu: --simgrid --mpi needs SimGrid's smpicc on PATH" >&2; exit 2
fi
if [ "$mpi" = yes ]; then flags+=(--enable-mpi); else flags+=(--disable-mpi); fi
echo "build-starpu: MPI $mpi"

work=$(mktemp -d "${TMPDIR:-/tmp}/build-starpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)

# The computeMode fix, only where the CUDA headers no longer have the member.
if [ -n "$nvcc" ] && ! grep -q 'computeMode' "$cuda_dir/include/driver_types.h"; then
  for f in "$src/src/drivers/cuda/driver_cuda.c" "$src/src/drivers/cuda/driver_cuda1.c"; do
    [ -f "$f" ] || continue
    if grep -q 'props\[devid\]\.computeMode' "$f"; then
      sed -i 's/^\(\s*\)if (props\[devid\]\.computeMode == cudaComputeModeExclusive)/\1int compute_mode = 0;\n\1cudaDeviceGetAttribute(\&compute_mode, cudaDevAttrComputeMode, devid);\n\1if (compute_mode == cudaComputeModeExclusive)/' "$f"
      if grep -q 'props\[devid\]\.computeMode' "$f"; then
        echo "build-starpu: could not patch computeMode in $f; edit it by hand" >&2
        exit 1
      fi
      echo "build-starpu: patched computeMode read in ${f#"$src"/}"
    fi
  done
fi

mkdir "$work/build"
cd "$work/build"
echo "build-starpu: configure ${flags[*]}"
"$src/configure" "${flags[@]}" > "$work/configure.log" 2>&1 || {
  tail -n 40 "$work/configure.log" >&2; echo "build-starpu: configure failed" >&2; exit 1; }
make -j"$jobs" > "$work/make.log" 2>&1 || {
  grep -n -m 20 -i 'error' "$work/make.log" >&2; tail -n 20 "$work/make.log" >&2
  echo "build-starpu: make failed" >&2; exit 1; }
make install > "$work/install.log" 2>&1 || {
  tail -n 20 "$work/install.log" >&2; echo "build-starpu: make install failed" >&2; exit 1; }

grep -E '^#define STARPU_(USE_(CUDA|MPI|FXT)|SIMGRID) ' "$prefix"/include/starpu/1.4/starpu_config.h || true
echo "build-starpu: installed into $prefix"
echo "build-starpu: configure Tessera with:  -DTESSERA_STARPU_PREFIX=$prefix"
