# Shared by the scripts of scripts/sim/ (sourced from the repository root).
# shellcheck shell=bash

# Where the StarPUs of the simulation come from, inside the clone (no machine path): each is
# unpacked from its prebuilt tarball in ../shared/deps when there is one (seconds), else built
# from StarPU's source tarball (scripts/build-starpu.sh, 5 to 15 minutes). Give a variable to
# use a StarPU of one's own.
: "${STARPU_DEPS:=$PWD/../shared/deps}"
: "${STARPU_TARBALL:=$STARPU_DEPS/starpu_1.4.10+dfsg.orig.tar.gz}"
: "${SIM_PREFIX:=$PWD/deps/starpu-simgrid}"        # SimGrid mode: the simulator
: "${REAL_PREFIX:=$PWD/deps/starpu-1.4}"           # real: calibrates the models (test-starpu14.sh's)
: "${SMPI_PREFIX:=$PWD/deps/starpu-simgrid-mpi}"   # SimGrid mode over SMPI (mpi.sh)

# A StarPU 1.4 at PREFIX, unless one is there: PREBUILT (a file name in STARPU_DEPS, or -)
# unpacked, else built from STARPU_TARBALL with build-starpu.sh's FLAGS.
starpu_at() {  # prefix pc-module prebuilt flags...
  local prefix=$1 module=$2 prebuilt=$3
  shift 3
  [ -f "$prefix/lib/pkgconfig/$module.pc" ] && return
  if [ "$prebuilt" != - ] && [ -f "$STARPU_DEPS/$prebuilt" ]; then
    mkdir -p "$prefix"
    tar -xzf "$STARPU_DEPS/$prebuilt" -C "$prefix" --strip-components=1
    return
  fi
  if [ ! -f "$STARPU_TARBALL" ]; then
    echo "sim: no StarPU at $prefix, no prebuilt $STARPU_DEPS/$prebuilt and no source tarball at" \
         "$STARPU_TARBALL; give STARPU_TARBALL=<starpu_1.4.10 source .tar.gz> (or the prefix's" \
         "variable, docs/simulation.md)" >&2
    return 1
  fi
  bash scripts/build-starpu.sh "$STARPU_TARBALL" "$prefix" "$@" -j"$(nproc)"
}

# The `seconds=` value of an app's result line (simulated time in a simulated run).
seconds() { sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' | tail -n 1; }

# StarPU's sample platforms (tools/perfmodels/sampling/bus) from the source tarball, into DIR.
sample_platforms() {  # dir tarball
  local dir=$1 tarball=$2
  [ -d "$dir/bus" ] && return
  local tmp; tmp=$(mktemp -d "${TMPDIR:-/tmp}/sampling.XXXXXX")
  tar -xzf "$tarball" -C "$tmp" --wildcards '*/tools/perfmodels/sampling/bus/*'
  mkdir -p "$dir" && mv "$tmp"/starpu-*/tools/perfmodels/sampling/bus "$dir/bus" && rm -rf "$tmp"
}

# The model directory of one simulated host for one app and tile size (docs/simulation.md,
# Assumptions): every footprint of that tile size calibrated here by a real CPU run (build-14/,
# a grid of 3 tiles per axis so that every kind of tile occurs, kept in WORK/cal-APP-TILE), then
# the times replaced by the stated model (scripts/sim/simmodel.py), the platform either StarPU's
# sample (sirocco) or the modelled h100node.
#   node_models work sampling-dir out-dir platform app tile(AxBxC) ncpu cpu_gbs cpu_lat gpu_gbs gpu_lat
node_models() {
  local work=$1 sampling=$2 dir=$3 plat=$4 app=$5 tile=$6 ncpu=$7 cpu_gbs=$8 cpu_lat=$9
  local gpu_gbs=${10} gpu_lat=${11}
  local t=(${tile//x/ }) small=() v
  local cal="$work/cal-$app-$tile"
  if [ ! -d "$cal/codelets" ]; then
    for v in "${t[@]}"; do small+=($((3 * v))); done
    build-14/apps/$app/$app --size "${small[@]}" --tile "${t[@]}" --steps 2 --ncpu 2 \
      --perfmodel-dir "$cal" --calibrate-models --quiet > "$work/cal.log" 2>&1 ||
      { cat "$work/cal.log" >&2; return 1; }
  fi
  mkdir -p "$dir/bus"
  if [ "$plat" = sirocco ]; then
    cp "$sampling/bus/sirocco."* "$dir/bus/"
  else
    python3 scripts/sim/simmodel.py platform "$sampling" "$dir" "$plat" --cpus $((ncpu + 1)) > /dev/null
  fi
  python3 scripts/sim/simmodel.py models "$cal" "$dir" --cpu-gbs "$cpu_gbs" \
    --cpu-lat-us "$cpu_lat" --gpu-gbs "$gpu_gbs" --gpu-lat-us "$gpu_lat" --gpus 4 > /dev/null
}
