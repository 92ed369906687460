#!/usr/bin/env bash
# StarPU-MPI over SimGrid's SMPI (docs/simulation.md, "Many nodes"): the 2-rank validation and
# heat3d weak scaling on 1..64 simulated nodes, with and without the rank-edge priorities.
#   bash scripts/sim/mpi.sh [out-dir]          (default build/sim; after scripts/sim/setup.sh)
#   PARTS="validate weak" (default both)  NODES="1 2 4 8 16 32 64"  STEPS=10  SCHEDS="dmdas dmda"
#   NODE_CPUS=16 (CPU workers per node)  WEAK_APPEND=1 (add rows to weak.csv; the 1-node time
#   of a scheduler is then read from it when NODES lacks 1)
# Needs StarPU 1.4 in SimGrid mode with MPI, built statically as SMPI requires
# (scripts/build-starpu.sh ... --simgrid --mpi into $SMPI_PREFIX, default
# deps/starpu-simgrid-mpi), Tessera compiled by smpicxx against it (build-smpi/, CPU kinds
# only: nvcc does not take smpicxx as its host compiler here), Tessera against Debian's StarPU
# and Open MPI (build/, the measured runs) and build-14/ (scripts/sim/setup.sh; it calibrates the
# node models). Rank-edge priorities "with": scheduler dmdas (orders ready tasks by priority);
# "without": dmda (ignores them).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
mkdir -p "$out"
parts=${PARTS:-"validate weak"}
source scripts/sim/common.sh
starpu_at "$SMPI_PREFIX" starpumpi-1.4 - --simgrid --mpi
if [ ! -x build-smpi/apps/heat3d/heat3d ]; then
  # smpicxx force-includes smpi_helpers.h, whose function-like macros (malloc, free, realloc,
  # exit, sleep...) break C++ headers (Kokkos, CLI11); defining its include guard keeps it out.
  # Its wrappers are not needed: StarPU-MPI makes every MPI call, Tessera's clock is StarPU's.
  CC=smpicc CXX=smpicxx cmake -S . -B build-smpi -DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_TESTS=OFF \
    -DTESSERA_BUILD_BENCH=OFF -DTESSERA_STARPU_PREFIX="$SMPI_PREFIX" -DTESSERA_WITH_MPI=ON \
    -DTESSERA_WITH_CUDA=OFF -DCMAKE_CXX_FLAGS=-DSMPI_HELPERS_H -DCMAKE_C_FLAGS=-DSMPI_HELPERS_H > /dev/null
  cmake --build build-smpi -j"$(nproc)" --target heat3d
