#!/usr/bin/env bash
# Runs the applications on bad input, as a hostile user would, and prints a verdict per case:
# PASS when the run ended by itself (no hang), without a crash (no signal), with the expected
# exit status and a message matching the expected one. Exit status: the number of failures.
#   bash scripts/bad-input.sh [BUILD_DIR]        (default build/; needs the apps built)
# BAD_INPUT_CASES=REGEX runs only the cases whose name matches (the set-up of the others still
# runs; tests/harness/bad_input_standin.sh runs the "keep" cases on a stand-in that loses the file).
# MPI cases run when mpirun exists and Tessera was built with MPI. See docs/reliability.md.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)
heat3d=$build/apps/heat3d/heat3d jacobi2d=$build/apps/jacobi2d/jacobi2d life=$build/apps/life/life
cloudsim=$build/apps/cloudsim/cloudsim nbody=$build/apps/nbody/nbody airfoil=$build/apps/airfoil/airfoil
mg=$build/apps/mg/mg
for app in "$heat3d" "$jacobi2d" "$life" "$cloudsim" "$nbody" "$airfoil" "$mg"; do
  [ -x "$app" ] || { echo "missing $app: build first (bash scripts/build.sh)"; exit 1; }
done
source "$root/scripts/bad-cases.sh"
grid=(--size 8 8 8 --tile 8 8 4 --steps 2)
small=("${grid[@]}" --ncpu 1)

