#!/usr/bin/env bash
# Runs an application with one process and under mpirun (the words before --), and checks
# that both print the same checksum (and the same extra key=value results, e.g. e_min/e_max).
# Words after ++ go to the second run only (e.g. --steps-per-exchange 3; the prefix may be
# empty: the same process count, other options).
# usage: same_checksum.sh MPIRUN_PREFIX_WORDS... -- APP ARGS... [++ SECOND_RUN_ARGS...]
set -u
mpi=()
while [ "$1" != "--" ]; do mpi+=("$1"); shift; done
shift
app=()
while [ $# -gt 0 ] && [ "$1" != "++" ]; do app+=("$1"); shift; done
[ $# -gt 0 ] && shift
one=$("${app[@]}" 2>&1) || { echo "$one"; echo "FAIL: first run"; exit 1; }
many=$("${mpi[@]}" "${app[@]}" "$@" 2>&1) || { echo "$many"; echo "FAIL: second run"; exit 1; }
echo "$one"; echo "$many"
pick() { grep -oE '(checksum|e_min|e_max|cloud_cells|rms|maxerr)=[^ ]+' <<<"$1" | sort; }
if [ -z "$(pick "$one")" ]; then echo "FAIL: no checksum printed"; exit 1; fi
if [ "$(pick "$one")" != "$(pick "$many")" ]; then echo "FAIL: results differ"; exit 1; fi
echo "OK: same results"
