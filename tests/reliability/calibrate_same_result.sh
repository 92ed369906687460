#!/usr/bin/env bash
# --calibrate-models runs calibration steps first; the run that follows must start from the
# initial state, so the checksum equals that of the same run without calibration.
#   calibrate_same_result.sh APP WORK_DIR app-args...
set -u -o pipefail  # a run that prints its checksum and then fails is a failure
app=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work"
export STARPU_SILENT=1 STARPU_HOME="$work/home"
checksum() { grep -o "checksum=[^ ]*" | head -1; }
plain=$("$app" "$@" --perfmodel-dir "$work/models" --quiet | checksum) || {
  echo "FAIL: the run without calibration failed"; exit 1; }
calibrated=$("$app" "$@" --perfmodel-dir "$work/models" --calibrate-models | checksum) || {
  echo "FAIL: the run with --calibrate-models failed"; exit 1; }
echo "without: $plain"
echo "with --calibrate-models: $calibrated"
[ -n "$plain" ] || { echo "FAIL: no checksum"; exit 1; }
[ "$plain" = "$calibrated" ] || { echo "FAIL: --calibrate-models changed the result"; exit 1; }
echo "OK: same checksum"
