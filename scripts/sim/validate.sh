#!/usr/bin/env bash
# The validation table of docs/simulation.md: heat3d, jacobi2d and life on this machine, CPU
# only, 1 and 2 workers, measured (real StarPU 1.4, build-14/) and simulated (StarPU 1.4 in
# SimGrid mode, build-sim/) with the models calibrated by the measured runs and the platform
# file StarPU wrote for this machine while calibrating.
#   bash scripts/sim/validate.sh [out-dir]      (default build/sim; REPEATS=3 measured runs,
#                                               APPS="heat3d jacobi2d life")
# Per case: a fresh model directory; `--calibrate-models` calibrates (rounds of the run until
# every model entry has enough samples) and times one run; REPEATS more runs are timed with
# the models; then the same run is simulated. Measure on a quiet machine: the simulation
# predicts a machine whose cores are not shared with others' builds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=${1:-build/sim}
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

source scripts/sim/common.sh

csv="$out/validation.csv"
echo "app,workers,sched,measured_s,measured_min_s,measured_max_s,simulated_s,error_pct,last_s,matched_s,matched_error_pct" > "$csv"
for c in "${cases[@]}"; do
  app=${c%%|*}; opts=${c#*|}
  [[ " ${APPS:-heat3d jacobi2d life} " == *" $app "* ]] || continue
  for n in 1 2; do
    models="$work/$app-n$n"
    mkdir -p "$models"
    base=(--ncpu "$n" --sched "$sched" $opts)
    times=()
    times+=("$(build-14/apps/$app/$app "${base[@]}" --perfmodel-dir "$models" --quiet --calibrate-models | seconds)")
    # The last measured run prints its per-kind summary (mean task time against the models).
    for ((r = 0; r < repeats; r++)); do
      build-14/apps/$app/$app "${base[@]}" --perfmodel-dir "$models" > "$work/run.out"
      times+=("$(seconds < "$work/run.out")")
    done
    last=${times[-1]}
    [ -f "$models/bus/$host.platform.v4.xml" ] || { echo "validate: StarPU wrote no platform file in $models/bus" >&2; exit 1; }
    simulate() {
      STARPU_PERF_MODEL_DIR=$1 STARPU_HOSTNAME=$host build-sim/apps/$app/$app "${base[@]}" --quiet \
        2>"$work/sim.err" | seconds
    }
    sim=$(simulate "$models")
    [ -n "$sim" ] || { cat "$work/sim.err" >&2; echo "validate: simulated $app failed" >&2; exit 1; }
    # The same models with each kind's mean set to what the last measured run's tasks took:
    # separates the simulator (scheduling, transfers, overheads) from the drift of task times
    # between calibration and run (this machine's load).
    python3 scripts/sim/simmodel.py rescale "$models" "$models-matched" "$work/run.out" >&2
    matched=$(simulate "$models-matched")
    python3 - "$app" "$n" "$sched" "$sim" "$matched" "$last" "${times[@]}" >> "$csv" <<'PY'
import sys, statistics
app, n, sched, sim, matched, last = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
t = [float(x) for x in sys.argv[7:]]
med = statistics.median(t)
print(f"{app},{n},{sched},{med:.4f},{min(t):.4f},{max(t):.4f},{sim:.4f},{100*(sim-med)/med:+.1f},"
      f"{last:.4f},{matched:.4f},{100*(matched-last)/last:+.1f}")
PY
    tail -n 1 "$csv"
  done
done
/usr/bin/python3 scripts/sim/tables.py validation "$csv" > "$out/validation.md"
cat "$out/validation.md"
rm -rf "$work"
