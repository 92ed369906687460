# Shared by the scripts of scripts/sim/ (sourced).
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
