#!/usr/bin/env bash
# Builds StarPU 1.4 from source and installs it into a prefix:
#   bash scripts/build-starpu.sh <debian|starpu_*.dsc|starpu-1.4.x.tar.gz> <prefix> [--mpi|--no-mpi] [--no-cuda] [--simgrid] [-jN]
# The source, one of:
#   debian       Debian's source package starpu $STARPU_DEBIAN_VERSION (default 1.4.10+dfsg-2),
#                downloaded by `apt-get source --download-only` through a temporary deb-src line
#                for Debian unstable (a private apt configuration: the system's is not touched,
#                no root needed) and checked against its .dsc.
#   <file>.dsc   a source package already at hand (offline machines): its orig tarball beside it
#                is checked against the .dsc's SHA-256, then built.
#   <tarball>    any StarPU 1.4 source tarball, built as it is.
# e.g.
#   bash scripts/build-starpu.sh debian deps/starpu-1.4
#   bash scripts/build-starpu.sh path/to/starpu_1.4.10+dfsg-2.dsc /opt/starpu-simgrid --simgrid
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
source=$1
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
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/build-starpu.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Checks every file a .dsc lists that lies beside it (the orig tarball must) against the .dsc's
# SHA-256 and prints the orig tarball's path.
check_dsc() {
  local dsc=$1 dir sum size name orig=""
  dir=$(cd "$(dirname "$dsc")" && pwd)
  while read -r sum size name; do
    if [ ! -f "$dir/$name" ]; then
      case $name in *.orig.tar.*) echo "build-starpu: $name, listed in $dsc, is missing" >&2; exit 2 ;; esac
      continue
    fi
    echo "$sum  $dir/$name" | sha256sum --quiet -c - >&2 || {
      echo "build-starpu: $name does not match its SHA-256 in $dsc" >&2; exit 2; }
    case $name in *.orig.tar.*) orig=$dir/$name ;; esac
  done < <(sed -n '/^Checksums-Sha256:/,/^[^ ]/{/^ /p}' "$dsc")
  [ -n "$orig" ] || { echo "build-starpu: $dsc lists no orig tarball" >&2; exit 2; }
  echo "build-starpu: $(basename "$orig") matches $(basename "$dsc")" >&2
  echo "$orig"
}

# Downloads Debian's source package into $work/src-pkg and prints its .dsc's path. The deb-src
# line lives in a private apt configuration for this one download, so nothing of the system's
# apt setup changes. Debian 12 itself ships StarPU 1.3 only; unstable has 1.4.10.
fetch_debian() {
  local version=${STARPU_DEBIAN_VERSION:-1.4.10+dfsg-2} apt=$work/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$work/src-pkg"
  chmod 755 "$work" "$apt" "$work/src-pkg"  # apt downloads as the _apt user when run as root
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${STARPU_DEBIAN_MIRROR:-http://deb.debian.org/debian} unstable main" \
    > "$apt/sources.list"
  local opts=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
              -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache")
  echo "build-starpu: downloading starpu $version from Debian unstable (deb-src)" >&2
  if ! apt-get "${opts[@]}" update >"$work/apt.log" 2>&1 ||
     ! (cd "$work/src-pkg" && apt-get "${opts[@]}" source --download-only "starpu=$version") >>"$work/apt.log" 2>&1; then
    tail -n 5 "$work/apt.log" >&2
    echo "build-starpu: could not download Debian's source package; offline, pass a copy of" \
         "it instead: bash scripts/build-starpu.sh path/to/starpu_${version}.dsc <prefix>" >&2
    exit 1
  fi
  echo "$work/src-pkg/starpu_${version}.dsc"
}

case $source in
  debian) dsc=$(fetch_debian)
          tarball=$(check_dsc "$dsc") ;;
  *.dsc) [ -f "$source" ] || { echo "build-starpu: '$source' not found" >&2; exit 2; }
         tarball=$(check_dsc "$source") ;;
  *) [ -f "$source" ] || { echo "build-starpu: tarball '$source' not found" >&2; exit 2; }
     tarball=$(cd "$(dirname "$source")" && pwd)/$(basename "$source") ;;
esac

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

mkdir "$work/src"
tar -xzf "$tarball" -C "$work/src"
src=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d | head -n 1)

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