echo "== grid sizes"
check "size 0" fail "grid extent 0" "$heat3d" --size 0 8 8 --steps 1
check "tile -1" fail "tile extent -1" "$heat3d" --size 8 8 8 --tile -1 8 8 --steps 1  # 0: automatic
check "negative size" fail "grid extent -8" "$jacobi2d" --size -8 8 --steps 1
check "size 2^63-1 (overflow)" fail "tiles, more than|64-bit count" "$heat3d" --size 9223372036854775807 8 8 --steps 1
check "size 3e9^3 tile 1 (tile count)" fail "more than the 2147483647" "$heat3d" --size 3000000000 3000000000 3000000000 --tile 1 1 1 --steps 1
check "256^3 in tiles of 1 (memory)" fail "use larger tiles, e.g." "$heat3d" --size 256 256 256 --tile 1 1 1 --steps 1
check "one 3000^3 tile (StarPU vector)" fail "2\^32 - 1" "$heat3d" --size 3000 3000 3000 --tile 3000 3000 3000 --steps 1
# Many small tiles: every field's bookkeeping counts, 48 KiB a tile (measured 43.6), so the
# second field is refused at once (before: a 40^3 grid in 1^3 tiles ended in StarPU's "Cannot
# allocate" assertion after 65 s; 64^3 ran on for minutes).
check "40^3 in tiles of 1 under ulimit -v 4 GB" fail "field '(u|next)' on 40 x 40 x 40 points in tiles of 1 x 1 x 1 needs about 2.9 GiB .*use larger tiles, e.g." bash -c "ulimit -v 4000000; exec \"$heat3d\" --size 40 40 40 --tile 1 1 1 --steps 2"
check "64^3 in tiles of 1 under ulimit -v 16 GB" fail "field '(u|next)' on 64 x 64 x 64 points in tiles of 1 x 1 x 1 needs about 12.1 GiB .*use larger tiles, e.g." bash -c "ulimit -v 16000000; exec \"$heat3d\" --size 64 64 64 --tile 1 1 1 --steps 2"
check "jacobi2d more tiles than fit" fail "use larger tiles" "$jacobi2d" --size 1000000 100000 --tile 1 1 --steps 1
check "life 1x1 periodic" ok "checksum=" "$life" --size 1 1 --tile 1 1 --steps 3 --ncpu 1 --quiet
check "size 10^20 (beyond 64 bits)" fail "size: 99999999999999999999 is out of range; give a whole number between" "$heat3d" --size 99999999999999999999 8 8 --steps 1
check "tile 10^20" fail "tile: 99999999999999999999 is out of range" "$heat3d" --size 8 8 8 --tile 99999999999999999999 8 8 --steps 1
check "airfoil mesh-size 10^6 10^6 (cell count)" fail "mesh-size 1000000 1000000 makes 3000000000000 cells \\(3I x J\\), more than the 536870912" "$airfoil" --mesh-size 1000000 1000000 --iterations 1
check "airfoil mesh-size 4000^2 under ulimit -v 4 GB" fail "mesh-size 4000 4000 \\(48000000 cells\\) needs about 23.0 GB of host memory, and [0-9.]+ GB is available to this process; give a mesh of at most about [0-9]+ cells" bash -c "ulimit -v 4000000; exec $airfoil --mesh-size 4000 4000 --iterations 1"
check "nbody 10^10 bodies (memory)" fail "size 10000000000 \\(bodies\\) needs about 1440 GB of host memory, and .* is available to this process; give at most [0-9]+ bodies" "$nbody" --size 10000000000 --steps 1
echo "== steps and physics"
check "steps 0" fail "steps: 0 is below 1" "$heat3d" "${small[@]}" --steps 0
check "steps -1" fail "is below 1" "$heat3d" "${small[@]}" --steps -1
check "steps 10^20 (beyond 64 bits)" fail "steps: 99999999999999999999 is out of range" "$heat3d" "${small[@]}" --steps 99999999999999999999
check "steps abc" fail "not a whole number|could not be converted|--steps" "$heat3d" "${small[@]}" --steps abc
check "heat3d alpha 10 (unstable)" fail "stability range" "$heat3d" "${small[@]}" --alpha 10
check "heat3d alpha nan" fail "stability range" "$heat3d" "${small[@]}" --alpha nan
check "heat3d alpha -0.1" fail "stability range" "$heat3d" "${small[@]}" --alpha -0.1
check "heat3d alpha -inf" fail "alpha -inf is outside the explicit scheme's stability range .*; give a value in that range" "$heat3d" "${small[@]}" --alpha -inf
check "heat3d alpha 1/6 (the limit)" ok "checksum=" "$heat3d" "${small[@]}" --alpha 0.16666666666666666 --quiet
check "cloudsim dt nan" fail "dt: 'nan' is not a finite number; give one above 0 and at most 1" "$cloudsim" --size 16 16 --tile 16 8 --steps 2 --dt nan
check "cloudsim dt inf" fail "dt: 'inf' is not a finite number" "$cloudsim" --size 16 16 --tile 16 8 --steps 2 --dt inf
check "cloudsim dt 0" fail "dt: 0 is out of range; give a number above 0" "$cloudsim" --size 16 16 --tile 16 8 --steps 2 --dt 0
check "cloudsim dt 1 diverges (nan)" fail "cloudsim: the result is not finite after 50 steps \\(checksum=(nan|inf|-nan)\\): the run diverged .*; give a smaller --dt" "$cloudsim" --size 64 64 --steps 50 --dt 1 --quiet
check "cloudsim dt 0.5, 200 steps" fail "cloudsim: the result is not finite after 200 steps" "$cloudsim" --size 64 64 --steps 200 --dt 0.5 --quiet
check "cloudsim cloud-radius -1" fail "cloud-radius: -1 is below 0" "$cloudsim" --size 16 16 --steps 2 --cloud-radius -1
check "nbody dt -1" fail "dt: -1 is out of range; give a number above 0" "$nbody" --steps 1 --dt -1
check "nbody eps nan" fail "eps: 'nan' is not a finite number" "$nbody" --steps 1 --eps nan
check "nbody eps 0" fail "eps: 0 is out of range" "$nbody" --steps 1 --eps 0
check "nbody dt 1e300 diverges" fail "nbody: the result is not finite after 3 steps \\(E1=.*give a smaller --dt or a larger --eps" "$nbody" --size 64 --tile 64 --steps 3 --dt 1e300 --quiet
check "nbody eps 1e-300 diverges" fail "nbody: the result is not finite after 3 steps" "$nbody" --size 64 --tile 64 --steps 3 --eps 1e-300 --quiet
check "nbody --help: --size counts bodies" ok "size INT.*number of bodies" "$nbody" --help
check "airfoil iterations 0" fail "iterations: 0 is below 1; give at least 1" "$airfoil" --iterations 0
check "airfoil tiles -1" fail "tiles: -1 is below 0" "$airfoil" --tiles -1
check "steps-per-exchange 5000" fail "5000 is not between 0 and 4096" "$heat3d" "${small[@]}" --steps-per-exchange 5000
check "rank-grid 0 1 1" fail "'0' is not a whole number >= 1" "$heat3d" "${small[@]}" --rank-grid 0 1 1
echo "== input files"
printf '2000000000 2000000000 2000000000 2000000000\n0 0\n' > huge.dat
check "airfoil mesh header 2e9 counts" fail "count of nodes, 2000000000, is not a whole number between 1 and" "$airfoil" --mesh huge.dat --iterations 1
printf '4 1 4 4\n0 0\n1 0\n' > short.dat
check "airfoil mesh cut short" fail "mesh file 'short.dat': its header promises 4 nodes" "$airfoil" --mesh short.dat --iterations 1
# 4 nodes, 1 cell, 4 edges, 4 boundary edges; padded so that the file holds its header's counts.
mesh_tail='0 1 2 3\n0 1 0 0\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n3 0 0 1\n'
printf "4 1 4 4\n0 0\nnan 0\n1 1\n0 1\n$mesh_tail" > nan.dat
check "airfoil mesh with a nan coordinate" fail "mesh file 'nan.dat': node 1's coordinates are not finite numbers" "$airfoil" --mesh nan.dat --iterations 1
printf "4 4294967298 4 4\n0 0\n1 0\n1 1\n0 1\n$mesh_tail" > wrap.dat
check "airfoil mesh header 2^32+2 cells (wraps)" fail "count of cells, 4294967298, is not a whole number between 1 and 536870912" "$airfoil" --mesh wrap.dat --iterations 1
printf "4 1000000000000 4 4\n0 0\n1 0\n1 1\n0 1\n$mesh_tail" > tera.dat
check "airfoil mesh header 10^12 cells" fail "count of cells, 1000000000000, is not a whole number between 1 and 536870912" "$airfoil" --mesh tera.dat --iterations 1
# The body's indices are read into 64 bits and checked against their sets (%d had wrapped them).
mesh_nodes='0 0\n1 0\n1 1\n0 1\n'
printf "4 1 4 4\n$mesh_nodes""0 1 2 3\n0 1 0 4294967296\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n3 0 0 1\n" > ecell.dat
check "airfoil mesh edge cell 2^32 (wraps to 0)" fail "edge 0's cell, 4294967296, is not a cell number between 0 and 0 \\(the header's count of cells is 1" "$airfoil" --mesh ecell.dat --iterations 1
printf "4 1 4 4\n$mesh_nodes""0 1 2 4294967299\n0 1 0 0\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n3 0 0 1\n" > cnode.dat
check "airfoil mesh cell node 2^32+3 (wraps to 3)" fail "cell 0's node, 4294967299, is not a node number between 0 and 3" "$airfoil" --mesh cnode.dat --iterations 1
printf "4 1 4 4\n$mesh_nodes""0 1 2 3\n0 1 0 0\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n3 99999999999 0 1\n" > bnode.dat
check "airfoil mesh node 99999999999 shown as written" fail "boundary edge 3's node, 99999999999, is not a node number" "$airfoil" --mesh bnode.dat --iterations 1
echo "== runtime flags and environment"
check "unknown flag" fail "bogus" "$heat3d" --bogus
check "sched empty" fail "empty scheduler" "$heat3d" "${small[@]}" --sched ""
check "sched unknown" fail "is not a StarPU scheduler" "$heat3d" "${small[@]}" --sched fastest
# StarPU 1.3 has no CUDA: Tessera refuses it at once; a StarPU with CUDA and no GPU refuses to start.
check "ncpu 0" fail "leaves no worker|found no worker it could start" "$heat3d" "${grid[@]}" --ncpu 0
check "ncpu -1" fail "not a whole number >= 0" "$heat3d" "${grid[@]}" --ncpu -1
check "ncpu 100000" fail "exceeds" "$heat3d" "${grid[@]}" --ncpu 100000
check "gpu-fraction nan" fail "between 0 and 1" "$heat3d" "${small[@]}" --gpu-fraction nan
check "gpu-fraction 2" fail "between 0 and 1" "$heat3d" "${small[@]}" --gpu-fraction 2
check "watchdog -1" fail "not a number of seconds >= 0" "$heat3d" "${small[@]}" --watchdog -1
check "watchdog nan" fail "not a number of seconds >= 0" "$heat3d" "${small[@]}" --watchdog nan
check "watchdog 0 (off)" ok "checksum=" "$heat3d" "${small[@]}" --watchdog 0 --quiet
check "STARPU_NCPU=abc" fail "STARPU_NCPU=abc is not a whole number" env STARPU_NCPU=abc "$heat3d" --size 8 8 8 --steps 1
check "STARPU_NCPU=-2" fail "STARPU_NCPU=-2" env STARPU_NCPU=-2 "$heat3d" --size 8 8 8 --steps 1
check "STARPU_NCPU=02 with --ncpu 2 (agree)" ok "checksum=" env STARPU_NCPU=02 "$heat3d" --size 8 8 8 --steps 1 --ncpu 2 --quiet
check "STARPU_NCPU=1 with --ncpu 2" fail "contradicts STARPU_NCPU=1" env STARPU_NCPU=1 "$heat3d" --size 8 8 8 --steps 1 --ncpu 2
check "STARPU_SCHED=bogus" fail "is not a StarPU scheduler" env STARPU_SCHED=bogus "$heat3d" "${small[@]}"
check "STARPU_CALIBRATE=yes" fail "STARPU_CALIBRATE=yes" env STARPU_CALIBRATE=yes "$heat3d" "${small[@]}"
touch afile
check "perfmodel-dir is a file" fail "is not a directory" "$heat3d" "${small[@]}" --perfmodel-dir afile
check "perfmodel-dir under a file" fail "is not a directory" "$heat3d" "${small[@]}" --perfmodel-dir afile/models
check "STARPU_PERF_MODEL_DIR is a file" fail "is not a directory" env STARPU_PERF_MODEL_DIR=afile "$heat3d" "${small[@]}"
check "mg without --sched: the program's default" ok "scheduler peager \\(the program's default\\)" "$mg" --class S --ncpu 1
check "rebalance-every without CUDA workers" ok "rebalance-every 2 does nothing in this run: .*this run has no CUDA workers" "$heat3d" "${small[@]}" --ncuda 0 --rebalance-every 2
check "checkpoint-dir is a file" fail "checkpoint-dir afile: it is a file, not a directory; give a directory for the checkpoints" "$heat3d" "${small[@]}" --checkpoint-every 1 --checkpoint-dir afile
check "checkpoint-dir under a file" fail "checkpoint-dir afile/ck: 'afile' is a file, not a directory" "$heat3d" "${small[@]}" --checkpoint-every 1 --checkpoint-dir afile/ck
# A user's own *.partial directory in the checkpoint directory is not Tessera's: kept.
mkdir -p ck/mydata.partial && echo data > ck/mydata.partial/f
keep=ck/mydata.partial/f check "checkpoints keep a user's mydata.partial" ok "checksum=" "$heat3d" "${small[@]}" --quiet --checkpoint-every 1 --checkpoint-dir ck
# Folders a user made where a checkpoint goes are theirs: refused, never renamed aside or removed.
mkdir -p ck1/step-00000002.old ck2/step-00000002
echo data > ck1/step-00000002.old/f && echo data > ck2/step-00000002/f
keep=ck1/step-00000002.old/f check "checkpoints keep a user's step-00000002.old" fail "checkpoint ck1/step-00000002.old is in the way: it exists and was not made by a Tessera checkpoint" "$heat3d" --size 8 8 8 --tile 8 8 4 --ncpu 1 --quiet --steps 4 --checkpoint-every 2 --checkpoint-dir ck1
keep=ck2/step-00000002/f check "checkpoints keep a user's step-00000002" fail "checkpoint ck2/step-00000002 is in the way: .*move it away, or give another --checkpoint-dir" "$heat3d" --size 8 8 8 --tile 8 8 4 --ncpu 1 --quiet --steps 4 --checkpoint-every 2 --checkpoint-dir ck2
check "checkpoint-dir empty" fail "--checkpoint-dir: an empty directory name was given; name one \\(e.g. checkpoints\\) or drop the flag" "$heat3d" "${small[@]}" --checkpoint-every 1 --checkpoint-dir ""
# A second run checkpointing into a directory that a running one holds (its lock, flock(2)).
check "two runs, one checkpoint directory" fail "checkpoint directory ck3 is in use: another run is checkpointing into it .*give this run its own --checkpoint-dir" bash -c "mkdir -p ck3 && exec flock ck3/tessera-checkpoint.lock \"$heat3d\" ${small[*]} --quiet --checkpoint-every 1 --checkpoint-dir ck3"
# StarPU aborts (an assertion, SIGABRT) or crashes on these lists: refused before it starts.
check "STARPU_WORKERS_CPUID=abc" fail "STARPU_WORKERS_CPUID='abc' is not a list of device numbers .*such as '0 1' or '0-3'" env STARPU_WORKERS_CPUID=abc "$heat3d" "${small[@]}"
check "STARPU_WORKERS_CPUID=-1 (crashed)" fail "STARPU_WORKERS_CPUID='-1' is not a list of device numbers" env STARPU_WORKERS_CPUID=-1 "$heat3d" "${small[@]}"
check "STARPU_WORKERS_CPUID empty" fail "STARPU_WORKERS_CPUID='' is not a list" env STARPU_WORKERS_CPUID= "$heat3d" "${small[@]}"
check "STARPU_WORKERS_CPUID=0,1 (a list)" ok "checksum=" env STARPU_WORKERS_CPUID=0,1 "$heat3d" "${small[@]}" --quiet
# A model directory whose disk takes no more data: StarPU asserted writing its bus calibration.
# A file-size limit stands for a full disk anywhere (a tmpfs, below, where this user may mount).
check "perfmodel-dir takes no data (ulimit -f)" fail "cannot write in --perfmodel-dir 'fsize' \\(a test file of 64 KiB: File too large\\); free some space there" bash -c "trap '' XFSZ; ulimit -f 16; exec \"$heat3d\" ${small[*]} --perfmodel-dir fsize"
if mkdir -p full && mount -t tmpfs -o size=100k tmpfs full 2> /dev/null; then
  mkdir -p full/models full/home && dd if=/dev/zero of=full/fill bs=4k 2> /dev/null
  check "perfmodel-dir on a full disk" fail "cannot write in --perfmodel-dir 'full/models' \\(a test file of 64 KiB: No space left on device\\)" "$heat3d" "${small[@]}" --perfmodel-dir full/models
  check "HOME on a full disk" fail "cannot write in StarPU's default model directory \\(from HOME.*No space left on device" env -u XDG_CACHE_HOME -u STARPU_HOME -u STARPU_PERF_MODEL_DIR HOME="$work/full/home" "$heat3d" "${small[@]}"
  umount full