fi
work=${SIM_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sim-mpi.XXXXXX")}
mkdir -p "$work/home"
export STARPU_HOME="$work/home"
host=$(hostname)

cluster() {  # nodes bandwidth latency [backbone bandwidth] -> cluster-N.xml, hosts-N
  local n=$1 bw=$2 lat=$3 bb=${4:-$2}
  cat > "$work/cluster-$n.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="nodes" prefix="node" suffix="" radical="0-$((n - 1))" speed="1Gf" bw="$bw" lat="$lat"
           bb_bw="$bb" bb_lat="0us"/>
</zone>
</platform>
XML
  seq 0 $((n - 1)) | sed 's/^/node/' > "$work/hosts-$n"
}

# Tiles are allocated folded (every allocation maps the same pages, docs/simulation.md), one
# mapping per SMPI block: blocks of 64 MiB (a 256x256x128 tile of doubles) keep 64 nodes' tiles
# below the kernel's limit of mappings (vm.max_map_count, 65530), which 1 MiB blocks pass at 32.
smpi() {  # nodes node-model-dir node-name app-args...   (prints the simulated seconds)
  local n=$1 dir=$2 name=$3; shift 3
  STARPU_PERF_MODEL_DIR=$dir STARPU_HOSTNAME=$name "$SMPI_PREFIX/bin/starpu_smpirun" \
    -platform "$work/cluster-$n.xml" -hostfile "$work/hosts-$n" -np "$n" build-smpi/apps/heat3d/heat3d "$@" \
    --cfg=smpi/shared-malloc-blocksize:$((64 << 20)) 2> "$work/smpi.err" | seconds || true
}

# 1. Two ranks on this machine, measured (Debian StarPU + Open MPI, build/) and simulated: each
#    rank one CPU worker; the "network" between the two simulated nodes is shared memory,
#    stated as 5 GB/s and 1 us. Models calibrated by the measured 2-rank runs.
if [[ " $parts " == *" validate "* ]]; then
  [ -x build/apps/heat3d/heat3d ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null &&
    cmake --build build -j"$(nproc)" --target heat3d; }
  csv="$out/mpi-validation.csv"
  echo "app,ranks,workers_per_rank,sched,measured_s,measured_min_s,measured_max_s,simulated_s,error_pct,load" > "$csv"
  for sched in ${VALIDATE_SCHEDS:-dmda}; do
    models="$work/models-2rank-$sched"
    # Step by step (the apps block by default) with exchange tasks of their own: the models are
    # of interior/halo-pack/boundary.
    opts=(--size 256 256 256 --tile 256 256 64 --steps "${VALIDATE_STEPS:-50}" --sched "$sched" --quiet --steps-per-exchange 1 --separate-exchange-tasks)
    mpi=(mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 build/apps/heat3d/heat3d "${opts[@]}")
    STARPU_NCPU=1 STARPU_PERF_MODEL_DIR=$models "${mpi[@]}" --calibrate-models > /dev/null
    load=$(cut -d' ' -f1 /proc/loadavg)
    times=()
    for r in $(seq "${REPEATS:-3}"); do
      times+=("$(STARPU_NCPU=1 STARPU_PERF_MODEL_DIR=$models "${mpi[@]}" | seconds)")
    done
    load="$load-$(cut -d' ' -f1 /proc/loadavg)"
    cluster 2 5GBps 1us
    sim=$(smpi 2 "$models" "$host" "${opts[@]}" --ncpu 1)
    [ -n "$sim" ] || { cat "$work/smpi.err" >&2; echo "mpi: simulated 2-rank run failed" >&2; exit 1; }
    python3 - "$sched" "$load" "$sim" "${times[@]}" >> "$csv" <<'PY'
import sys, statistics
sched, load, sim = sys.argv[1], sys.argv[2], float(sys.argv[3])
t = [float(x) for x in sys.argv[4:]]
m = statistics.median(t)
print(f"heat3d,2,1,{sched},{m:.4f},{min(t):.4f},{max(t):.4f},{sim:.4f},{100*(sim-m)/m:+.1f},{load}")
PY
  done
  cat "$csv"
fi

# 2. Weak scaling: 512x512x512 points per node (tiles 256x256x128: 16 per node), the nodes a
#    line of ranks along z; a stated network (default 25 GB/s and 2 us per node link, a 200 Gb/s
#    fabric, every link through one backbone of BB_BW, default the same 25 GB/s: a blocking
#    fabric; BB_BW=1600GBps makes it non-blocking up to 64 nodes); node model: h100node's CPU part (63 CPU workers, the models of
#    scripts/sim/hybrid.sh's h100node for heat3d at this tile size).
if [[ " $parts " == *" weak "* ]]; then
  nodes_list=${NODES:-"1 2 4 8 16 32 64"}
  steps=${STEPS:-10}
  # 16 tiles per node keep 16 of h100node's 63 CPU workers busy; the other 47 only add simulated
  # threads (8 nodes: 0.3259 s simulated with 16 workers and with 63, 45 s and 33 s to simulate).
  ncpu=${NODE_CPUS:-16}
  bw=${NET_BW:-25GBps} lat=${NET_LAT:-2us} bb=${BB_BW:-${NET_BW:-25GBps}}
  net="$bw/$lat"
  [ "$bb" = "$bw" ] || net="$net backbone $bb"
  node_dir=${NODE_MODELS:-}
  if [ -z "$node_dir" ]; then
    sample_platforms "$work/sampling" "$STARPU_TARBALL"
    node_dir="$work/models-h100node-heat3d-256x256x128"
    node_models "$work" "$work/sampling" "$node_dir" h100node heat3d 256x256x128 63 6.7 2 2600 5
  fi
  csv="$out/weak.csv"
  [ "${WEAK_APPEND:-0}" = 1 ] && [ -f "$csv" ] ||
    echo "nodes,sched,network,steps,seconds,efficiency,comm_s,exposed_s,overlap,wall_s" > "$csv"
  for sched in ${SCHEDS:-dmdas dmda}; do
    base=$(awk -F, -v s="$sched" -v n="$steps" -v w="$net" '$1 == 1 && $2 == s && $3 == w && $4 == n { print $5 }' "$csv" | tail -n 1)
    [[ " $nodes_list " != *" 1 "* ]] || base=""
    for n in $nodes_list; do
      cluster "$n" "$bw" "$lat" "$bb"
      t0=$(date +%s)
      s=$(smpi "$n" "$node_dir" h100node --size 512 512 $((512 * n)) --tile 256 256 128 \
            --steps "$steps" --sched "$sched" --ncpu "$ncpu" --ncuda 0 --quiet --steps-per-exchange 1 --separate-exchange-tasks)
      [ -n "$s" ] || { cat "$work/smpi.err" >&2; echo "mpi: $n nodes failed" >&2; exit 1; }
      [ -n "$base" ] || base=$s
      # Overlap: the halo traffic of a middle rank per step (2 faces of 512x512 doubles, 4 tile
      # messages each, over its one node link) against what the run lost to the 1-node run.
      python3 - "$n" "$sched" "$net" "$steps" "$s" "$base" "$bw" "$lat" "$(($(date +%s) - t0))" \
        >> "$csv" <<'PY'
import re, sys
n, sched, net, steps, s, base, bw, lat, wall = sys.argv[1:]
n, steps, s, base = int(n), int(steps), float(s), float(base)
units = {"GBps": 1e9, "MBps": 1e6, "Gbps": 1e9 / 8, "us": 1e-6, "ms": 1e-3, "ns": 1e-9}
val = lambda v: float(re.match(r"[0-9.]+", v).group()) * units[re.sub(r"^[0-9.]+", "", v)]
faces = min(n - 1, 2)
comm = steps * faces * (512 * 512 * 8 / val(bw) + 4 * val(lat))
exposed = max(0.0, s - base)
overlap = "" if comm == 0 else f"{max(0.0, 1 - exposed / comm):.3f}"
print(f"{n},{sched},{net},{steps},{s:.4f},{base / s:.4f},{comm:.6f},{exposed:.6f},{overlap},{wall}")
PY
      tail -n 1 "$csv"
    done
  done
  /usr/bin/python3 scripts/sim/tables.py weak "$csv" "$out/weak.svg" > "$out/weak.md"
  cat "$out/weak.md"
fi
