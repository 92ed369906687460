#!/usr/bin/env bash
# A 2-rank run writes ONE trace and ONE report: every rank's tasks (one process per rank), each
# rank's StarPU-MPI face-buffer traffic as an mpi counter, and no per-rank leftovers.
# usage: trace_merged.sh WORK_DIR mpirun-command...
set -u
work=$1
shift
rm -rf "$work" && mkdir -p "$work"
"$@" --trace "$work/t.json" --report "$work/r.html" --quiet || { echo "FAIL: run failed"; exit 1; }
status=0
fail() { echo "FAIL: $*"; status=1; }
[ -s "$work/t.json" ] || fail "no trace"
[ -s "$work/r.html" ] || fail "no report"
ls "$work" | grep -q "rank" && fail "per-rank files left: $(ls "$work")"
for r in 0 1; do
  # task events of rank r: "ph": "X" blocks carry "pid": r
  n=$(awk -v r="$r" '/"ph": "X"/{x=1} x && /"pid":/{if ($2 == r",") c++; x=0} END{print c+0}' "$work/t.json")
  [ "$n" -gt 0 ] || fail "no task of rank $r in the merged trace"
  grep -q "\"name\": \"mpi other ranks->rank $r\"" "$work/t.json" || fail "no mpi traffic counter of rank $r"
  echo "rank $r: $n tasks"
done
[ "$status" -eq 0 ] && echo "OK: one merged trace and report"
exit "$status"
