#!/usr/bin/env bash
# Runs an application on CPU workers only, then on GPU workers only, and compares the result it
# prints as <key>=<value> (checksum, rnm2, rms):
#   app_gpu_vs_cpu.sh <cuda_probe> <tolerance> <key> <app> [app arguments...]
#   app_gpu_vs_cpu.sh --emulated  <tolerance> <key> <app> [app arguments...]
#   app_gpu_vs_cpu.sh --emulated-gpus=K 0 <key> <app> [app arguments...]
# <tolerance> is relative (0: identical digits). The applications are built with FMA
# contraction allowed, so a GPU floating-point result may differ in the last bits.
# With a probe the GPU run is one CUDA worker (--ncpu 0 --ncuda 1); the script exits 77 (CTest
# skip) with the probe's one-line reason when CUDA tasks cannot run. With --emulated (a build
# with TESSERA_EMULATE_CUDA) it is two CPU workers in strict emulation
# (TESSERA_EMULATED_CUDA=strict), standing for two GPU workers: every task runs its CUDA body,
# and a task without one stops the run with its name, as a GPU-only run would refuse it; then
# a third run in split emulation (TESSERA_EMULATED_CUDA=split: one of the two CPU workers
# stands for a CUDA worker) with --gpu-fraction 0.5, where the placement planner splits the
# application's tiles and merges those it puts on the CUDA worker (Planner::merge_gpu_part),
# which must give the same digits too.
# With --emulated-gpus=K (several GPUs without a GPU) the runs after the CPU one have K stand-in
# GPUs and one CPU worker (TESSERA_EMULATED_CUDA=split:K, --ncpu K+1), each with --trace: the
# planner's own placement (without calibrated models every tile on the CUDA workers, given
# tiles merged into one slab per stand-in), then --gpu-fraction 0.5 --keep-gpu-tiles (a split,
# the GPU part's tiles as given, several per stand-in); each must give the CPU run's digits,
# and its trace must show every task of a tile on the one worker its tile was pinned to, the
# GPU tiles over every stand-in (check_pinning.py; $TESSERA_PINNING_CHECK adds its options),
# and the buses data crossed (check_pinning.py --buses): with TESSERA_TEST_BUSES=numa (the case
# gives the stand-ins NUMA nodes of their own), both ways to each node where tiles ran, and a
# stand-in in a node of its own; unset, none and one memory node: a run that dropped the
# topology, or gained one, fails.
# $TESSERA_TEST_MPIRUN (e.g. "mpirun -np 2") runs them under mpirun: K stand-ins per rank.
set -euo pipefail

