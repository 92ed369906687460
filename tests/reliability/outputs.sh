#!/usr/bin/env bash
# Trace and report files are whole or absent: a failed write is an error (non-zero exit, a
# message), an existing file stays untouched until the new one is complete (also when the run
# fails or is killed), --trace and --report may not name one file, no temporary file is left,
# and a run that fails after start-up prints no summary.
#   outputs.sh HEAT3D WORK_DIR
set -u
heat3d=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
export STARPU_SILENT=1
small=(--size 8 8 8 --tile 8 8 4 --steps 2 --ncpu 1)
status=0
fail() { echo "FAIL: $*"; status=1; }

# A device that is always full: the write fails, and says so.
out=$("$heat3d" "${small[@]}" --quiet --trace /dev/full 2>&1); rc=$?
[ "$rc" -ne 0 ] || fail "--trace /dev/full exited 0"
grep -q "could not write the --trace file '/dev/full'" <<<"$out" || fail "no message for /dev/full: $out"
[ -c /dev/full ] || fail "/dev/full is no longer a device"

# The same file twice.
out=$("$heat3d" "${small[@]}" --quiet --trace same.out --report ./same.out 2>&1); rc=$?
[ "$rc" -ne 0 ] || fail "identical --trace and --report accepted"
grep -q "both name" <<<"$out" || fail "no message for identical paths: $out"
[ -e same.out ] && fail "a refused run created same.out"

# A good run: valid JSON and HTML, nothing else left in the directory.
"$heat3d" "${small[@]}" --quiet --trace t.json --report r.html || fail "good run failed"
python3 -c "import json,sys; json.load(open('t.json'))" || fail "t.json is not valid JSON"
grep -q "</html>" r.html || fail "r.html is incomplete"
left=$(ls -A | grep -v -x -e t.json -e r.html)
[ -z "$left" ] || fail "files left behind: $left"
cp t.json before.json

# A run that fails after start-up (unstable --alpha is refused once the runtime is up) leaves
# the previous trace as it was, and prints no summary.
out=$("$heat3d" "${small[@]}" --alpha 10 --trace t.json 2>&1); rc=$?
[ "$rc" -ne 0 ] || fail "--alpha 10 accepted"
grep -q "stability" <<<"$out" || fail "no stability message: $out"
grep -q "tessera summary" <<<"$out" && fail "a failed run printed a summary: $out"
cmp -s t.json before.json || fail "a failed run changed the previous trace"

# A run killed mid-way (SIGTERM) leaves the previous trace as it was.
"$heat3d" --size 32 32 32 --tile 32 32 8 --steps 1000000 --ncpu 1 --quiet --trace t.json &
pid=$!
sleep 2
kill -TERM "$pid"; wait "$pid" 2>/dev/null
cmp -s t.json before.json || fail "a killed run changed the previous trace"

[ "$status" -eq 0 ] && echo "OK: outputs whole or absent"
exit "$status"
