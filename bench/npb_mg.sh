#!/usr/bin/env bash
# NAS MG: Tessera's apps/mg against the NPB 3.0 C OpenMP reference, in alternating rounds (one
# Tessera run, then one NPB run, per class and round), Mop/s by NPB's formula on both sides, and
# the ratio Tessera/NPB per round. Tessera's runs must print VERIFICATION SUCCESSFUL (else the
# script says so and exits 1).
#   bash bench/npb_mg.sh NPB_BIN_DIR [ROUNDS]
# NPB_BIN_DIR holds NPB's binaries: mg.S, mg.W (NPB 3.0's class W: 64^3, 40 iterations, against
# Tessera's --class W-npb3.0), mg.A, and optionally mg.W128 (NPB 3.3's class W: 128^3, 4
# iterations, against --class W; NPB 3.0 runs it as class U, unverified). NPB is not in this
# repository: get github.com/benchmark-subsetting/NPB3.0-omp-C, set `CFLAGS = -O3 -march=native
# -fopenmp` in config/make.def (Tessera's apps are built with -march=native; -O3 -fopenmp alone
# for the comparison of docs/performance.md) and `make MG CLASS=S`, W, A; for mg.W128 set
# MG/npbparams.h to NX/NY/NZ_DEFAULT 128, NIT_DEFAULT 4, LM, LT_DEFAULT and NDIM1-3 7 and compile
# MG/mg.c with the common/ sources.
# Environment: MG (build/apps/mg/mg), THREADS (2: OMP_NUM_THREADS and --ncpu), SCHED (peager,
# the app's default: its one-task V-cycle runs on a team of all workers),
# CLASSES (S W-npb3.0 W A), MG_ARGS (more options for Tessera, e.g. --tile-z 16), MG_BASE (a
# second Tessera binary, e.g. main's, run in the same rounds right after MG, with the same
# options: its Mop/s and ratio in two more columns, for before/after pairs under the same
# load). Time only on a quiet machine (docs/performance.md).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
npb=${1:?"usage: bash bench/npb_mg.sh NPB_BIN_DIR [ROUNDS]"}
rounds=${2:-3}
mg=${MG:-$root/build/apps/mg/mg}
threads=${THREADS:-2}
sched=${SCHED:-peager}
classes=${CLASSES:-S W-npb3.0 W A}
export STARPU_SILENT=1
failed=0

npb_binary() {  # Tessera's class -> NPB's binary
  case $1 in
    S) echo "$npb/mg.S" ;;
    W-npb3.0) echo "$npb/mg.W" ;;
    W) echo "$npb/mg.W128" ;;
    A) echo "$npb/mg.A" ;;
    B) echo "$npb/mg.B" ;;
  esac
}

base=${MG_BASE:-}

# One Tessera run of class $1 with binary $2: "Mop/s tasks/iteration", or nothing when it did
# not verify (the caller sets failed: this runs in a subshell).
tessera_run() {
  local out line
  # shellcheck disable=SC2086  # MG_ARGS: several options
  out=$("$2" --class "$1" --ncpu "$threads" --sched "$sched" --quiet ${MG_ARGS:-} 2>&1)
  line=$(grep '^mg ' <<<"$out")
  if ! grep -q 'VERIFICATION SUCCESSFUL' <<<"$out"; then
    echo "$1: $2 did not verify: $line" >&2
    return
  fi
  echo "$(grep -o 'Mop/s=[0-9.]*' <<<"$line" | cut -d= -f2) $(grep -o 'tasks/iteration=[0-9.]*' <<<"$line" | cut -d= -f2)"
}

printf '%-9s %5s %12s %12s %7s %-15s' class round Tessera NPB ratio "tasks/iteration"
[ -n "$base" ] && printf ' %12s %7s' "MG_BASE" ratio
printf '\n'
for c in $classes; do
  ref=$(npb_binary "$c")
  if [ ! -x "$ref" ]; then
    echo "$c: no NPB binary $ref, skipped" >&2
    continue
  fi
  for r in $(seq 1 "$rounds"); do
    result=$(tessera_run "$c" "$mg")
    if [ -z "$result" ]; then
      failed=1
      continue
    fi
    read -r t tasks <<<"$result"
    if [ -n "$base" ]; then
      result=$(tessera_run "$c" "$base")
      [ -z "$result" ] && failed=1
      read -r tb _ <<<"${result:-0 0}"
    fi
    n=$(OMP_NUM_THREADS=$threads "$ref" | awk '/Mop\/s total/ {print $4}')
    ratio=$(awk -v t="$t" -v n="$n" 'BEGIN { if (n > 0) printf "%.2f", t / n; else print "-" }')
    printf '%-9s %5d %12.1f %12.1f %7s %-15s' "$c" "$r" "$t" "$n" "$ratio" "$tasks"
    if [ -n "$base" ]; then
      printf ' %12.1f %7s' "$tb" "$(awk -v t="$tb" -v n="$n" 'BEGIN { if (n > 0 && t > 0) printf "%.2f", t / n; else print "-" }')"
    fi
    printf '\n'
  done
done
exit $failed
