#!/usr/bin/env bash
# The benchmark suite: every application with an OpenMP twin against it, at its default size, an
# in-cache size and an out-of-cache size, with 1, 2, 4, 8, 16 and 32 tiles per worker; every
# case checks its result against the twin's (bitwise; airfoil to 1e-8) in the same run and
# measures the copy bandwidth of its own size (the roofline). Then the task-path micro-benchmark
# (empty tasks, Tessera against bare StarPU). JSON lines go to OUT (one per case, with
# size_class and tiles_per_worker added), a table to stdout. Exit status 1 if any result differs
# or a case fails.
#   bash bench/run.sh [BUILD_DIR] [OUT.jsonl]            # the whole suite (an hour or more)
#   QUICK=1 bash bench/run.sh build /tmp/quick.jsonl     # tiny sizes: checks that it all runs
# Environment: THREADS (2: OpenMP threads = StarPU CPU workers), APPS (heat3d jacobi2d life
# cardiac2d cardiac3d cloudsim nbody airfoil tasks), SIZES (default incache outofcache),
# TPW (1 2 4 8 16 32), SCHED (unset: the library's default for the run, docs/scheduling.md), SPE (auto: Tessera's steps per halo exchange for heat3d, jacobi2d,
# life, cardiac and cloudsim, temporal blocking, as the apps default to; a number is lowered to the thinnest tile
# where tiles are thinner; 1: step by step), EXCHANGE (fused: ghost-layer exchanges inside the
# tile tasks, as the apps default to; separate: halo-pack and boundary tasks of their own).
# Time only on a quiet machine (docs/performance.md).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=${2:-$build/bench-suite.jsonl}
threads=${THREADS:-2}
apps=${APPS:-heat3d jacobi2d life cardiac2d cardiac3d cloudsim nbody airfoil tasks}
sizes=${SIZES:-default incache outofcache}
tpw_list=${TPW:-1 2 4 8 16 32}
sched=${SCHED:-}
spe=${SPE:-auto}
exchange=${EXCHANGE:-fused}
quick=${QUICK:-0}
export STARPU_SILENT=1
: >"$out"
failed=0

# size_of APP CLASS -> "SIZE...|STEPS" (QUICK: tiny grids, few steps)
size_of() {
  if [ "$quick" = 1 ]; then
    case $1 in
      heat3d|cardiac3d) echo "32 32 32|4" ;; jacobi2d|life|cardiac2d|cloudsim) echo "128 128|4" ;;
      nbody) echo "512|2" ;; airfoil) echo "20 30|4" ;;
    esac
    return
  fi
  case $1:$2 in
    heat3d:default) echo "256 256 256|10" ;; heat3d:incache) echo "64 64 64|200" ;; heat3d:outofcache) echo "384 384 384|5" ;;
    jacobi2d:default) echo "4096 4096|100" ;; jacobi2d:incache) echo "1024 1024|1000" ;; jacobi2d:outofcache) echo "8192 8192|50" ;;
    life:default) echo "4096 4096|100" ;; life:incache) echo "1024 1024|1000" ;; life:outofcache) echo "16384 16384|20" ;;
    cardiac2d:default) echo "1024 1024|100" ;; cardiac2d:incache) echo "256 256|1000" ;; cardiac2d:outofcache) echo "4096 4096|20" ;;
    cardiac3d:default) echo "128 128 128|50" ;; cardiac3d:incache) echo "96 96 96|100" ;; cardiac3d:outofcache) echo "256 256 256|10" ;;
    cloudsim:default) echo "2048 2048|100" ;; cloudsim:incache) echo "512 512|1000" ;; cloudsim:outofcache) echo "8192 8192|20" ;;
    nbody:default) echo "16384|3" ;; nbody:incache) echo "2048|20" ;; nbody:outofcache) echo "32768|2" ;;
    airfoil:default) echo "400 600|50" ;; airfoil:incache) echo "100 150|200" ;; airfoil:outofcache) echo "800 1200|20" ;;
  esac
}

