#!/usr/bin/env bash
# The run summary's efficiency (max(critical path, area bound) / makespan) of small and large
# stencil runs on 2 CPU workers under each scheduler, in interleaved rounds; one line per case
# and scheduler: min-median-max over the rounds (docs/scheduling.md, "The default scheduler, run
# by run").
#   bash bench/schedulers.sh [BUILD_DIR] [ROUNDS] [SCHEDULERS...]
# Time only on a quiet machine (docs/performance.md).
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
scheds=("$@")
[ ${#scheds[@]} -gt 0 ] || scheds=(dmda eager lws)
cases=(
  "life 1024^2, 2 tiles|life/life --size 1024 1024 --tile 1024 512 --steps 2000"
  "heat3d 64^3, 2 tiles|heat3d/heat3d --size 64 64 64 --tile 64 64 32 --steps 2000"
  "life 1024^2, 8 tiles|life/life --size 1024 1024 --tile 1024 128 --steps 2000"
  "heat3d 64^3, 4 tiles|heat3d/heat3d --size 64 64 64 --tile 64 64 16 --steps 2000"
  "heat3d 256^3, 8 tiles|heat3d/heat3d --size 256 256 256 --tile 256 256 32 --steps 40"
  "life 4096^2, 8 tiles|life/life --size 4096 4096 --tile 4096 512 --steps 200"
)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for s in "${scheds[@]}"; do
    for c in "${cases[@]}"; do
      read -r -a cmd <<<"${c#*|}"
      e=$(STARPU_NCPU=2 STARPU_SILENT=1 "$build/apps/${cmd[0]}" "${cmd[@]:1}" --sched "$s" 2>&1 |
        awk '/^  efficiency/ {print $2}')
      echo "${c%%|*}|$s|${e:-nan}" >>"$out"
    done
  done
done
python3 - "$out" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    case, sched, e = line.strip().split("|")
    rows.setdefault(case, {}).setdefault(sched, []).append(float(e))
scheds = list(next(iter(rows.values())).keys())
print("| case | " + " | ".join(scheds) + " |")
print("|---" * (len(scheds) + 1) + "|")
for case, by in rows.items():
    cells = [f"{min(v):.1f}–{statistics.median(v):.1f}–{max(v):.1f} %" for v in by.values()]
    print(f"| {case} | " + " | ".join(cells) + " |")
PY