else
  echo "SKIP full-disk cases (cannot mount a tmpfs here; the ulimit -f case stands for them)"
fi
# TESSERA_EMULATED_CUDA takes its documented values only (an emulated build), and a build
# without the emulated device says so rather than ignore it. Which of the two the build must
# say comes from its configuration (CMakeCache.txt), not from the program.
no_device="asks for the emulated CUDA device, and this build has none"
emulated() {  # emulated MESSAGE: MESSAGE in a build with the emulated device, else $no_device
  if grep -q '^TESSERA_EMULATE_CUDA:BOOL=ON$' "$build/CMakeCache.txt" 2> /dev/null; then
    echo "$1"
  else
    echo "$no_device"
  fi
}
check "TESSERA_EMULATED_CUDA=off" fail "$(emulated "TESSERA_EMULATED_CUDA=off is not a mode of the emulated device; give 0 \\(off, as unset\\), 1, strict")" env TESSERA_EMULATED_CUDA=off "$heat3d" "${small[@]}"
check "TESSERA_EMULATED_CUDA=false" fail "$(emulated "TESSERA_EMULATED_CUDA=false is not a mode")" env TESSERA_EMULATED_CUDA=false "$heat3d" "${small[@]}"
check "TESSERA_EMULATED_CUDA=no" fail "$(emulated "TESSERA_EMULATED_CUDA=no is not a mode")" env TESSERA_EMULATED_CUDA=no "$heat3d" "${small[@]}"
check "TESSERA_EMULATED_CUDA=yes please" fail "$(emulated "TESSERA_EMULATED_CUDA=yes please is not a mode")" env "TESSERA_EMULATED_CUDA=yes please" "$heat3d" "${small[@]}"
check "TESSERA_EMULATED_CUDA=0 (off)" ok "checksum=" env TESSERA_EMULATED_CUDA=0 "$heat3d" "${small[@]}" --quiet
check "TESSERA_EMULATED_CUDA=split:99" fail "$(emulated "split:99 is not a mode of the emulated device; .*split:K \\(K of them, 1 to [0-9]+\\)")" env TESSERA_EMULATED_CUDA=split:99 "$heat3d" "${grid[@]}" --ncpu 2
check "perfmodel-dir missing (created)" ok "checksum=" "$heat3d" "${small[@]}" --perfmodel-dir new/models --quiet
check "HOME under a file (default models)" fail "StarPU's default model directory \\(from HOME" env -u XDG_CACHE_HOME -u STARPU_HOME HOME=afile/home "$heat3d" "${small[@]}"
check "STARPU_HOME under a file" fail "default model directory \\(from STARPU_HOME" env -u XDG_CACHE_HOME STARPU_HOME=afile/home "$heat3d" "${small[@]}"
check "HOME unusable, --perfmodel-dir given" ok "checksum=" env -u XDG_CACHE_HOME -u STARPU_HOME HOME=afile/home "$heat3d" "${small[@]}" --perfmodel-dir models --quiet
# A named model directory is the only one StarPU uses (StarPU 1.4 also reads and updates models
# under its home). only_models HOME MODE APP ARGS...: a first run saves models under HOME; a
# second, calibrating, with the models named by MODE (--flag or a variable), must leave them
# as they were and save its own in the named directory. A script: `check` runs it under timeout.
only_models='home=$1 mode=$2; shift 2; mkdir -p "$home" || exit 1
  run() { env -u XDG_CACHE_HOME -u STARPU_HOME -u STARPU_PERF_MODEL_DIR HOME="$home" STARPU_CALIBRATE=1 "$@" --quiet > /dev/null || exit 1; }
  run "$@"
  sums=$(cat "$home/.starpu/sampling/codelets/"*/tessera.* | md5sum) || exit 1
  if [ "$mode" = --flag ]; then run "$@" --perfmodel-dir "$home.models"; else run env "$mode=$home.models" "$@"; fi
  [ "$(cat "$home/.starpu/sampling/codelets/"*/tessera.* | md5sum)" = "$sums" ] || { echo "StarPU updated the models under HOME"; exit 1; }
  ls "$home.models/codelets/"*/tessera.* > /dev/null || exit 1
  echo "models only in the named directory"'
