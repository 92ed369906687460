#!/bin/bash
# Runs bench_heat3d for several schedulers and tile sizes, several times each, and appends
# every output line to a log (docs/scheduling.md was produced this way).
#   bench/sweep.sh BUILD_DIR [LOG] [ROUNDS]  e.g. bench/sweep.sh build-bench /tmp/sweep.log 3
# (LOG defaults to BUILD_DIR/sweep.log: raw output stays out of the source tree)
# SCHEDS and TILES (environment) override the lists below. On a shared machine each run
# first waits (up to 5 minutes) for the machine to be idle for 3 seconds in a row, and the
# busy percentage seen just before the run is logged with it, and after it the CPU seconds
# that other processes used meanwhile (foreign_cpu_s); a run with more than MAX_FOREIGN
# (default 0.5 s) is done again, up to 3 attempts. IDLE_WAIT=0 skips the wait (a machine that is
# never idle); the busy percentage is still logged.
# BENCH (a program of BUILD_DIR/bench, default bench_heat3d) and ARGS (its other arguments, e.g.
# "--size 64 64 64 --steps 200") sweep another benchmark or size; a tile "auto" runs it with a
# tile of 0 on every axis (DIMS of them, default 3): the tiles the library chooses.
#   SCHEDS=dmda TILES="auto 64,64,32 64,64,16" ARGS="--size 64 64 64" bench/sweep.sh build /tmp/s.log 3
set -eu
build=${1:?build dir}; log=${2:-$1/sweep.log}; rounds=${3:-3}
bench="$build/bench/${BENCH:-bench_heat3d}"
args=${ARGS:-}
dims=${DIMS:-3}
scheds=${SCHEDS:-"eager dmda dmdas heteroprio lws random"}
tiles=${TILES:-"256,256,16 256,256,32 256,256,64 128,128,64"}
max_foreign=${MAX_FOREIGN:-0.5}  # CPU seconds; above it a run counts as disturbed
idle_wait=${IDLE_WAIT:-1}
export STARPU_HOME=${STARPU_HOME:-$build/starpu-home}  # perfmodels of these runs only
mkdir -p "$STARPU_HOME"

busy() {  # percentage of the last second the CPUs were not idle
  local a b c d e f g h t1 i1 t2 i2
  read -r _ a b c d e f g h _ < /proc/stat; t1=$((a+b+c+d+e+f+g+h)); i1=$((d+e))
  sleep 1
  read -r _ a b c d e f g h _ < /proc/stat; t2=$((a+b+c+d+e+f+g+h)); i2=$((d+e))
  echo $((100 - 100 * (i2 - i1) / (t2 - t1)))
}
nonidle() {  # jiffies the CPUs spent not idle since boot
  local a b c d e f g h
  read -r _ a b c d e f g h _ < /proc/stat; echo $((a + b + c + f + g + h))
}
wait_idle() {
  local quiet=0 waited=0 b
  if [ "$idle_wait" = 0 ]; then busy; return; fi
  while [ $quiet -lt 3 ] && [ $waited -lt 300 ]; do
    b=$(busy); waited=$((waited + 1))
    if [ "$b" -le 10 ]; then quiet=$((quiet + 1)); else quiet=0; fi
  done
  echo "$b"
}

for t in $tiles; do
  tile=${t//,/ }
  [ "$t" = auto ] && tile=$(printf '0 %.0s' $(seq "$dims"))
  # Calibrate the history-based perfmodels for this tile size (dmda, dmdas use them); the
  # other benchmarks calibrate in their warm-up steps.
  if [ "${BENCH:-bench_heat3d}" = bench_heat3d ]; then
    # shellcheck disable=SC2086
    "$bench" --tessera-only --sched dmda --tile $tile $args --reps 3 --quiet >/dev/null 2>&1 || true
  fi
  for r in $(seq "$rounds"); do
    for s in $scheds; do
      for attempt in 1 2 3; do  # a run disturbed by other processes is done again
        b=$(wait_idle)
        echo "=== sched=$s tile=$t round=$r attempt=$attempt busy_before=$b% $(date +%T)" >>"$log"
        before=$(nonidle)
        /usr/bin/time -f "own_cpu_s=%U+%S" -o "$log.time" \
          "$bench" --sched "$s" --tile $tile $args >>"$log" 2>&1 || echo "exit status $?" >>"$log"
        after=$(nonidle)
        own=$(sed -n 's/.*own_cpu_s=//p' "$log.time" | tail -1)
        # CPU seconds other processes (and the hypervisor: steal) took during the run.
        foreign=$(echo "($after - $before) / $(getconf CLK_TCK) - ($own)" | bc -l)
        printf 'foreign_cpu_s=%.2f\n' "$foreign" >>"$log"
        [ "$(echo "$foreign <= $max_foreign" | bc -l)" = 1 ] && break
      done
    done
  done
done
