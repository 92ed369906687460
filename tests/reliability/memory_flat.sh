#!/usr/bin/env bash
# Memory does not grow with the step count: a tiny grid run for N and 5 N steps (every step
# submitted without waiting) peaks at about the same resident memory, since the runtime keeps a
# bounded window of tasks in flight. Without the window, 5 N steps held 5x the tasks.
# Checked twice: as given (e.g. --quiet: nothing recorded) and with --quiet dropped, where the
# end-of-run summary is on: the recorder then keeps running totals per worker and task kind,
# not every task (about 0.5 KB each: 5 N steps would hold 5x the records).
#   memory_flat.sh APP STEPS app-args...
set -u
app=$1 steps=$2
shift 2
export STARPU_SILENT=1
peak() {  # peak resident memory in KiB of the app run with these arguments
  /usr/bin/time -f "%M" -o "$TMPDIR_/rss" "$app" "$@" > /dev/null 2> "$TMPDIR_/err" || { cat "$TMPDIR_/err"; return 1; }
  tail -1 "$TMPDIR_/rss"
}
TMPDIR_=$(mktemp -d)
trap 'rm -rf "$TMPDIR_"' EXIT
check() {  # check LABEL app-args...
  local label=$1
  shift
  # The baseline is the largest of three runs of N steps: one run's peak varies with how far
  # the program got ahead of the worker within the window of tasks in flight (21 to 60 MiB for
  # the same run on one machine, a CI run with a fresh model directory 33 MiB), which would read
  # as growth. Growth itself is 100 MiB and more here: records of 0.5 KB per task, or StarPU's
  # tasks without the window, for 4 N more steps.
  local first second third
  first=$(peak "$@" --steps "$steps") || { echo "FAIL ($label): run failed"; exit 1; }
  second=$(peak "$@" --steps "$steps") || { echo "FAIL ($label): run failed"; exit 1; }
  third=$(peak "$@" --steps "$steps") || { echo "FAIL ($label): run failed"; exit 1; }
  small=$((first > second ? first : second))
  small=$((third > small ? third : small))
  large=$(peak "$@" --steps $((5 * steps))) || { echo "FAIL ($label): run failed"; exit 1; }
  echo "$label: peak RSS $steps steps ${small} KiB, $((5 * steps)) steps ${large} KiB"
  # Allow 40 MiB of noise (the window's fill, the allocator, StarPU's lazily grown pools).
  if [ "$large" -gt $((small + 40960)) ]; then
    echo "FAIL ($label): memory grows with the step count"
    exit 1
  fi
}
check "as given" "$@"
with_summary=()
for a in "$@"; do [ "$a" = --quiet ] || with_summary+=("$a"); done
check "summary on" "${with_summary[@]}"
echo "OK: memory flat in the step count"
