#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Tessera needs, only those that are missing.
#   bash scripts/install-deps.sh               what the build, tests and CI need
#   bash scripts/install-deps.sh --simulation  only the optional simulation group
#     (docs/simulation.md: SimGrid for scripts/build-starpu.sh --simgrid, matplotlib for the
#     plots); CI does not install it
set -euo pipefail

packages=(build-essential cmake pkg-config libstarpu-dev libhwloc-dev libopenmpi-dev openmpi-bin
          libtrilinos-kokkos-dev libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
          libfmt-dev libfxt-dev  # libfxt-dev: FxT traces in a StarPU from scripts/build-starpu.sh
          libmetis-dev  # mesh partitioning (tessera::partition_mesh)
          libfftw3-dev  # NAS FT (apps/ft) only; the library does not use it
          clang-format clang-tidy  # the format test (scripts/format.sh) and the lint script
          ccache  # scripts/build.sh: a second configuration recompiles only what differs
          chromium)  # headless, for the test that renders the HTML run report (~300 MB)
if [ "${1:-}" = --simulation ]; then
  packages=(libsimgrid-dev     # StarPU's SimGrid mode (scripts/build-starpu.sh --simgrid)
            xsltproc             # starpu_smpirun: the MPI cluster platform
            python3-matplotlib)  # the plots of scripts/sim/
fi

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
