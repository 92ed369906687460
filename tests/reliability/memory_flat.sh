#!/usr/bin/env bash
# Memory does not grow with the step count: a tiny grid run for N and 5 N steps (every step
# submitted without waiting) peaks at about the same resident memory, since the runtime keeps a
# bounded window of tasks in flight. Without the window, 5 N steps held 5x the tasks.
#   memory_flat.sh APP STEPS app-args...
set -u
app=$1 steps=$2
shift 2
export STARPU_SILENT=1
peak() {  # peak resident memory in KiB of the app run for $1 steps
  /usr/bin/time -f "%M" -o "$TMPDIR_/rss" "$app" "$@" > /dev/null || return 1
  tail -1 "$TMPDIR_/rss"
}
TMPDIR_=$(mktemp -d)
trap 'rm -rf "$TMPDIR_"' EXIT
small=$(peak "$@" --steps "$steps") || { echo "FAIL: run failed"; exit 1; }
large=$(peak "$@" --steps $((5 * steps))) || { echo "FAIL: run failed"; exit 1; }
echo "peak RSS: $steps steps ${small} KiB, $((5 * steps)) steps ${large} KiB"
# Allow 16 MiB of noise (allocator, StarPU's lazily grown pools).
if [ "$large" -gt $((small + 16384)) ]; then echo "FAIL: memory grows with the step count"; exit 1; fi
echo "OK: memory flat in the step count"
