#!/usr/bin/env bash
# Two ranks whose GPUs differ in memory (the emulated device's stand-ins, STARPU_LIMIT_CUDA_MEM
# given per rank): the plan is made for the smaller GPU on both ranks (issue 70: the mean of 1
# and 100000 MiB let neither stream and the small rank's tile never fit, a silent hang). The run
# must end within TIMEOUT seconds with the checksum of a one-process CPU run.
# usage: unequal_gpus.sh SMALL_MIB LARGE_MIB MPIRUN_WORDS... -- APP ARGS...
set -u
small=$1 large=$2
shift 2
mpi=()
while [ "$1" != "--" ]; do mpi+=("$1"); shift; done
shift
app=("$@")
limit=${TIMEOUT:-100}
one=$(env -u TESSERA_EMULATED_CUDA "${app[@]}" 2>&1) || {
  echo "$one"; echo "FAIL: the CPU run"; exit 1; }
two=$(timeout "$limit" "${mpi[@]}" -np 1 env TESSERA_EMULATED_CUDA=split STARPU_LIMIT_CUDA_MEM="$small" \
        "${app[@]}" : -np 1 env TESSERA_EMULATED_CUDA=split STARPU_LIMIT_CUDA_MEM="$large" "${app[@]}" 2>&1)
status=$?
echo "$one"; echo "$two"
if [ "$status" = 124 ]; then echo "FAIL: no end within $limit s (a hang)"; exit 1; fi
if [ "$status" != 0 ]; then echo "FAIL: the two ranks exited with $status"; exit 1; fi
pick() { grep -oE 'checksum=[^ ]+' <<<"$1" | sort -u; }
if [ -z "$(pick "$one")" ]; then echo "FAIL: no checksum printed"; exit 1; fi
if [ "$(pick "$one")" != "$(pick "$two")" ]; then echo "FAIL: results differ"; exit 1; fi
# Planned for the smaller GPU: streamed on both ranks.
if ! grep -q "streamed" <<<"$two"; then echo "FAIL: the placement does not stream"; exit 1; fi
echo "OK: planned for the smaller GPU, same checksum"
