#!/usr/bin/env bash
# Renders heat3d's HTML report in headless Chromium: the DOM after the page's script ran must
# have one Gantt row per worker and one task rectangle per task of the run's JSON trace; a
# screenshot must come out. Exits 77 (skipped) only when no Chromium is installed.
#   report_dom.sh HEAT3D_EXE WORK_DIR
set -euo pipefail
heat3d=$1
work=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "no chromium: install Debian's chromium package (scripts/install-deps.sh)"
  exit 77
fi
mkdir -p "$work"
rm -f "$work"/report.html "$work"/trace.json "$work"/dom.html "$work"/report.png
"$heat3d" --size 24 20 16 --tile 24 20 5 --steps 3 --ncpu 2 --quiet \
  --trace "$work/trace.json" --report "$work/report.html"

# Chromium wants a writable home for its profile; keep it inside the work directory.
export HOME="$work/home"
mkdir -p "$HOME"
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile")
timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/report.html" > "$work/dom.html" 2> "$work/chromium.log"
timeout 60 "$browser" "${flags[@]}" --window-size=1280,900 --screenshot="$work/report.png" \
  "file://$work/report.html" >> "$work/chromium.log" 2>&1

count() { grep -o "$1" "$2" | wc -l; }
tasks=$(count '"ph": "X"' "$work/trace.json")
workers=$(count '"name": "thread_name"' "$work/trace.json")
rows=$(count 'class="gantt-row"' "$work/dom.html")
rects=$(count 'class="task"' "$work/dom.html")
echo "trace: $tasks tasks on $workers workers; DOM: $rows Gantt rows, $rects task rectangles"
status=0
if [ "$workers" -ne 2 ] || [ "$rows" -ne "$workers" ]; then echo "FAIL: one Gantt row per worker"; status=1; fi
if [ "$tasks" -eq 0 ] || [ "$rects" -ne "$tasks" ]; then echo "FAIL: one rectangle per task"; status=1; fi
if ! grep -q "data-tasks=\"$tasks\"" "$work/dom.html"; then echo "FAIL: task count in the page"; status=1; fi
if [ ! -s "$work/report.png" ]; then echo "FAIL: no screenshot"; cat "$work/chromium.log"; status=1; fi
exit $status
