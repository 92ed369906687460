#!/usr/bin/env bash
# The automatic tiles against explicit ones (docs/scheduling.md, "Measured"): every application
# of bench/run.sh at its default and in-cache size and steps, run with no tile argument (the
# library's choice), with 1, 2, 4, 8 and 16 slabs of the slowest axis (N-body and Airfoil: 2 to
# 32 tiles) and with the tile that was its default before the library chose (OLD below), in
# ROUNDS interleaved rounds, each run its own invocation. Every run's figure is its
# Tessera/OpenMP ratio (the twin in the same process); the table gives per case the median
# [min-max] over the rounds of the automatic tiling, of the best explicit one and of the old
# default, and the ratios of their medians (the goal of issue 26: >= 0.9 both).
#   bash bench/auto_tiles.sh [BUILD_DIR] [OUT.jsonl] [ROUNDS]   # about 4.5 minutes a round here
# APPS (heat3d jacobi2d life cardiac2d cardiac3d cloudsim nbody airfoil) and THREADS (2) as in
# bench/run.sh. Time only on a quiet machine (docs/performance.md).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=${2:-$build/auto-tiles.jsonl}
rounds=${3:-3}
threads=${THREADS:-2}
apps=${APPS:-heat3d jacobi2d life cardiac2d cardiac3d cloudsim nbody airfoil}
export STARPU_SILENT=1
: >"$out"
failed=0
declare -A old_run  # case -> the label of its run with the old default tile (the table's last columns)

run() {  # LABEL ROUND PROGRAM ARGS...: one invocation, its JSON line tagged with LABEL
  local label=$1 round=$2 line
  shift 2
  line=$("$build/bench/$@" --threads "$threads" 2>&1 | grep '^{"bench":' | tail -1)
  if [ -z "$line" ]; then
    echo "bench/auto_tiles.sh: $label failed: $*" >&2
    failed=1
    return
  fi
  echo "{\"label\":\"$label\",\"round\":$round,${line#\{}" >>"$out"
}

# slabs N DIMS: the tile extents of 1, 2, 4, 8, 16 slabs of the slowest axis (at least 4 thick).
slabs() {
  local n=$1 dims=$2 k
  for k in 1 2 4 8 16; do
    [ $((n / k)) -lt 4 ] && continue
    if [ "$dims" = 3 ]; then echo "$n $n $((n / k))"; else echo "$n $((n / k))"; fi
  done
}

# grid_case APP ROUND N STEPS DIMS OLD PROGRAM [ARGS...]: auto, the slabs, the old default.
grid_case() {
  local app=$1 r=$2 n=$3 steps=$4 dims=$5 old=$6 t
  shift 6
  local size=("$n" "$n") auto=(0 0)
  [ "$dims" = 3 ] && size+=("$n") && auto+=(0)
  local common=(--size "${size[@]}" --steps "$steps")
  old_run["$app $n"]="$app $n tile $old"
  [ "$app" = heat3d ] && common+=(--reps 3 --warmup 2)
  run "$app $n auto" "$r" "$@" "${common[@]}" --tile "${auto[@]}"
  while read -r t; do
    # shellcheck disable=SC2086
    run "$app $n tile $t" "$r" "$@" "${common[@]}" --tile $t
  done < <({ slabs "$n" "$dims"; echo "$old"; } | awk '!seen[$0]++')
}

for r in $(seq "$rounds"); do
  echo "# round $r, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for app in $apps; do
    case $app in
      heat3d)
        grid_case heat3d "$r" 256 10 3 "256 256 64" bench_heat3d
        grid_case heat3d "$r" 64 200 3 "64 64 64" bench_heat3d ;;
      jacobi2d|life)
        grid_case "$app" "$r" 4096 100 2 "4096 512" "bench_$app"
        grid_case "$app" "$r" 1024 1000 2 "1024 512" "bench_$app" ;;
      cardiac2d)
        grid_case cardiac2d "$r" 1024 100 2 "1024 256" bench_cardiac --dims 2
        grid_case cardiac2d "$r" 256 1000 2 "256 256" bench_cardiac --dims 2 ;;
      cardiac3d)
        grid_case cardiac3d "$r" 128 50 3 "128 128 32" bench_cardiac --dims 3
        grid_case cardiac3d "$r" 96 100 3 "96 96 32" bench_cardiac --dims 3 ;;
      cloudsim)
        grid_case cloudsim "$r" 2048 100 2 "2048 256" bench_cloudsim
        grid_case cloudsim "$r" 512 1000 2 "512 256" bench_cloudsim ;;
      nbody)  # no automatic tile: its default (1024 bodies) is the "auto" row
        for spec in "16384 3" "2048 20"; do
          read -r n steps <<<"$spec"
          old_run["nbody $n"]="nbody $n tile 1024"
          run "nbody $n auto" "$r" bench_nbody --size "$n" --steps "$steps"
          for k in 2 4 8 16 32; do
            run "nbody $n tile $((n / k))" "$r" bench_nbody --size "$n" --tile $((n / k)) --steps "$steps"
          done
        done ;;
      airfoil)
        for spec in "400 600 50" "100 150 200"; do
          read -r i j steps <<<"$spec"
          old_run["airfoil $i"]="airfoil $i tiles 16"
          run "airfoil $i auto" "$r" bench_airfoil --mesh-size "$i" "$j" --iterations "$steps" --reps 2
          for k in 2 4 8 16 32; do
            run "airfoil $i tiles $k" "$r" bench_airfoil --mesh-size "$i" "$j" --tiles "$k" --iterations "$steps" --reps 2
          done
        done ;;
    esac
  done
done

olds=()
for c in "${!old_run[@]}"; do olds+=("$c=${old_run[$c]}"); done
python3 - "$out" "${olds[@]}" <<'PY'
import collections, json, statistics as st, sys
runs = collections.defaultdict(list)
info = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs[d["label"]].append(d["ratio"])
    info[d["label"]] = d
# Per case, the run with the tile it had by default before the library chose (issue 26's
# "today"): CASE=LABEL arguments from the loop above.
old = dict(a.split("=", 1) for a in sys.argv[2:])
cases = collections.OrderedDict()
for label in runs:
    cases.setdefault(" ".join(label.split()[:2]), []).append(label)
def text(v):
    return "%.2f [%.2f-%.2f]" % (st.median(v), min(v), max(v))
def tiling(label):
    d = info[label]
    return "%s (%d)" % ("METIS" if d["tile"] == "metis" else d["tile"], d["tiles"])
print("| case | auto tiling (tiles) | auto | best explicit (tiles) | best | auto / best "
      "| old default (tiles) | old default | auto / old |")
print("|---|---|---|---|---|---|---|---|---|")
for case, labels in cases.items():
    auto = case + " auto"
    explicit = [l for l in labels if l != auto]
    if auto not in runs or not explicit:
        continue
    best = max(explicit, key=lambda l: st.median(runs[l]))
    o = old.get(case, "")
    a = st.median(runs[auto])
    row = [case, tiling(auto), text(runs[auto]), tiling(best), text(runs[best]),
           "%.2f" % (a / st.median(runs[best]))]
    row += [tiling(o), text(runs[o]), "%.2f" % (a / st.median(runs[o]))] if o in runs else ["-"] * 3
    print("| " + " | ".join(row) + " |")
PY
exit $failed
