#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugprone and performance checks) over the library's sources
# (core/, tasks/, perfmodels/, kernels/, partition/, trace/; the headers they include from
# include/tessera and those folders too) with the build's compile_commands.json. Any finding
# fails it (WarningsAsErrors). 2-3 minutes on 2 cores; the tidy test (label slow) runs it.
#   bash scripts/tidy.sh [BUILD_DIR]     (default build/; JOBS=2 parallel clang-tidy runs)
#   bash scripts/tidy.sh build core/runtime/runtime.cpp ...   only these files
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true
tidy=${CLANG_TIDY:-clang-tidy}
command -v "$tidy" > /dev/null || { echo "tidy: $tidy not found (apt-get install clang-tidy)" >&2; exit 2; }
[ -f "$build/CMakeCache.txt" ] || { echo "tidy: $build is not a configured build (scripts/build.sh)" >&2; exit 2; }
# The compile commands of the build (its flags and definitions); an existing build that was
# configured without them (before CMAKE_EXPORT_COMPILE_COMMANDS was on by default) gets them
# by one more configure step (nothing is rebuilt).
if [ ! -f "$build/compile_commands.json" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > /dev/null
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  # The library's C++ sources as this build compiles them (CUDA and METIS sources only when on).
  mapfile -t files < <(python3 - "$build/compile_commands.json" "$root" <<'PY'
import json, os, re, sys
root = os.path.realpath(sys.argv[2])
lib = re.compile(r"(core|tasks|perfmodels|kernels|partition|trace)/.*\.cpp$")
seen = set()
for entry in json.load(open(sys.argv[1])):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(path, root)
    if lib.match(rel) and rel not in seen:
        seen.add(rel)
        print(rel)
PY
  )
fi
cd "$root"
# One clang-tidy per file, JOBS at a time; its findings, then which files failed.
# shellcheck disable=SC2016  # the sh -c script expands its own arguments
printf '%s\n' "${files[@]}" |
  xargs -P "${JOBS:-2}" -I{} sh -c '"$0" -p "$1" --quiet "$2" 2>/dev/null || { echo "tidy: $2 failed" >&2; exit 1; }' \
    "$tidy" "$build" {} && { echo "tidy: ${#files[@]} files clean"; exit 0; }
echo "tidy: findings above (.clang-tidy, docs/building.md)" >&2
exit 1
