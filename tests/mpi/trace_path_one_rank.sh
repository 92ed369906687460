#!/usr/bin/env bash
# Two ranks with the same command line in two working directories: rank 0's has out/, rank 1's
# has a file named out, so only rank 1 cannot create out/t.json.
# usage: trace_path_one_rank.sh WORK_DIR expect_failure.sh SECONDS PATTERN MPIRUN... HEAT3D
set -u
work=$1 expect=$2 limit=$3 pattern=$4
shift 4
heat3d=${*: -1}
mpirun=("${@:1:$#-1}")
rm -rf "$work" && mkdir -p "$work/a/out" "$work/b" && touch "$work/b/out"
args=(--size 8 8 8 --tile 8 8 4 --steps 2 --quiet --trace out/t.json)
"$expect" "$limit" "$pattern" "${mpirun[@]}" -np 1 -wdir "$work/a" "$heat3d" "${args[@]}" \
  : -np 1 -wdir "$work/b" "$heat3d" "${args[@]}"