# tile_of "SIZE..." TILES -> tile extents: the slowest axis cut first, then the next.
tile_of() {
  local -a n=($1)
  local tiles=$2 d=${#n[@]}
  local -a t=("${n[@]}")
  local last=$((d - 1))
  local cut=$((tiles < n[last] ? tiles : n[last]))
  t[$last]=$(((n[last] + cut - 1) / cut))
  local rest=$((tiles / cut))
  if [ "$rest" -gt 1 ] && [ "$d" -ge 2 ]; then
    local prev=$((d - 2))
    t[$prev]=$(((n[prev] + rest - 1) / rest))
  fi
  echo "${t[@]}"
}

run_case() {  # APP CLASS TPW
  local app=$1 cls=$2 tpw=$3 spec size steps tiles tile cmd
  spec=$(size_of "$app" "$cls")
  size=${spec%|*}
  steps=${spec#*|}
  tiles=$((tpw * threads))
  tile=$(tile_of "$size" "$tiles")
  local common=(--threads "$threads")
  [ -n "$sched" ] && common+=(--sched "$sched")
  [ "$exchange" = separate ] && common+=(--separate-exchange-tasks)
  # Temporal blocking: SPE steps per exchange (auto: the library's choice, within the tiles'
  # thickness), a number at most the thinnest tile (the last one too).
  local depth=$spe t k
  local -a ext=($size) tl=($tile)
  if [ "$depth" != auto ]; then
    for k in "${!ext[@]}"; do
      t=$((ext[k] % tl[k] == 0 ? tl[k] : ext[k] % tl[k]))
      [ "$t" -lt "$depth" ] && depth=$t
      [ "${tl[k]}" -lt "$depth" ] && depth=${tl[k]}
    done
  fi
  local blocking=(--steps-per-exchange "$depth")
  case $app in
    heat3d) cmd=("$build/bench/bench_heat3d" --size $size --tile $tile --steps "$steps" --reps 3 --warmup 2 "${common[@]}" "${blocking[@]}") ;;
    jacobi2d|life) cmd=("$build/bench/bench_$app" --size $size --tile $tile --steps "$steps" "${common[@]}" "${blocking[@]}") ;;
    cloudsim) cmd=("$build/bench/bench_$app" --size $size --tile $tile --steps "$steps" "${common[@]}" "${blocking[@]}") ;;
    cardiac2d) cmd=("$build/bench/bench_cardiac" --dims 2 --size $size --tile $tile --steps "$steps" "${common[@]}" "${blocking[@]}") ;;
    cardiac3d) cmd=("$build/bench/bench_cardiac" --dims 3 --size $size --tile $tile --steps "$steps" "${common[@]}" "${blocking[@]}") ;;
    nbody) cmd=("$build/bench/bench_nbody" --size "$size" --tile "$tile" --steps "$steps" "${common[@]}") ;;
    airfoil) cmd=("$build/bench/bench_airfoil" --mesh-size $size --tiles "$tiles" --iterations "$steps" --reps 2 "${common[@]}") ;;
  esac
  echo "# ${cmd[*]}" >&2
  local text rc
  text=$("${cmd[@]}" 2>&1)
  rc=$?
  local line
  line=$(grep '^{"bench":' <<<"$text" | tail -1)
  if [ -z "$line" ] || [ $rc -ne 0 ]; then
    echo "$text" >&2
    echo "bench/run.sh: $app $cls tpw=$tpw failed (exit $rc)" >&2
    failed=1
  fi
  if [ -n "$line" ]; then
    echo "{\"size_class\":\"$cls\",\"tiles_per_worker\":$tpw,${line#\{}" >>"$out"
  fi
}

for app in $apps; do
  if [ "$app" = tasks ]; then
    n=200000; [ "$quick" = 1 ] && n=5000
    for s in eager ${sched:-dmda}; do
      echo "# $build/bench/bench_tasks --tasks $n --ncpu $threads --sched $s --json" >&2
      text=$("$build/bench/bench_tasks" --tasks "$n" --ncpu "$threads" --sched "$s" --json 2>&1) || { echo "$text" >&2; failed=1; }
      grep '^{"bench":' <<<"$text" >>"$out"
    done
    continue
  fi
  for cls in $sizes; do
    [ "$quick" = 1 ] && [ "$cls" != default ] && continue
    for tpw in $tpw_list; do run_case "$app" "$cls" "$tpw"; done
  done
done

python3 "$root/bench/suite_table.py" "$out"
exit $failed
