#!/usr/bin/env bash
# Runs the same small airfoil case RUNS times, each under a timeout, and fails naming the run
# that hung or failed. On StarPU 1.4 a task that wrote one handle through two of its buffers past
# STARPU_NMAXBUFS could wait for itself (tasks::fit_nodes): 9 of 10 runs hung before the fix.
# usage: airfoil_repeat.sh AIRFOIL RUNS
set -u
airfoil=$1 runs=$2
for ((i = 1; i <= runs; i++)); do
  out=$(STARPU_SILENT=1 timeout 60 "$airfoil" --mesh-size 40 60 --iterations 20 --ncpu 2 --ncuda 0 \
        --quiet 2>&1)
  status=$?
  if [ "$status" -eq 124 ]; then echo "FAIL: run $i of $runs hung (killed after 60 s)"; exit 1; fi
  if [ "$status" -ne 0 ] || ! grep -q '^airfoil cells=7200 ' <<<"$out"; then
    echo "FAIL: run $i of $runs ended with status $status"; echo "$out"; exit 1
  fi
done
echo "OK: $runs runs ended"
