#!/usr/bin/env bash
# Runs an application once per tiling and checks that every run prints the same results
# (checksum and the other key=value results: sums are exact, so no tile boundary changes a bit).
# usage: same_result_tilings.sh APP ARGS... ++ TILING_ARGS... [++ TILING_ARGS...]...
#   e.g. same_result_tilings.sh heat3d --size 24 20 16 --steps 5 ++ --tile 24 20 5 ++ --tile 7 9 16
set -u
app=()
while [ $# -gt 0 ] && [ "$1" != "++" ]; do app+=("$1"); shift; done
pick() {
  grep -oE '(checksum|e_min|e_max|cloud_cells|t_min|t_max|rms|maxerr|rnm2|rnmu|verified|E0|E1|drift)=[^ ]+' <<<"$1" | sort
}
first="" runs=0
while [ $# -gt 0 ]; do
  shift  # the ++
  tiling=()
  while [ $# -gt 0 ] && [ "$1" != "++" ]; do tiling+=("$1"); shift; done
  out=$(STARPU_SILENT=1 timeout 300 "${app[@]}" "${tiling[@]}" 2>&1) || {
    echo "$out"; echo "FAIL: run with ${tiling[*]}"; exit 1; }
  result=$(pick "$out")
  echo "== ${tiling[*]}"; echo "$result"
  if [ -z "$result" ]; then echo "$out"; echo "FAIL: no result printed"; exit 1; fi
  if [ -z "$first" ]; then first=$result
  elif [ "$result" != "$first" ]; then echo "FAIL: ${tiling[*]} differs from the first tiling"; exit 1; fi
  runs=$((runs + 1))
done
[ "$runs" -ge 2 ] || { echo "FAIL: give at least two tilings"; exit 1; }
echo "OK: the same results for $runs tilings"