probe=$1 tolerance=$2 key=$3 app=$4
shift 4
gpu_run=(--ncpu 0 --ncuda 1)
gpu_env=()
if [[ $probe == --emulated-gpus=* ]]; then
  gpus=${probe#--emulated-gpus=}
elif [ "$probe" = --emulated ]; then
  gpu_run=(--ncpu 2 --ncuda 0)
  gpu_env=(TESSERA_EMULATED_CUDA=strict)
else
  rc=0
  "$probe" || rc=$?
  if [ "$rc" -ne 0 ]; then exit "$rc"; fi
fi

# The run's <key> value; the run must also exit 0 (under mpirun, every rank: mpirun exits
# non-zero where one did), or the script stops, whatever it printed: a result line from a run
# that then aborted (StarPU at shutdown, a rank after rank 0 printed) is a failure. Run as
# `x=$(result ...) || exit 1`: `set -e` does not reach into a command substitution.
result() {
  local out rc=0
  out=$(env "$@" --quiet) || rc=$?
  echo "$out" >&2
  if [ "$rc" -ne 0 ]; then
    echo "app_gpu_vs_cpu: the run exited with status $rc: $*" >&2
    return 1
  fi
  sed -n "s/.* $key=\([^ ]*\).*/\1/p" <<<"$out" | tail -n 1
}
cpu_models=()
if [ -n "${gpus:-}" ]; then
  # Models and traces in a directory of its own (no calibrated models of the split mode: the
  # placement is the planner's without them; the tests beside it get none of these runs'
  # models). The CPU run, one process, writes StarPU's bus files there first: two ranks starting
  # on an empty directory both write them, and one may read the other's half-written file
  # (StarPU 1.3's assertion in check_bus_affinity_file, once in 8 runs of the set).
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  cpu_models=(--perfmodel-dir "$dir")
fi
cpu=$(result TESSERA_EMULATED_CUDA=0 "$app" "$@" --ncpu 2 --ncuda 0 "${cpu_models[@]}") || exit 1
if [ -n "${gpus:-}" ]; then
  [ -n "$cpu" ] || { echo "app_gpu_vs_cpu: no $key= in the output" >&2; exit 1; }
  read -r -a mpirun <<<"${TESSERA_TEST_MPIRUN:-}"
  read -r -a check <<<"${TESSERA_PINNING_CHECK:-}"
  here=$(dirname "${BASH_SOURCE[0]}")
  for placement in gpu split; do
    options=()
    [ "$placement" = split ] && options=(--gpu-fraction 0.5 --keep-gpu-tiles)
    got=$(result TESSERA_EMULATED_CUDA="split:$gpus" "${mpirun[@]}" "$app" "$@" \
      --ncpu $((gpus + 1)) --ncuda 0 "${options[@]}" --perfmodel-dir "$dir" \
      --trace "$dir/$placement.json") || exit 1
    [ "$cpu" = "$got" ] || {
      echo "$key: CPU $cpu, $gpus stand-in GPUs ($placement) $got: not identical" >&2
      exit 1
    }
    python3 "$here/check_pinning.py" "$dir/$placement.json" --gpus "$gpus" \
      --placement "$placement" "${check[@]}" --buses "${TESSERA_TEST_BUSES:-none}"
  done
  echo "$key: CPU $cpu, GPU $got (identical; $gpus stand-in GPUs${mpirun:+ per rank}, placed on" \
    "the GPUs and split with the CPU)"
  exit 0
fi
gpu=$(result "${gpu_env[@]}" "$app" "$@" "${gpu_run[@]}") || exit 1
if [ -z "$cpu" ] || [ -z "$gpu" ]; then
  echo "app_gpu_vs_cpu: no $key= in the output" >&2
  exit 1
fi
if [ "$probe" = --emulated ]; then
  # Its models in a directory of its own: split emulation's models in the default one would
  # give the next split run speeds (tests that expect a placement without them).
  models=$(mktemp -d)
  trap 'rm -rf "$models"' EXIT
  split=$(result TESSERA_EMULATED_CUDA=split "$app" "$@" --ncpu 2 --ncuda 0 --gpu-fraction 0.5 \
    --perfmodel-dir "$models") || exit 1
  [ "$cpu" = "$split" ] || {
    echo "$key: CPU $cpu, split emulation $split: not identical" >&2
    exit 1
  }
  echo "$key: CPU $cpu, split emulation (--gpu-fraction 0.5) $split (identical)"
fi
if [ "$tolerance" = 0 ]; then
  [ "$cpu" = "$gpu" ] || { echo "$key: CPU $cpu, GPU $gpu: not identical" >&2; exit 1; }
  echo "$key: CPU $cpu, GPU $gpu (identical)"
  exit 0
fi
awk -v c="$cpu" -v g="$gpu" -v t="$tolerance" -v k="$key" 'BEGIN {
  d = c - g; if (d < 0) d = -d; s = c < 0 ? -c : c
  if (d > t * (1 + s)) { printf "%s: CPU %s, GPU %s, beyond relative %s\n", k, c, g, t; exit 1 }
  printf "%s: CPU %s, GPU %s (relative tolerance %s)\n", k, c, g, t }'
