#!/usr/bin/env bash
# The automatic tiles' line of a run without CUDA workers: on an empty model directory it says
# a core's time a point is assumed and how models come to exist; once a run recorded its tasks'
# times there, it gives a core's time by the model it names.
#   core_point_model.sh HEAT3D_EXE
set -euo pipefail
heat3d=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# StarPU 1.4 also reads models from $STARPU_HOME/.starpu/sampling: keep that empty too.
export STARPU_HOME="$work/home" STARPU_SILENT=1
unset TESSERA_EMULATED_CUDA
line() {
  "$heat3d" --size 64 64 64 --steps 5 --ncpu 2 --perfmodel-dir "$work/models" 2>&1 |
    grep "^tessera: tiles of" || true
}
status=0
first=$(line)
echo "empty models: $first"
grep -q "at an assumed 2.50 ns per point); no model records a core's time a point yet" \
  <<<"$first" || { echo "FAIL: the line on empty models does not say the time is assumed"; status=1; }
second=$(line)
echo "recorded models: $second"
grep -Eq "per step \(modelled\); a core [0-9.e+-]+ ns a point by the model of tessera\.heat3d\." \
  <<<"$second" || { echo "FAIL: the line on recorded models does not name a model"; status=1; }
if grep -q assumed <<<"$second"; then echo "FAIL: the line on recorded models says assumed"; status=1; fi
exit $status
