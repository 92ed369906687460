#!/usr/bin/env bash
# Renders HTML reports in headless Chromium and checks the DOM after the page's script ran:
#  - heat3d: one Gantt row per worker, one task rectangle per task of the run's JSON trace,
#    the bounds (makespan, critical path, area bound, efficiency) equal to the JSON's metadata
#    and to the printed summary, the ready-task curve, the per-step table, the idle split and
#    one tile-map rectangle per tile; a screenshot must come out;
#  - with an mpirun command: a 2-rank heat3d run, whose tile map has rank borders and a ready
#    curve per rank;
#  - with airfoil: a mesh run's report (bounds, ready curve, per-step table, idle split) and its
#    partition map (one polygon per cell, tile borders; rank borders on 2 ranks);
#  - the page comparing a run with --sched lws and one with --sched dmda.
# Exits 77 (skipped) only when no Chromium is installed.
#   report_dom.sh HEAT3D_EXE WORK_DIR [AIRFOIL_EXE [MPIRUN...]]   (MPIRUN "-": none)
set -euo pipefail
heat3d=$1
work=$2
airfoil=${3:-}
shift $(($# < 3 ? $# : 3))
mpirun=("$@")
[ "${mpirun[0]:-}" = "-" ] && mpirun=()
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "no chromium: install Debian's chromium package (scripts/install-deps.sh)"
  exit 77
fi
mkdir -p "$work"
rm -f "$work"/*.html "$work"/*.json "$work"/*.png "$work"/*.txt

# Chromium wants a writable home for its profile; keep it inside the work directory.
export HOME="$work/home"
mkdir -p "$HOME"
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile")
# render NAME: NAME.html -> NAME.dom.html and NAME.png
render() {
  timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/$1.html" > "$work/$1.dom.html" 2>> "$work/chromium.log"
  timeout 60 "$browser" "${flags[@]}" --window-size=1280,900 --screenshot="$work/$1.png" \
    "file://$work/$1.html" >> "$work/chromium.log" 2>&1
}
count() { grep -o "$1" "$2" | wc -l; }
status=0
fail() { echo "FAIL: $*"; status=1; }

# The bounds of a trace's metadata, "makespan critical area", as the report writes them
# (bounds_of_json FILE 1: %.3f us) or as the summary prints them (FILE 1000: %.3f ms).
bounds_of_json() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["otherData"]["tessera_bounds"]
keys = ("makespan_us", "critical_path_us", "area_bound_us")
print(" ".join(f"{b[k] / float(sys.argv[2]):.3f}" for k in keys))
EOF
}
# check_analysis NAME: the panels every report with task data has.
check_analysis() {
  local dom="$work/$1.dom.html" in_dom
  read -r -a expected < <(bounds_of_json "$work/$1.json" 1)
  in_dom=$(grep -o 'data-makespan-us="[^"]*" data-critical-path-us="[^"]*" data-area-bound-us="[^"]*"' "$dom" |
    sed -E 's/[a-z-]+="([^"]*)"/\1/g')
  [ "$in_dom" = "${expected[*]}" ] || fail "$1: report bounds '$in_dom', JSON '${expected[*]}'"
  [ "$(count 'class="ready-curve"' "$dom")" -eq "$2" ] || fail "$1: not one ready-task curve per rank"
  [ "$(count 'class="step-row"' "$dom")" -gt 0 ] || fail "$1: no per-step rows"
  [ "$(count 'class="idle-row"' "$dom")" -gt 0 ] || fail "$1: no idle split"
  [ "$(count 'data-critical="1"' "$dom")" -gt 0 ] || fail "$1: no task outlined on the critical path"
}

# heat3d, one rank: 24 x 20 x 16 points in 24 x 20 x 5 tiles make 4 tiles.
"$heat3d" --size 24 20 16 --tile 24 20 5 --steps 3 --ncpu 2 \
  --trace "$work/heat3d.json" --report "$work/heat3d.html" > "$work/heat3d.txt"
render heat3d
dom="$work/heat3d.dom.html"
tasks=$(count '"ph": "X"' "$work/heat3d.json")
workers=$(count '"name": "thread_name"' "$work/heat3d.json")
rows=$(count 'class="gantt-row"' "$dom")
rects=$(count 'class="task"' "$dom")
tiles=$(count 'class="tile"' "$dom")
echo "heat3d: $tasks tasks on $workers workers; DOM: $rows Gantt rows, $rects task rectangles, $tiles tiles"
if [ "$workers" -ne 2 ] || [ "$rows" -ne "$workers" ]; then fail "one Gantt row per worker"; fi
if [ "$tasks" -eq 0 ] || [ "$rects" -ne "$tasks" ]; then fail "one rectangle per task"; fi
grep -q "data-tasks=\"$tasks\"" "$dom" || fail "task count in the page"
[ "$tiles" -eq 4 ] || fail "tile map: $tiles tile rectangles, not 4"
[ "$(count 'class="tile-map"' "$dom")" -eq 1 ] || fail "not one tile map"
check_analysis heat3d 1
summary=$(bounds_of_json "$work/heat3d.json" 1000)
read -r makespan critical area <<< "$summary"
grep -Eq "makespan +$makespan ms" "$work/heat3d.txt" || fail "summary makespan is not $makespan ms"
grep -Eq "critical path +$critical ms" "$work/heat3d.txt" || fail "summary critical path is not $critical ms"
grep -Eq "area bound +$area ms" "$work/heat3d.txt" || fail "summary area bound is not $area ms"
if [ ! -s "$work/heat3d.png" ]; then fail "no screenshot"; cat "$work/chromium.log"; fi

# Two runs side by side: lws against dmda, one page (tessera-trace --compare, the installed tool).
for sched in lws dmda; do
  "$heat3d" --size 24 20 16 --tile 24 20 5 --steps 3 --ncpu 2 --sched "$sched" --quiet \
    --trace "$work/$sched.json"
done
python3 "$(dirname "$0")/../trace/tessera-trace" --compare "$work/lws.json" "$work/dmda.json" \
  --names lws dmda --html "$work/compare.html"
render compare
dom="$work/compare.dom.html"
for table in compare-bounds compare-kinds compare-classes compare-steps; do
  grep -q "<table id=\"$table\">" "$dom" || fail "compare page: no $table table"
done
echo "compare: $(count 'class="compare-row"' "$dom") rows"
grep -q '<td>makespan ms</td>' "$dom" || fail "compare page: no makespan row"
[ "$(count 'class="compare-row"' "$dom")" -ge 10 ] || fail "compare page: too few rows"

if [ ${#mpirun[@]} -gt 0 ]; then
  # heat3d on 2 ranks: 32 x 32 x 32 in 32 x 32 x 8 tiles, split along z.
  STARPU_NCPU=1 STARPU_SILENT=1 "${mpirun[@]}" -np 2 "$heat3d" --size 32 32 32 --tile 32 32 8 \
    --steps 3 --quiet --trace "$work/mpi.json" --report "$work/mpi.html"
  render mpi
  dom="$work/mpi.dom.html"
  echo "heat3d on 2 ranks: $(count 'class="tile"' "$dom") tiles, $(count 'class="rank-border"' "$dom") rank borders"
  [ "$(count 'class="tile"' "$dom")" -eq 4 ] || fail "2 ranks: not 4 tiles"
  [ "$(count 'class="rank-border"' "$dom")" -ge 1 ] || fail "2 ranks: no rank border"
  grep -q 'class="tile"[^>]*data-rank="1"' "$dom" || fail "2 ranks: no tile of rank 1"
  check_analysis mpi 2
  # One flow pair (start and end with the same id) per StarPU-MPI message the run counted.
  python3 - "$work/mpi.json" <<'EOF' || fail "2 ranks: flow arrows do not match the messages"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
starts = sorted(e["id"] for e in events if e["ph"] == "s")
ends = sorted(e["id"] for e in events if e["ph"] == "f")
messages = sum(e["args"]["transfers"] for e in events if e["ph"] == "C" and e["name"].startswith("mpi "))
print(f"2 ranks: {len(starts)} flow pairs, {messages} messages counted by the run")
sys.exit(0 if starts == ends and len(set(starts)) == len(starts) == messages > 0 else 1)
EOF
fi

if [ -n "$airfoil" ]; then
  "$airfoil" --mesh-size 8 12 --iterations 4 --ncpu 2 --quiet \
    --trace "$work/airfoil.json" --report "$work/airfoil.html" > "$work/airfoil.txt"
  render airfoil
  dom="$work/airfoil.dom.html"
  cells=$(grep -o 'cells=[0-9]*' "$work/airfoil.txt" | cut -d= -f2)
  echo "airfoil: $(count 'class="task"' "$dom") task rectangles; partition map:" \
    "$(count 'class="partition-element"' "$dom") cells of $cells, $(count 'class="tile-border"' "$dom") tile borders"
  check_analysis airfoil 1
  # The partition map: one polygon per cell, borders between tiles, every tile's worker known.
  [ "$(count 'class="partition-map"' "$dom")" -eq 1 ] || fail "airfoil: not one partition map"
  [ "$(count 'class="partition-element"' "$dom")" -eq "$cells" ] || fail "airfoil: not one polygon per cell"
  [ "$(count 'class="tile-border"' "$dom")" -gt 0 ] || fail "airfoil: no border between tiles"
  grep -q 'class="partition-element"[^>]*fill="#ddd"' "$dom" && fail "airfoil: a tile without its worker"
  if [ ${#mpirun[@]} -gt 0 ]; then
    STARPU_NCPU=1 STARPU_SILENT=1 "${mpirun[@]}" -np 2 "$airfoil" --mesh-size 8 12 --iterations 2 \
      --quiet --report "$work/airfoil2.html" > /dev/null
    render airfoil2
    dom="$work/airfoil2.dom.html"
    echo "airfoil on 2 ranks: $(count 'class="rank-border"' "$dom") rank borders"
    [ "$(count 'class="partition-element"' "$dom")" -eq "$cells" ] || fail "airfoil, 2 ranks: not one polygon per cell"
    [ "$(count 'class="rank-border"' "$dom")" -gt 0 ] || fail "airfoil, 2 ranks: no rank border"
    grep -q 'class="partition-element"[^>]*data-rank="1"' "$dom" || fail "airfoil, 2 ranks: no cell of rank 1"
  fi
fi
exit $status
