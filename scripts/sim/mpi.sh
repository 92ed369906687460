#!/usr/bin/env bash
# StarPU-MPI over SimGrid's SMPI (docs/simulation.md): the 2-rank validation and heat3d weak
# scaling on 1..64 simulated nodes, with and without the rank-edge priorities.
#   bash scripts/sim/mpi.sh [out-dir]          (default docs/sim)
# Needs StarPU 1.4 in SimGrid mode with MPI, built statically as SMPI requires
# (scripts/build-starpu.sh ... --simgrid --mpi into $SMPI_PREFIX, default
# /work/opt/starpu-simgrid-mpi) and Tessera compiled by smpicxx against it (build-smpi/, CPU
# kinds only: nvcc does not take smpicxx as its host compiler here). Rank-edge priorities
# "with": scheduler dmdas (orders ready tasks by priority); "without": dmda (ignores them).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-docs/sim}
mkdir -p "$out"
: "${SMPI_PREFIX:=/work/opt/starpu-simgrid-mpi}" "${STARPU_TARBALL:=/work/shared/deps/starpu_1.4.10+dfsg.orig.tar.gz}"
[ -f "$SMPI_PREFIX/lib/pkgconfig/starpumpi-1.4.pc" ] ||
  bash scripts/build-starpu.sh "$STARPU_TARBALL" "$SMPI_PREFIX" --simgrid --mpi -j"$(nproc)"
if [ ! -x build-smpi/apps/heat3d/heat3d ]; then
  CC=smpicc CXX=smpicxx cmake -S . -B build-smpi -DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_TESTS=OFF \
    -DTESSERA_BUILD_BENCH=OFF -DTESSERA_STARPU_PREFIX="$SMPI_PREFIX" -DTESSERA_WITH_MPI=ON \
    -DTESSERA_WITH_CUDA=OFF > /dev/null
  cmake --build build-smpi -j"$(nproc)" --target heat3d
fi
[ -x build/apps/heat3d/heat3d ] || bash scripts/build.sh > /dev/null
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-mpi.XXXXXX")}
mkdir -p "$work/home"
export STARPU_HOME="$work/home"
host=$(hostname)
source scripts/sim/common.sh

cluster() {  # nodes bandwidth latency -> cluster.xml, hostfile
  local n=$1 bw=$2 lat=$3
  cat > "$work/cluster-$n.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="nodes" prefix="node" suffix="" radical="0-$((n - 1))" speed="1Gf" bw="$bw" lat="$lat"
           bb_bw="$bw" bb_lat="0us"/>
</zone>
</platform>
XML
  seq 0 $((n - 1)) | sed 's/^/node/' > "$work/hosts-$n"
}

smpi() {  # nodes node-platform-dir node-name app-args...
  local n=$1 dir=$2 name=$3; shift 3
  STARPU_PERF_MODEL_DIR=$dir STARPU_HOSTNAME=$name "$SMPI_PREFIX/bin/starpu_smpirun" \
    -platform "$work/cluster-$n.xml" -hostfile "$work/hosts-$n" -np "$n" build-smpi/apps/heat3d/heat3d "$@" \
    2> "$work/smpi.err" | seconds
}

# 1. Two ranks on this machine, measured (Debian StarPU 1.3 + Open MPI, build/) and simulated:
#    each rank one CPU worker; the network between the two simulated nodes is shared memory,
#    stated as 5 GB/s and 1 us. Models calibrated by the measured 2-rank runs.
csv="$out/mpi-validation.csv"
echo "app,ranks,workers_per_rank,measured_s,measured_min_s,measured_max_s,simulated_s,error_pct" > "$csv"
models="$work/models-2rank"
opts=(--size 256 256 256 --tile 256 256 64 --steps 50 --sched dmda --quiet)
times=()
STARPU_NCPU=1 STARPU_PERF_MODEL_DIR=$models mpirun --oversubscribe --allow-run-as-root -np 2 \
  build/apps/heat3d/heat3d "${opts[@]}" --calibrate-models > /dev/null
for r in 1 2 3; do
  times+=("$(STARPU_NCPU=1 STARPU_PERF_MODEL_DIR=$models mpirun --oversubscribe --allow-run-as-root -np 2 \
    build/apps/heat3d/heat3d "${opts[@]}" | seconds)")
done
cluster 2 5GBps 1us
sim=$(STARPU_NCPU=1 smpi 2 "$models" "$host" "${opts[@]}")
[ -n "$sim" ] || { cat "$work/smpi.err" >&2; echo "mpi: simulated 2-rank run failed" >&2; exit 1; }
python3 - "$sim" "${times[@]}" >> "$csv" <<'PY'
import sys, statistics
sim = float(sys.argv[1]); t = [float(x) for x in sys.argv[2:]]
m = statistics.median(t)
print(f"heat3d,2,1,{m:.4f},{min(t):.4f},{max(t):.4f},{sim:.4f},{100*(sim-m)/m:+.1f}")
PY
cat "$csv"

# 2. Weak scaling: 512x512x512 per node (tiles 256x256x128: 16 per node), nodes on a line of
#    ranks along z, a stated network of 25 GB/s and 2 us per link (a 200 Gb/s fabric); node model:
#    h100node's CPU part (63 CPU workers, models of scripts/sim/hybrid.sh's h100node directory).
nodes_list=${NODES:-"1 2 4 8 16 32 64"}
steps=${STEPS:-10}
node_models=${NODE_MODELS:-$work/../sim-hybrid/models-h100node}
csv="$out/weak.csv"
echo "nodes,sched,seconds,efficiency" > "$csv"
for sched in dmdas dmda; do
  base=""
  for n in $nodes_list; do
    cluster "$n" 25GBps 2us
    s=$(STARPU_NCPU=${NODE_CPUS:-63} smpi "$n" "$node_models" h100node --size 512 512 $((512 * n)) \
          --tile 256 256 128 --steps "$steps" --sched "$sched" --quiet)
    [ -n "$s" ] || { cat "$work/smpi.err" >&2; echo "mpi: $n nodes failed" >&2; exit 1; }
    [ -n "$base" ] || base=$s
    echo "$n,$sched,$s,$(python3 -c "print(f'{$base/$s:.3f}')")" | tee -a "$csv"
  done
done
/usr/bin/python3 scripts/sim/tables.py weak "$csv" "$out/weak.svg" > "$out/weak.md"
cat "$out/mpi-validation.csv" "$out/weak.md"
