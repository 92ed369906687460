#!/usr/bin/env bash
# tessera-trace on input it cannot use: a missing, empty, truncated or binary trace, a JSON of
# another tool ({} and []), an --html page under a regular file. Each must end with exit
# status 2 and "tessera-trace: " and the file's name, never a Python traceback; a real trace
# (from heat3d) is still summarised and compared.
#   trace_tool.sh HEAT3D WORK_DIR
set -u
tool=$(cd "$(dirname "$0")/../../trace" && pwd)/tessera-trace
heat3d=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failed=0
# expect NAME REGEX ARGS...: exit status 2, the message, no traceback.
expect() {
  local name=$1 pattern=$2
  shift 2
  local out rc
  out=$(python3 "$tool" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qE -- "$pattern" <<<"$out" || grep -q Traceback <<<"$out"; then
    echo "FAIL $name (exit status $rc):"; sed 's/^/  | /' <<<"$out" | tail -5
    failed=$((failed + 1))
  else
    echo "PASS $name: $out"
  fi
}
STARPU_SILENT=1 "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --ncpu 1 --quiet --trace good.json > /dev/null || exit 1
: > empty.json
head -c 300 good.json > cut.json
head -c 200 "$heat3d" > binary.json
echo '{}' > object.json
echo '[]' > list.json
touch afile
expect "missing trace" "^tessera-trace: cannot read the trace 'missing.json': No such file" missing.json
expect "empty trace" "^tessera-trace: the trace 'empty.json' is empty" empty.json
expect "truncated trace" "^tessera-trace: the trace 'cut.json' is not valid JSON .*cut short" cut.json
expect "binary file" "^tessera-trace: the trace 'binary.json' is not (text|valid JSON)" binary.json
expect "JSON object of another tool" "^tessera-trace: 'object.json' is not a Tessera trace" object.json
expect "JSON list of another tool" "^tessera-trace: 'list.json' is not a Tessera trace" list.json
expect "compare with a bad trace" "^tessera-trace: 'object.json' is not a Tessera trace" --compare good.json object.json --html page.html
expect "--html under a regular file" "^tessera-trace: cannot write the --html page 'afile/page.html'" --compare good.json good.json --html afile/page.html
# Well-formed JSON a Tessera trace is not quite: each part of the good trace changed (issue 49).
edit() {  # edit OUT PYTHON: good.json's document as `d`, changed by PYTHON, written to OUT
  python3 -c "import json,sys; d=json.load(open('good.json')); $2; json.dump(d, open('$1','w'))"
}
first_task='next(e for e in d["traceEvents"] if e.get("ph") == "X")'
edit nocat.json "del $first_task['cat']"
edit zerospan.json "[e.update(ts=5, dur=0) for e in d['traceEvents'] if e.get('ph') == 'X']"
edit ranks_str.json "d['otherData']['tessera_ranks'] = 'two'"
edit ranks_int.json "d['otherData']['tessera_ranks'] = [1, 2]"
edit workers.json "d['otherData']['tessera_ranks'][0]['workers'] = 3"
edit bounds.json "d['otherData']['tessera_bounds'] = [1]"
edit step.json "$first_task['args'] = {'step': 'two'}"
edit counter.json "d['traceEvents'].append({'ph': 'C', 'pid': 0, 'args': 3})"
python3 -c "print('[' * 100000 + ']' * 100000)" > nested.json
expect "task event without cat" "^tessera-trace: the trace 'nocat.json': task event [0-9]+ lacks its kind \\(a string in cat\\)" nocat.json
python3 "$tool" zerospan.json 2>&1 | grep -q "zerospan.json rank 0: span=0.0ms .*(no worker time: the tasks span no time)" &&
  echo "PASS tasks spanning no time: summarised" || { echo "FAIL tasks spanning no time"; failed=$((failed + 1)); }
expect "--compare, tessera_ranks a string" "^tessera-trace: the trace 'ranks_str.json': otherData.tessera_ranks is not a list of ranks" --compare good.json ranks_str.json --html page.html
expect "--compare, tessera_ranks of numbers" "^tessera-trace: the trace 'ranks_int.json': otherData.tessera_ranks\\[0\\] is not a rank" --compare good.json ranks_int.json --html page.html
expect "--compare, workers a number" "^tessera-trace: the trace 'workers.json': otherData.tessera_ranks\\[0\\] is not a rank" --compare good.json workers.json --html page.html
expect "--compare, tessera_bounds a list" "^tessera-trace: the trace 'bounds.json': otherData.tessera_bounds is not an object" --compare good.json bounds.json --html page.html
expect "--compare, a task's step a string" "^tessera-trace: the trace 'step.json': task event [0-9]+ has args.step 'two', not a whole number" --compare good.json step.json --html page.html
expect "counter event without a name" "^tessera-trace: the trace 'counter.json': counter event [0-9]+ lacks" counter.json
expect "deeply nested document" "^tessera-trace: the trace 'nested.json' is nested too deeply" nested.json
# A real trace: summarised, and compared into a page (exit status 0).
python3 "$tool" good.json | grep -q "good.json rank 0: span=" || { echo "FAIL good trace not summarised"; failed=$((failed + 1)); }
python3 "$tool" --compare good.json good.json --html page.html && grep -q compare-kinds page.html ||
  { echo "FAIL good traces not compared"; failed=$((failed + 1)); }
echo "trace_tool: $failed failed"
exit "$failed"
