#!/usr/bin/env bash
# The validation table of docs/simulation.md: heat3d, jacobi2d and life on this machine, CPU
# only, 1 and 2 workers, measured (real StarPU 1.4, build-14/) and simulated (StarPU 1.4 in
# SimGrid mode, build-sim/) with the models calibrated by the measured runs and the platform
# file StarPU wrote for this machine while calibrating.
#   bash scripts/sim/validate.sh [out-dir]      (default docs/sim; REPEATS=3 measured runs)
# Per case: a fresh model directory; `--calibrate-models` calibrates (rounds of the run until
# every model entry has enough samples) and times one run; REPEATS more runs are timed with
# the models; then the same run is simulated. Measure on a quiet machine: the simulation
# predicts a machine whose cores are not shared with others' builds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-docs/sim}
repeats=${REPEATS:-3}
sched=${SCHED:-dmda}
mkdir -p "$out"
[ -x build-sim/apps/heat3d/heat3d ] && [ -x build-14/apps/heat3d/heat3d ] || bash scripts/sim/setup.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-validate.XXXXXX")
host=$(hostname)
# StarPU 1.4 reads (and updates) a model found in ~/.starpu/sampling before one missing from
# --perfmodel-dir: a private STARPU_HOME keeps each case's models its own.
mkdir -p "$work/home"
export STARPU_HOME="$work/home"

# app | options (the apps' defaults: 4 tiles of heat3d, 8 of jacobi2d and life)
cases=("heat3d|--size 256 256 256 --tile 256 256 64 --steps 50"
       "jacobi2d|--size 4096 4096 --tile 4096 512 --steps 100"
       "life|--size 4096 4096 --tile 4096 512 --steps 100")

seconds() { sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' | tail -n 1; }

csv="$out/validation.csv"
echo "app,workers,sched,measured_s,measured_min_s,measured_max_s,simulated_s,error_pct" > "$csv"
for c in "${cases[@]}"; do
  app=${c%%|*}; opts=${c#*|}
  for n in 1 2; do
    models="$work/$app-n$n"
    mkdir -p "$models"
    common=(--ncpu "$n" --sched "$sched" --perfmodel-dir "$models" --quiet $opts)
    times=()
    times+=("$(build-14/apps/$app/$app "${common[@]}" --calibrate-models | seconds)")
    for ((r = 0; r < repeats; r++)); do times+=("$(build-14/apps/$app/$app "${common[@]}" | seconds)"); done
    [ -f "$models/bus/$host.platform.v4.xml" ] || { echo "validate: StarPU wrote no platform file in $models/bus" >&2; exit 1; }
    sim=$(STARPU_PERF_MODEL_DIR=$models STARPU_HOSTNAME=$host build-sim/apps/$app/$app "${common[@]}" 2>"$work/sim.err" | seconds)
    [ -n "$sim" ] || { cat "$work/sim.err" >&2; echo "validate: simulated $app failed" >&2; exit 1; }
    python3 - "$app" "$n" "$sched" "$sim" "${times[@]}" >> "$csv" <<'PY'
import sys, statistics
app, n, sched, sim = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
t = [float(x) for x in sys.argv[5:]]
med = statistics.median(t)
print(f"{app},{n},{sched},{med:.4f},{min(t):.4f},{max(t):.4f},{sim:.4f},{100*(sim-med)/med:+.1f}")
PY
    tail -n 1 "$csv"
  done
done
python3 scripts/sim/tables.py validation "$csv" > "$out/validation.md"
cat "$out/validation.md"
rm -rf "$work"
