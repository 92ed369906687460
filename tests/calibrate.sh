#!/usr/bin/env bash
# Calibration on a tiny grid: a first run on empty models says once that they are
# uncalibrated; --calibrate-models then fills the chosen directory, prints a table with no
# entry short of samples and the prediction error; a fresh run says nothing about calibration
# and predicts every timed task kind. With dmda, a scheduler that places by the models (runs on
# CPU workers only default to lws, which predicts nothing and says nothing of them).
#   calibrate.sh HEAT3D_EXE WORK_DIR
set -euo pipefail
heat3d=$1
work=$2
rm -rf "$work"
mkdir -p "$work/models"
run=("$heat3d" --size 24 20 16 --tile 24 20 5 --steps 4 --ncpu 2 --sched dmda
  --perfmodel-dir "$work/models")
export STARPU_SILENT=1
# StarPU 1.4 also reads models from $STARPU_HOME/.starpu/sampling: keep that empty too.
export STARPU_HOME="$work/home"
status=0
fail() { echo "FAIL: $*"; status=1; }

"${run[@]}" > "$work/first.out" 2>&1
n=$(grep -c "is not calibrated" "$work/first.out" || true)
[ "$n" -eq 1 ] || fail "a run on empty models said 'not calibrated' $n times, not once"
grep -q -- "--calibrate-models" "$work/first.out" || fail "the message does not give the command"

"${run[@]}" --calibrate-models > "$work/calibrate.out" 2>&1
cat "$work/calibrate.out"
grep -q "short of 10 samples" "$work/calibrate.out" || fail "no calibration table"
grep -q " 0 short of" "$work/calibrate.out" || fail "entries still short of samples"
if grep -Eq "needs samples|MISSING" "$work/calibrate.out"; then fail "table has missing entries"; fi
# The task kinds of a run: interior tasks that exchange the ghost layers themselves, and the
# halo-pack tasks of the first steps (before any task packed the fields' faces).
kinds=("interior+halo" halo-pack)
for kind in "${kinds[@]}"; do
  grep -Fq "heat3d:$kind " "$work/calibrate.out" || fail "no $kind entry in the table"
  ls "$work"/models/codelets/*/tessera.heat3d.$kind.* > /dev/null 2>&1 || fail "no $kind model file"
done
grep -q "prediction error on a fresh run" "$work/calibrate.out" || fail "no prediction error report"

"${run[@]}" > "$work/fresh.out" 2>&1
cat "$work/fresh.out"
if grep -q "is not calibrated" "$work/fresh.out"; then fail "calibrated models reported uncalibrated"; fi
for kind in "${kinds[@]}"; do
  # task kind, tasks, time, mean, predicted (a number, not "-"), error
  grep -Eq "^  ${kind//+/\\+} +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+$" "$work/fresh.out" ||
    fail "no prediction for $kind in the fresh run's summary"
done

# Another tile shape in the same directory: a short run leaves entries with few samples for
# its footprints; calibrating the first shape again must not wait for those (it did once, for
# 100 rounds), and its table lists only the footprints that run uses.
other=("$heat3d" --size 24 20 16 --tile 24 10 8 --steps 1 --ncpu 2 --perfmodel-dir "$work/models")
"${other[@]}" > "$work/other.out" 2>&1
"${run[@]}" --calibrate-models > "$work/again.out" 2>&1
grep -q " 0 short of" "$work/again.out" || fail "stale entries of another tile shape held calibration up"
rows=$(grep -cE "^  heat3d:interior\+halo +cpu" "$work/again.out")
[ "$rows" -eq 2 ] || fail "the table lists $rows interior footprints, want this run's 2 (tiles 24x20x5 and 24x20x1)"
exit $status
