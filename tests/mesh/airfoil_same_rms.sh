#!/usr/bin/env bash
# Runs airfoil under several configurations and checks that every run prints the same rms lines
# and the same final rms and maxerr bits (the result line without its timing).
# usage: airfoil_same_rms.sh AIRFOIL MPIRUN|- -- args... ; configurations come from CONFIGS:
#   "sched:ncpu:ranks:tiles:partitioner ..."
set -u
airfoil=$1 mpirun=$2
shift 3
first=""
for config in $CONFIGS; do
  IFS=: read -r sched ncpu ranks tiles part <<<"$config"
  if [ "$ranks" -gt 1 ]; then
    [ "$mpirun" = "-" ] && continue
    out=$(STARPU_NCPU=$ncpu STARPU_SILENT=1 timeout 300 $mpirun --oversubscribe --allow-run-as-root -np "$ranks" \
          "$airfoil" --sched "$sched" --tiles "$tiles" --partitioner "$part" --quiet "$@" 2>&1)
  else
    out=$(STARPU_SILENT=1 timeout 300 "$airfoil" --sched "$sched" --ncpu "$ncpu" --tiles "$tiles" \
          --partitioner "$part" --quiet "$@" 2>&1)
  fi
  status=$?
  result=$(grep -E '^ [0-9]+  |^airfoil ' <<<"$out" | sed -E 's/ tiles=[0-9]+//; s/ seconds=[0-9.]+//; s/ ranks=[0-9]+//')
  echo "== $config (exit $status)"
  echo "$result"
  if [ "$status" -ne 0 ] || ! grep -q '^airfoil ' <<<"$result"; then echo "FAIL: run failed"; echo "$out"; exit 1; fi
  if [ -z "$first" ]; then first=$result
  elif [ "$result" != "$first" ]; then echo "FAIL: $config differs from the first configuration"; exit 1; fi
done
echo "OK: every configuration printed the same rms bits"
