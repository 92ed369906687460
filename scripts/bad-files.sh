#!/usr/bin/env bash
# Damaged and foreign files that Tessera or StarPU read (performance models, bus calibration,
# checkpoints, meshes, traces), every output path of tessera-trace, stalled runs and the last
# misleading messages (issue 72), as bad-input.sh does for flags: one verdict per case, PASS
# when the run ended by itself, without a crash, with the expected exit status and message.
# No case may remove or overwrite a file a user made: a damaged model is moved aside.
#   bash scripts/bad-files.sh [BUILD_DIR]        (default build/; needs the apps built)
# Exit status: the number of failures. See docs/reliability.md, "Damaged files".
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)
heat3d=$build/apps/heat3d/heat3d nbody=$build/apps/nbody/nbody airfoil=$build/apps/airfoil/airfoil
mg=$build/apps/mg/mg trace_tool=$root/trace/tessera-trace
for app in "$heat3d" "$nbody" "$airfoil" "$mg"; do
  [ -x "$app" ] || { echo "missing $app: build first (bash scripts/build.sh)"; exit 1; }
done
source "$root/scripts/bad-cases.sh"

# A model directory that StarPU filled: dmda reads and updates the models (lws would not).
loud=(--size 16 16 16 --tile 16 16 8 --ncpu 2 --steps 4 --sched dmda)
run=("${loud[@]}" --quiet)
"$heat3d" "${run[@]}" --perfmodel-dir good > /dev/null 2>&1 || { echo "FAIL the first run"; exit 1; }
models=(good/codelets/45/tessera.*)
[ -e "${models[0]}" ] || { echo "FAIL no model in good/codelets/45"; exit 1; }
host_config=$(ls good/bus/*.config | head -1)
host=$(basename "$host_config" .config)

# damaged NAME DAMAGE: a copy of good/ whose files of Tessera's models DAMAGE (a shell command
# on "$1", the file) changes; then a run must end well, say each file moved, and leave every
# damaged file beside its old name (nothing removed).
damaged='dir=$1 damage=$2; shift 2; rm -rf "$dir"; cp -r good "$dir"
  n=0; for f in "$dir"/codelets/45/tessera.*; do eval "$damage"; n=$((n + 1)); done
  "$@" --perfmodel-dir "$dir" || exit 1
  kept=$(ls -d "$dir"/codelets/45/*.damaged-1 2> /dev/null | wc -l)
  [ "$kept" -eq "$n" ] || { echo "LOST: $kept of $n damaged models kept aside"; exit 1; }
  "$@" --perfmodel-dir "$dir" 2>&1 | grep -q damaged && { echo "said again on the next run"; exit 1; }
  echo "all $n damaged models kept aside"'
moved="the performance model .* is damaged \\(.*\\), and StarPU would abort reading it: moved aside to .*damaged-1; StarPU calibrates this model again"
model_case() {  # model_case NAME DAMAGE
  check "model: $1" ok "$moved" bash -c "$damaged" _ "m$((++model_cases))" "$2" "$heat3d" "${run[@]}"
}
model_cases=0
echo "== performance models (codelets/45/tessera.*)"
model_case "garbage text" 'echo "this is not a model" > "$f"'
model_case "binary" 'head -c 3000 /dev/urandom > "$f"'
model_case "cut in half" 'head -c $(($(stat -c %s "$f") / 2)) "$f" > x && mv x "$f"'
model_case "cut to 10 bytes" 'head -c 10 "$f" > x && mv x "$f"'
model_case "cut before its last newline" 'head -c $(($(stat -c %s "$f") - 2)) "$f" > x && mv x "$f"'
model_case "a directory in its place" 'rm "$f" && mkdir "$f"'
model_case "a NaN mean" 'awk -F"\t" -v OFS="\t" "NF>=7 && !/^#/ {\$4=\"nan\"} 1" "$f" > x && mv x "$f"'
model_case "a huge negative mean" 'awk -F"\t" -v OFS="\t" "NF>=7 && !/^#/ {\$4=\"-1e300\"} 1" "$f" > x && mv x "$f"'
model_case "a negative deviation" 'awk -F"\t" -v OFS="\t" "NF>=7 && !/^#/ {\$5=\"-3\"} 1" "$f" > x && mv x "$f"'
model_case "negative flops" 'awk -F"\t" -v OFS="\t" "NF>=8 && !/^#/ {\$3=\"-5\"} 1" "$f" > x && mv x "$f"'
model_case "another model version (44)" 'sed -i "0,/^45\$/s//44/" "$f"'
model_case "10^9 device combinations" 'awk "!/^#/ && !d && /^[0-9]+\$/ {c++; if (c==2) {\$0=\"999999999\"; d=1}} 1" "$f" > x && mv x "$f"'
model_case "a history line of 300 characters" 'awk -F"\t" -v OFS="\t" "NF>=7 && !/^#/ {\$1=\$1 sprintf(\"%300s\", \"\")} 1" "$f" > x && mv x "$f"'
model_case "a Windows copy (CRLF), then cut" 'sed -i "s/\$/\r/" "$f" && head -c 200 "$f" > x && mv x "$f"'
check "model: empty (StarPU ignores it)" ok "checksum=" bash -c 'rm -rf e && cp -r good e && for f in e/codelets/45/tessera.*; do : > "$f"; done && "$@" --perfmodel-dir e' _ "$heat3d" "${loud[@]}"
check "model: a user's NAME.damaged-1 kept" ok "moved aside to .*damaged-2" bash -c 'rm -rf u && cp -r good u && f=$(ls u/codelets/45/tessera.* | head -1) && echo mine > "$f.damaged-1" && echo junk > "$f" && "$@" --perfmodel-dir u 2>&1; grep -q mine "$f.damaged-1" || echo "LOST the user file"' _ "$heat3d" "${run[@]}"
check "model: under HOME (StarPU's default)" ok "$moved" bash -c 'rm -rf h && mkdir -p h/.starpu && cp -r good h/.starpu/sampling && for f in h/.starpu/sampling/codelets/45/tessera.*; do echo junk > "$f"; done && env -u XDG_CACHE_HOME -u STARPU_HOME -u STARPU_PERF_MODEL_DIR HOME="$PWD/h" "$@"' _ "$heat3d" "${run[@]}"
check "model: under STARPU_PERF_MODEL_DIR" ok "$moved" bash -c 'rm -rf v && cp -r good v && for f in v/codelets/45/tessera.*; do echo junk > "$f"; done && STARPU_PERF_MODEL_DIR="$PWD/v" "$@"' _ "$heat3d" "${run[@]}"
check "model: in StarPU 1.4's home in the directory" ok "$moved" bash -c 'rm -rf p && cp -r good p && mkdir -p p/.starpu-home/.starpu && cp -r good p/.starpu-home/.starpu/sampling && for f in p/.starpu-home/.starpu/sampling/codelets/45/tessera.*; do echo junk > "$f"; done && "$@" --perfmodel-dir p' _ "$heat3d" "${run[@]}"
check "model folder codelets/45 is a file" ok "model folder c45/codelets/45 is a file, and StarPU would abort creating the folder there: moved aside" bash -c 'rm -rf c45 && mkdir -p c45/codelets && echo x > c45/codelets/45 && "$@" --perfmodel-dir c45' _ "$heat3d" "${run[@]}"
check "model folder codelets is a file" ok "model folder cf/codelets is a file, and StarPU would abort" bash -c 'rm -rf cf && mkdir -p cf && echo x > cf/codelets && "$@" --perfmodel-dir cf' _ "$heat3d" "${run[@]}"
check "a foreign model (not tessera.*) left alone" ok "checksum=" bash -c 'rm -rf fo && cp -r good fo && echo junk > fo/codelets/45/other.model && "$@" --perfmodel-dir fo && grep -q junk fo/codelets/45/other.model' _ "$heat3d" "${loud[@]}"

echo "== bus calibration (bus/HOST.*)"
# bus_case NAME FILE DAMAGE: the host's FILE (config, affinity, latency, bandwidth) damaged.
bus_case() {
  local dir="b$((++bus_cases))"
  check "bus: $1" ok "bus calibration file .*bus/$host.$2 is damaged .*moved aside to .*StarPU measures the bus again" bash -c 'dir=$1 kind=$2 damage=$3; shift 3; rm -rf "$dir" && cp -r good "$dir" && f=$(ls "$dir"/bus/*."$kind") && eval "$damage" && "$@" --perfmodel-dir "$dir" && ls "$f.damaged-1" > /dev/null' _ "$dir" "$2" "$3" "$heat3d" "${run[@]}"
}
bus_cases=0
bus_case "config garbage" config 'echo "garbage" > "$f"'
bus_case "config empty" config ': > "$f"'
bus_case "config only its comment" config 'echo "# Current configuration" > "$f"'
bus_case "config binary" config 'head -c 500 /dev/urandom > "$f"'
bus_case "config a directory" config 'rm "$f" && mkdir "$f"'
bus_case "affinity empty" affinity ': > "$f"'
bus_case "affinity a directory" affinity 'rm "$f" && mkdir "$f"'
bus_case "latency garbage" latency 'echo "fast slow" > "$f"'
bus_case "latency negative" latency 'sed -i "/^[^#]/s/^[0-9.e+]*/-7/" "$f"'
bus_case "bandwidth empty" bandwidth ': > "$f"'
bus_case "bandwidth binary" bandwidth 'head -c 500 /dev/urandom > "$f"'
check "bus folder is a file" ok "model folder bf/bus is a file, and StarPU would abort" bash -c 'rm -rf bf && cp -r good bf && rm -r bf/bus && echo x > bf/bus && "$@" --perfmodel-dir bf' _ "$heat3d" "${run[@]}"
check "bus: another host's damaged file left alone" ok "checksum=" bash -c 'rm -rf oh && cp -r good oh && echo junk > oh/bus/elsewhere.config && "$@" --perfmodel-dir oh && grep -q junk oh/bus/elsewhere.config' _ "$heat3d" "${loud[@]}"

echo "== tessera-trace's output"
"$heat3d" --size 8 8 8 --tile 8 8 4 --ncpu 1 --steps 2 --quiet --trace a.json > /dev/null
cp a.json b.json && cp a.json a.keep
check "--html is trace A" fail "--html 'a.json' is the trace A \\('a.json'\\): writing the page would replace that trace" python3 "$trace_tool" --compare a.json b.json --html a.json
check "--html ./a.json (the same file)" fail "--html './a.json' is the trace A" python3 "$trace_tool" --compare a.json b.json --html ./a.json
check "--html is trace B by another path" fail "is the trace B" python3 "$trace_tool" --compare a.json b.json --html "$work/b.json"
ln -sf a.json alink.json
check "--html a link to trace A" fail "is the trace A" python3 "$trace_tool" --compare a.json b.json --html alink.json
ln -f b.json bhard.json
check "--html a hard link to trace B" fail "is the trace B" python3 "$trace_tool" --compare a.json b.json --html bhard.json
check "the traces untouched after the refusals" ok "^same$" bash -c 'cmp -s a.json a.keep && cmp -s b.json a.keep && echo same'
check "--html a directory" fail "--html page '.' is a directory" python3 "$trace_tool" --compare a.json b.json --html .
check "--html /dev/full" fail "cannot write the --html page '/dev/full'" python3 "$trace_tool" --compare a.json b.json --html /dev/full
check "--html in a missing folder" fail "cannot write the --html page 'nodir/p.html'" python3 "$trace_tool" --compare a.json b.json --html nodir/p.html
check "--html /dev/null (a device)" ok "^written$" bash -c 'python3 "$1" --compare a.json b.json --html /dev/null && echo written' _ "$trace_tool"
python3 "$trace_tool" --compare a.json b.json --html page.html && cp page.html page.keep
check "--html on a full disk keeps the older page" fail "cannot write the --html page 'page.html'" bash -c 'trap "" XFSZ; ulimit -f 4; python3 "$1" --compare a.json b.json --html page.html; rc=$?; cmp -s page.html page.keep || echo "the older page was changed"; ls -a | grep -q "\.page\.html\.tmp" && echo "a temporary file was left"; exit $rc' _ "$trace_tool"
check "--html over an older page (replaced whole)" ok "^replaced$" bash -c 'echo old > old.html && python3 "$1" --compare a.json b.json --html old.html && grep -q "two runs compared" old.html && echo replaced' _ "$trace_tool"

echo "== checkpoints a restart reads"
ck=(--size 8 8 8 --tile 8 8 4 --ncpu 1 --quiet)
"$heat3d" "${ck[@]}" --steps 2 --checkpoint-every 2 --checkpoint-dir ckgood > /dev/null
# ck_case NAME REGEX DAMAGE: a copy of the checkpoint damaged, then a restart from it.
ck_case() {
  check "restart: $1" fail "$2" bash -c 'rm -rf ckd && cp -r ckgood ckd && c=ckd/step-00000002 && eval "$1" && "$2" "${@:3}" --steps 4 --restart ckd/step-00000002' _ "$3" "$heat3d" "${ck[@]}"
}
ck_case "manifest garbage" "checkpoint ckd/step-00000002 cannot be restarted from" 'echo garbage > $c/manifest'
ck_case "manifest empty" "checkpoint ckd/step-00000002 cannot be restarted from" ': > $c/manifest'
ck_case "manifest binary" "checkpoint ckd/step-00000002 cannot be restarted from" 'head -c 700 /dev/urandom > $c/manifest'
ck_case "manifest cut in half" "checkpoint ckd/step-00000002 cannot be restarted from" 'head -c $(($(stat -c %s $c/manifest) / 2)) $c/manifest > x && mv x $c/manifest'
ck_case "manifest a directory" "checkpoint ckd/step-00000002 cannot be restarted from" 'rm $c/manifest && mkdir $c/manifest'
ck_case "a tile file cut short" "tile file .* is missing or truncated" 'f=$c/u_0.bin; head -c 20 "$f" > x && mv x "$f"'
ck_case "a tile file's bytes changed" "checkpoint ckd/step-00000002 cannot be restarted from" 'f=$c/u_0.bin; printf "\377\377\377\377" | dd of="$f" bs=1 seek=200 conv=notrunc 2> /dev/null'
check "restart: a checkpoint of another grid" fail "was written by 'heat3d --size 8x8x8 .*restart with the same program, --size and options" "$heat3d" --size 16 8 8 --tile 8 8 4 --ncpu 1 --quiet --steps 4 --restart ckgood/step-00000002

echo "== meshes (airfoil --mesh)"
mesh_tail='0 1 2 3\n0 1 0 0\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n3 0 0 1\n'
printf "\357\273\2774 1 4 4\n0 0\n1 0\n1 1\n0 1\n$mesh_tail" > bom.dat
check "mesh with a UTF-8 byte-order mark (read)" ok "rms=" "$airfoil" --mesh bom.dat --iterations 1 --ncpu 1 --quiet
printf "\3774 1 4 4\n0 0\n1 0\n1 1\n0 1\n$mesh_tail" > stray.dat
check "mesh header with a stray byte (shown \\xFF)" fail "count of nodes, \\\\xFF4, is not a whole number" "$airfoil" --mesh stray.dat --iterations 1
printf "4 1 4 4\r\n0 0\r\n1 0\r\n1 1\r\n0 1\r\n$(printf "$mesh_tail" | sed 's/$/\r/')" > crlf.dat
check "mesh with Windows line ends (read)" ok "rms=" "$airfoil" --mesh crlf.dat --iterations 1 --ncpu 1 --quiet
head -c 2000 /dev/urandom > binmesh.dat
check "mesh binary" fail "mesh file 'binmesh.dat'" "$airfoil" --mesh binmesh.dat --iterations 1
: > empty.dat
check "mesh empty" fail "mesh file 'empty.dat': no header line of 4 counts" "$airfoil" --mesh empty.dat --iterations 1
printf "4 1 4 4\n" > header_only.dat
check "mesh header only" fail "mesh file 'header_only.dat': its header promises 4 nodes" "$airfoil" --mesh header_only.dat --iterations 1

echo "== messages that misled"
check "steps-per-exchange 4096 on 32^3 names the depth" fail "--steps-per-exchange 4096 makes ghost layers 4096 deep .*a tile is only [0-9]+ point\\(s\\) thick .*give --steps-per-exchange [0-9]+ or less" "$heat3d" --size 32 32 32 --steps 4 --steps-per-exchange 4096
check "nbody --seed -1" fail "seed: -1 is not between 0 and 9223372036854775807" "$nbody" --size 64 --steps 1 --seed -1
check "nbody --seed 10^20" fail "seed: 99999999999999999999 is out of range" "$nbody" --size 64 --steps 1 --seed 99999999999999999999
check "mg --size 10^20 named as typed" fail "size: 99999999999999999999 is out of range" "$mg" --class U --size 99999999999999999999
check "mg --size 48 (not a power of two)" fail "48" "$mg" --class U --size 48

echo "== stalls: the watchdog, on by default"
check "the configuration line says the watchdog" ok "watchdog after 600.0 s without progress, longer after long tasks \\(--watchdog SECONDS sets it, 0 turns it off\\)" "$heat3d" --size 8 8 8 --ncpu 1 --steps 1
check "TESSERA_WATCHDOG_MIN_SECONDS=abc" fail "TESSERA_WATCHDOG_MIN_SECONDS=abc is not a number of seconds above 0" env TESSERA_WATCHDOG_MIN_SECONDS=abc "$heat3d" --size 8 8 8 --ncpu 1 --steps 1
check "TESSERA_WATCHDOG_MIN_SECONDS=0" fail "TESSERA_WATCHDOG_MIN_SECONDS=0 is not a number of seconds above 0" env TESSERA_WATCHDOG_MIN_SECONDS=0 "$heat3d" --size 8 8 8 --ncpu 1 --steps 1
if [ -x "$build/tests/watchdog" ]; then
  check "a task that never ends, no flag (1 rank)" fail "^tessera: the watchdog saw no progress for [0-9.]+ s .*the watchdog's automatic time" env TESSERA_WATCHDOG_MIN_SECONDS=2 STARPU_NCPU=1 "$build/tests/watchdog" slow-task 40
  check "the same, --watchdog 0 (off): it finishes" ok "finished: sum" env TESSERA_WATCHDOG_MIN_SECONDS=1 STARPU_NCPU=1 "$build/tests/watchdog" slow-task 3 --watchdog 0
  check "short tasks, a 1 s floor: never fires" ok "finished: sum" env TESSERA_WATCHDOG_MIN_SECONDS=1 STARPU_NCPU=1 "$build/tests/watchdog" host-work
  mpirun=$(command -v mpirun || true)
  if [ -n "$mpirun" ]; then
    mpi=("$mpirun" --oversubscribe --allow-run-as-root --bind-to none -x STARPU_NCPU=1 -x TESSERA_WATCHDOG_MIN_SECONDS=3)
    check "rank 1 stopped, no flag (2 ranks)" fail "^tessera: rank 0: the watchdog saw no progress .*Another rank may be stopped" "${mpi[@]}" -np 2 "$build/tests/watchdog" stop
    check "rank 1 stopped before a sum, no flag (2 ranks)" fail "^tessera: rank 0: the watchdog saw no progress .*collective" "${mpi[@]}" -np 2 "$build/tests/watchdog" stop-at-sum
    check "2 ranks, damaged models in a shared folder" ok "moved aside" bash -c 'rm -rf mm && cp -r good mm && for f in mm/codelets/45/tessera.*; do echo junk > "$f"; done && "$@" --perfmodel-dir mm && [ -z "$(ls mm/codelets/45 | grep damaged-2)" ]' _ "${mpi[@]}" -np 2 "$heat3d" --size 16 16 16 --tile 16 16 8 --steps 4 --sched dmda --quiet
    mkdir -p r0 r1
    check "ranks in separate folders: checkpoints say why" fail "rank 1: cannot see ck/step-00000001.partial, which rank 0 has just created: .*the ranks must share the checkpoint directory's file system" \
      "${mpi[@]}" -np 1 -wdir "$work/r0" "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --quiet --checkpoint-every 1 --checkpoint-dir ck : -np 1 -wdir "$work/r1" "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --quiet --checkpoint-every 1 --checkpoint-dir ck
    check "ranks in separate folders: output says why" fail "rank 1: the output directory out is not the one rank 0 writes in: .*the ranks must share its file system" \
      "${mpi[@]}" -np 1 -wdir "$work/r0" "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --quiet --output-every 1 --output-dir out : -np 1 -wdir "$work/r1" "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --quiet --output-every 1 --output-dir out
    check "2 ranks, one output folder (shared)" ok "^written: [1-9]" bash -c '"$@" > /dev/null && echo "written: $(ls outs | grep -vc tessera-ranks-see)"' _ "${mpi[@]}" -np 2 "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 2 --quiet --output-every 1 --output-dir outs
  fi
fi

echo "bad-files: $passed passed, $failed failed"
exit "$failed"