check "--perfmodel-dir: HOME's models untouched" ok "models only in the named directory" bash -c "$only_models" _ "$work/home1" --flag "$heat3d" "${small[@]}"
check "STARPU_PERF_MODEL_DIR: HOME's untouched" ok "models only in the named directory" bash -c "$only_models" _ "$work/home2" STARPU_PERF_MODEL_DIR "$heat3d" "${small[@]}"
echo "== outputs"
check "trace to /dev/full" fail "could not write the --trace file '/dev/full'" "$heat3d" "${small[@]}" --quiet --trace /dev/full
check "report to /dev/full" fail "could not write the --report file '/dev/full'" "$heat3d" "${small[@]}" --quiet --report /dev/full
check "trace and report the same file" fail "both name" "$heat3d" "${small[@]}" --trace x.out --report ./x.out
check "trace in a missing directory" fail "cannot write the --trace file" "$heat3d" "${small[@]}" --trace nodir/t.json
check "trace is a directory" fail "is a directory" "$heat3d" "${small[@]}" --trace .
check "trace empty name" fail "empty file name" "$heat3d" "${small[@]}" --trace ""
check "trace to /dev/null (a device)" ok "checksum=" "$heat3d" "${small[@]}" --quiet --trace /dev/null
check "fxt without FxT (or written)" any "needs a StarPU built with FxT|checksum=" "$heat3d" "${small[@]}" --quiet --fxt fxt
echo "== restarts, disks, signals, meshes, messages (issue 49's own cases)"
ck=(--size 8 8 8 --tile 8 8 4 --ncpu 1 --quiet)
"$heat3d" "${ck[@]}" --steps 4 --checkpoint-every 2 --checkpoint-dir ok > /dev/null
check "restart into its own checkpoint directory" ok "from_step=4" "$heat3d" "${ck[@]}" --steps 6 --restart ok/step-00000004 --checkpoint-every 2 --checkpoint-dir ok
check "restart path with a trailing slash" ok "from_step=4" "$heat3d" "${ck[@]}" --steps 6 --restart ok/step-00000004/
check "restart from a path that does not exist" fail "checkpoint nothere cannot be restarted from: it does not exist; restart from another checkpoint" "$heat3d" "${ck[@]}" --steps 2 --restart nothere
check "restart from a file" fail "checkpoint afile cannot be restarted from: it is a file, not a directory" "$heat3d" "${ck[@]}" --steps 2 --restart afile
check "restart empty" fail "--restart: an empty checkpoint directory was given; name one \(e.g. checkpoints/step-00000100\) or drop the flag" "$heat3d" "${ck[@]}" --steps 2 --restart ""
check "restart from the checkpoint directory itself" fail "checkpoint ok cannot be restarted from: it has no manifest" "$heat3d" "${ck[@]}" --steps 6 --restart ok
check "output-dir empty" fail "--output-dir: an empty directory name was given; name one \(e.g. output\)" "$heat3d" "${ck[@]}" --steps 2 --output-every 1 --output-dir ""
mkdir -p ckf && echo mine > ckf/step-00000001
keep=ckf/step-00000001 check "a user's file named like a step" fail "checkpoint ckf/step-00000001 is in the way: it is a file, not a checkpoint directory, so it is neither replaced nor removed" "$heat3d" "${ck[@]}" --steps 2 --checkpoint-every 1 --checkpoint-dir ckf
mkdir -p ckl mine && echo data > mine/f && ln -s ../mine ckl/step-00000001
keep=mine/f check "a step name linked to a user's folder" fail "checkpoint ckl/step-00000001 is in the way: it exists and was not made by a Tessera checkpoint" "$heat3d" "${ck[@]}" --steps 2 --checkpoint-every 1 --checkpoint-dir ckl
mkdir -p ckd/tessera-checkpoint.lock
check "the lock's name taken by a directory" fail "cannot create the checkpoint lock ckd/tessera-checkpoint.lock \(Is a directory\)" "$heat3d" "${ck[@]}" --steps 2 --checkpoint-every 1 --checkpoint-dir ckd
mkdir -p cks && touch cks/tessera-checkpoint.lock
check "a lock file nobody holds (a finished run's)" ok "checksum=" "$heat3d" "${ck[@]}" --steps 2 --checkpoint-every 1 --checkpoint-dir cks
mkdir -p realdir && ln -s realdir cklink
check "checkpoint-dir a link to a directory" ok "in realdir: step-00000002" bash -c "\"$heat3d\" ${ck[*]} --steps 2 --checkpoint-every 1 --checkpoint-dir cklink > /dev/null && echo in realdir: \$(ls realdir | grep step- | tail -1)"
# Signals: a run killed while checkpointing leaves its lock to the kernel and its partial
# checkpoint to the next run, which removes it, says so, and checkpoints; the last checkpoint the
# killed run completed survives both, and restarting from it (step S) gives the checksum of an
# uninterrupted run of S + 1 steps. killed SIG DIR APP ARGS...: set -m, so that the run in the
# background keeps SIGINT (a shell without job control has its background commands ignore it).
big=(--size 64 64 64 --tile 64 64 8 --ncpu 1 --quiet)
killed='set -m; sig=$1 dir=$2 app=$3; shift 3
"$app" "$@" --steps 100000 --checkpoint-every 1 --checkpoint-dir "$dir" > /dev/null 2>&1 & run=$!
until [ -e "$dir/step-00000002/manifest" ]; do kill -0 $run || exit 1; sleep 0.05; done
sleep 0.2; kill -s "$sig" $run; wait $run
last=$(ls -d "$dir"/step-* | grep -E "/step-[0-9]+$" | tail -n 1) && [ -e "$last/manifest" ] || exit 1
"$app" "$@" --steps 2 --checkpoint-every 1 --checkpoint-dir "$dir" || exit 1
[ -e "$last/manifest" ] || { echo "the checkpoint $last is gone after the rerun"; exit 1; }
s=$((10#${last##*step-}))
restarted=$("$app" "$@" --steps $((s + 1)) --restart "$last" | grep -o "checksum=[^ ]*") || exit 1
straight=$("$app" "$@" --steps $((s + 1)) | grep -o "checksum=[^ ]*") || exit 1
[ "$restarted" = "$straight" ] && echo "kept step $s: its restart gives the uninterrupted run'"'"'s $straight"'
for sig in KILL TERM INT; do
  check "SIGKILL/TERM/INT mid-checkpoint, then a rerun ($sig)" ok "kept step [0-9]+: its restart gives the uninterrupted run's checksum=" bash -c "$killed" _ "$sig" "ck$sig" "$heat3d" "${big[@]}"
done
check "two real runs, one checkpoint directory" fail "checkpoint directory cktwo is in use: another run is checkpointing into it" bash -c "\"$heat3d\" ${big[*]} --steps 100000 --checkpoint-every 1 --checkpoint-dir cktwo > /dev/null 2>&1 & first=\$!; while [ ! -e cktwo/tessera-checkpoint.lock ]; do sleep 0.1; done; \"$heat3d\" ${ck[*]} --steps 2 --checkpoint-every 1 --checkpoint-dir cktwo; rc=\$?; kill \$first; wait \$first; exit \$rc"
check "output on a disk that takes no data (ulimit -f)" fail "could not write the tile file 'fsout/.*give --output-dir another path" bash -c "trap '' XFSZ; ulimit -f 100; exec \"$heat3d\" --size 64 64 64 --tile 64 64 8 --ncpu 1 --quiet --steps 1 --output-every 1 --output-dir fsout --perfmodel-dir \"$work/models\""
check "trace on a disk that takes no data (ulimit -f)" fail "could not write the --trace file 'fstrace.json'" bash -c "trap '' XFSZ; ulimit -f 100; exec \"$heat3d\" --size 64 64 64 --tile 64 64 8 --ncpu 1 --quiet --steps 400 --trace fstrace.json --perfmodel-dir \"$work/models\""
# Meshes: indices below 0 or not numbers, a flag that is neither wall nor far field, a
# coordinate beyond a double, a directory, an empty name, both a file and a generated size.
mesh_file() {  # mesh_file NAME CELL-LINE EDGE0-LINE BEDGE3-LINE COORD-LINE
  printf "4 1 4 4\n0 0\n1 0\n1 1\n$5\n$2\n$3\n1 2 0 0\n2 3 0 0\n3 0 0 0\n0 1 0 1\n1 2 0 1\n2 3 0 1\n$4\n" > "$1"
}
mesh_file neg.dat "0 1 2 -1" "0 1 0 0" "3 0 0 1" "0 1"
check "airfoil mesh node -1" fail "cell 0's node, -1, is not a node number between 0 and 3" "$airfoil" --mesh neg.dat --iterations 1
mesh_file sci.dat "0 1 2 3" "0 1e0 0 0" "3 0 0 1" "0 1"
check "airfoil mesh node 1e0 (not a whole number)" fail "edge 0's node, 1e0, is not a node number" "$airfoil" --mesh sci.dat --iterations 1
mesh_file flag.dat "0 1 2 3" "0 1 0 0" "3 0 0 3" "0 1"
check "airfoil mesh boundary flag 3" fail "boundary edge 3's flag, 3, is neither 1 \(a wall\) nor 2 \(the far field\); give 1 or 2" "$airfoil" --mesh flag.dat --iterations 1
mesh_file huge_x.dat "0 1 2 3" "0 1 0 0" "3 0 0 1" "1e400 1"
check "airfoil mesh coordinate 1e400" fail "node 3's coordinates are not finite numbers" "$airfoil" --mesh huge_x.dat --iterations 1
mesh_file good.dat "0 1 2 3" "0 1 0 0" "3 0 0 1" "0 1"
check "airfoil mesh of one cell (well formed)" ok "rms=" "$airfoil" --mesh good.dat --iterations 1 --ncpu 1 --quiet
mkdir -p meshdir
check "airfoil mesh a directory" fail "mesh file 'meshdir' is a directory; give the path of an OP2 new_grid.dat" "$airfoil" --mesh meshdir --iterations 1
check "airfoil mesh missing" fail "cannot open mesh file 'missing.dat' \(No such file or directory\)" "$airfoil" --mesh missing.dat --iterations 1
check "airfoil mesh empty name" fail "--mesh: an empty mesh file name was given" "$airfoil" --mesh "" --iterations 1
check "airfoil --mesh and --mesh-size" fail "--mesh-size excludes --mesh|--mesh excludes --mesh-size" "$airfoil" --mesh good.dat --mesh-size 4 4 --iterations 1
# Messages: a flag given twice or with too few values, a count beyond the variable's type, a
# value just outside its range shown exactly, a variable StarPU ignores without a word.
check "steps given twice" fail "--steps takes at most 1 value and was given 2 \(given more than once\?\); give it once" "$heat3d" "${small[@]}" --steps 4
check "size with 2 values for 3 axes" fail "--size takes 3 values and was given 2; give 3 values" "$heat3d" --size 8 8 --steps 1
check "airfoil iterations 99999999999 (an int)" fail "--iterations: 99999999999 is above 2147483647, the most this option holds; give a value from 1 to 2147483647" "$airfoil" --iterations 99999999999
check "airfoil tiles 99999999999 (an int)" fail "--tiles: 99999999999 is above 2147483647" "$airfoil" --tiles 99999999999
check "mg iterations 2^31 (an int)" fail "--iterations: 2147483648 is above 2147483647" "$mg" --class U --iterations 2147483648
check "ncpu 99999999999 (an int)" fail "--ncpu: 99999999999 is above 2147483647, the most this option holds" "$heat3d" "${grid[@]}" --ncpu 99999999999
check "alpha just above 1/6, shown exactly" fail "--alpha 0.16666666666666669 is outside the explicit scheme's stability range 0 <= alpha <= 1/6 \(0.16666666666666666\)" "$heat3d" "${small[@]}" --alpha 0.16666666666666669
# As --ncuda 1 is refused by a StarPU without CUDA; one with CUDA and no GPU (the prebuilt 1.4)
# starts none and says so on the configuration line. Which StarPU this is: its starpu_config.h,
# found through the build's configuration (not heat3d's answer to another flag).
starpu_with_cuda() {
  local dirs dir
  IFS=';' read -r -a dirs <<<"$(sed -n 's/^STARPU_INCLUDE_DIRS:INTERNAL=//p' "$build/CMakeCache.txt" 2> /dev/null)"
  for dir in "${dirs[@]}"; do
    grep -q '^#define STARPU_USE_CUDA 1' "$dir/starpu_config.h" 2> /dev/null && return 0
  done
  return 1
}
if ! starpu_with_cuda; then
  check "STARPU_NCUDA=1 without CUDA" fail "STARPU_NCUDA=1 asks for CUDA workers, but this StarPU has no CUDA support" env STARPU_NCUDA=1 "$heat3d" "${small[@]}" --quiet
else
  check "STARPU_NCUDA=1, no GPU (said)" ok "1 CPU \+ 0 CUDA workers \(STARPU_NCUDA=1 asked for more: StarPU found no GPU\)" env STARPU_NCUDA=1 "$heat3d" "${small[@]}"
fi
check "STARPU_WORKERS_CPUID=0- (a range)" ok "checksum=" env STARPU_WORKERS_CPUID=0- "$heat3d" "${small[@]}" --quiet
echo "== errors after start-up"
out=$("$heat3d" "${small[@]}" --alpha 10 2>&1)
if grep -q "tessera summary" <<<"$out"; then
  failed=$((failed + 1)); echo "FAIL a failed run prints no summary"
else
  passed=$((passed + 1)); echo "PASS a failed run prints no summary"
fi

echo "== noise (StarPU's own lines, counted with its messages on)"
# A run on a fresh model directory, as most first runs are: StarPU flushed a model entry that its
# third timing found 2 to 3 times off the (cold) second, and StarPU 1.4 said per model and
# footprint that it forces calibration (docs/reliability.md, "Noise").
check "a run on fresh models, StarPU's messages on" ok "checksum=" bash -c "env -u STARPU_SILENT \"$heat3d\" --size 32 32 32 --steps 20 --perfmodel-dir noise-models > noise.out 2>&1; rc=\$?; cat noise.out; exit \$rc"
check "fresh models: no 'Too big deviation' line" ok "^said 0 time" bash -c "echo \"said \$(grep -c 'Too big deviation' noise.out) time(s)\""
check "fresh models: no 'forcing calibration' line" ok "^said 0 time" bash -c "echo \"said \$(grep -c 'forcing calibration' noise.out) time(s)\""

mpirun=$(command -v mpirun || true)
if [ -n "$mpirun" ] && [ -x "$build/tests/rank_error" ]; then
  echo "== MPI (2 ranks)"
  # --bind-to none: Open MPI binds each of 2 ranks to one core by default, and StarPU 1.4 keeps
  # its workers in that binding set, with warnings that it holds one CPU (tests/CMakeLists.txt).
  mpi=("$mpirun" --oversubscribe --allow-run-as-root --bind-to none)
  export STARPU_NCPU=1
  mkdir -p a/out b && touch b/out
  parallel=1
  args=(--size 8 8 8 --tile 8 8 4 --steps 2 --quiet --trace out/t.json)
  check "trace path bad on rank 1 only" fail "rank 1: cannot write the --trace file" \
    "${mpi[@]}" -np 1 -wdir "$work/a" "$heat3d" "${args[@]}" : -np 1 -wdir "$work/b" "$heat3d" "${args[@]}"
  check "error on rank 1 only, mid-run" fail "tessera: rank 1: injected failure" "${mpi[@]}" -np 2 "$build/tests/rank_error" local
  check "error on every rank, mid-run" fail "^tessera: injected failure" "${mpi[@]}" -np 2 "$build/tests/rank_error" everywhere
  if [ -x "$build/tests/watchdog" ]; then
    check "rank 1 stopped (SIGSTOP), --watchdog 3" fail "rank 0: the watchdog saw no progress" \
      "${mpi[@]}" -np 2 "$build/tests/watchdog" stop --watchdog 3
  fi
  check "more ranks than tiles" fail "has 2 tiles but the run has 3 ranks" "${mpi[@]}" -np 3 "$heat3d" "${small[@]}" --quiet
  check "options differ between ranks" fail "the command lines differ between ranks: --steps is given '3' on rank 1 and '2' on rank 0" \
    "${mpi[@]}" -np 1 "$heat3d" "${grid[@]}" : -np 1 "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 3
  check "STARPU_NCPU differs between ranks" fail "rank 1: .*STARPU_NCPU" \
    "${mpi[@]}" -np 1 -x STARPU_NCPU=1 "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 1 --ncpu 1 : -np 1 -x STARPU_NCPU=2 "$heat3d" --size 8 8 8 --tile 8 8 4 --steps 1 --ncpu 1
  check "TESSERA_EMULATED_CUDA=split on rank 0 only" fail "the values of TESSERA_EMULATED_CUDA differ between ranks: unset on rank 1, 'split' on rank 0; set it alike on every rank" \
    "${mpi[@]}" -np 1 -x TESSERA_EMULATED_CUDA=split "$heat3d" "${grid[@]}" : -np 1 "$heat3d" "${grid[@]}"
  check "checkpoint-dir differs between ranks" fail "the command lines differ between ranks: --checkpoint-dir is given 'b' on rank 1 and 'a' on rank 0" \
    "${mpi[@]}" -np 1 "$heat3d" "${grid[@]}" --checkpoint-dir a : -np 1 "$heat3d" "${grid[@]}" --checkpoint-dir b
  check "an extra argument on rank 1" fail "the command lines differ between ranks: argument 11 is '--quiet' on rank 1 and nothing on rank 0" \
    "${mpi[@]}" -np 1 "$heat3d" "${grid[@]}" : -np 1 "$heat3d" "${grid[@]}" --quiet
  check "STARPU_WORKERS_CPUID=abc on rank 1 only" fail "rank 1: STARPU_WORKERS_CPUID='abc' is not a list of device numbers" \
    "${mpi[@]}" -np 1 "$heat3d" "${grid[@]}" : -np 1 -x STARPU_WORKERS_CPUID=abc "$heat3d" "${grid[@]}"
  times=1 check "TESSERA_EMULATED_CUDA=off on every rank, said once" fail "^tessera: TESSERA_EMULATED_CUDA=off $(emulated "is not a mode")" \
    "${mpi[@]}" -np 2 -x TESSERA_EMULATED_CUDA=off "$heat3d" "${grid[@]}"
  check "2 ranks, a checkpoint directory in use" fail "checkpoint directory ckmpi is in use" bash -c "mkdir -p ckmpi && exec flock ckmpi/tessera-checkpoint.lock ${mpi[*]} -np 2 \"$heat3d\" ${grid[*]} --quiet --checkpoint-every 1 --checkpoint-dir ckmpi"
  mkdir -p ckmu/step-00000001 && echo data > ckmu/step-00000001/f
  keep=ckmu/step-00000001/f check "2 ranks, a user's step folder kept" fail "checkpoint ckmu/step-00000001 is in the way" "${mpi[@]}" -np 2 "$heat3d" "${grid[@]}" --quiet --checkpoint-every 1 --checkpoint-dir ckmu
  # Noise: the uncalibrated-model note once per run, not once per rank (the two interleaved). One
  # rank first calibrates the bus into the fresh directory: 2 ranks starting together on an empty
  # one race in StarPU's bus files (tests/CMakeLists.txt, tessera_split_mpi_test). dmda: the note
  # is about a scheduler that places by the models (CPU-only runs default to lws).
  check "uncalibrated models said once under mpirun" ok "^said 1 time" bash -c "\"$heat3d\" ${grid[*]} --quiet --perfmodel-dir \"$work/fresh-models\" && n=\$(${mpi[*]} -np 2 \"$heat3d\" ${grid[*]} --sched dmda --perfmodel-dir \"$work/fresh-models\" 2>&1 | grep -o 'is not calibrated' | wc -l); echo \"said \$n time(s)\""
  check "2 ranks: no CPU binding warning" ok "^said 0 time" bash -c "n=\$(${mpi[*]} -np 2 env -u STARPU_SILENT \"$heat3d\" ${grid[*]} 2>&1 | grep -ci 'bind'); echo \"said \$n time(s)\""
  # mpirun's own binding (no --bind-to none), each rank's workers left to StarPU: 1.3 runs; 1.4
  # keeps the workers inside the one core, which StarPU-MPI's thread takes.
  check "2 ranks bound to a core each, no --ncpu" any "checksum=|this rank is bound to one core .*--bind-to none" \
    env -u STARPU_NCPU "$mpirun" --oversubscribe --allow-run-as-root -np 2 "$heat3d" "${grid[@]}"
  collect
  unset parallel STARPU_NCPU
fi

echo "bad-input: $passed passed, $failed failed"
exit "$failed"
