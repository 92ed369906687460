#!/usr/bin/env bash
# Runs an application with one process and under mpirun (the rest of the line), and checks
# that both print the same checksum (and the same extra key=value results, e.g. e_min/e_max).
# usage: same_checksum.sh MPIRUN_PREFIX_WORDS... -- APP ARGS...
set -u
mpi=()
while [ "$1" != "--" ]; do mpi+=("$1"); shift; done
shift
one=$("$@" 2>&1) || { echo "$one"; echo "FAIL: one process"; exit 1; }
many=$("${mpi[@]}" "$@" 2>&1) || { echo "$many"; echo "FAIL: under mpirun"; exit 1; }
echo "$one"; echo "$many"
pick() { grep -oE '(checksum|e_min|e_max|cloud_cells)=[^ ]+' <<<"$1" | sort; }
if [ -z "$(pick "$one")" ]; then echo "FAIL: no checksum printed"; exit 1; fi
if [ "$(pick "$one")" != "$(pick "$many")" ]; then echo "FAIL: results differ"; exit 1; fi
echo "OK: same results"
