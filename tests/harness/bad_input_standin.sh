#!/usr/bin/env bash
# scripts/bad-input.sh's "keep" cases (a user's file where a checkpoint goes) on a stand-in
# application (standin_checkpointer.sh) in place of every application: one that refuses as
# Tessera does and keeps the file must pass them all; one that refuses and then deletes the file
# (or, where the case expects a run, runs and deletes it) must fail them all, each for the
# file. Exits 0 when both hold.
#   bad_input_standin.sh ROOT [MPI]   (ROOT: the source tree; MPI: 1 to run the mpirun case too)
set -u
root=$1 mpi=${2:-0}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
standin=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/standin_checkpointer.sh
for app in heat3d jacobi2d life cloudsim nbody airfoil mg; do
  mkdir -p "$tree/apps/$app" && ln -s "$standin" "$tree/apps/$app/$app"
done
# bad-input.sh runs its MPI section where the build has tests/rank_error (never run here).
[ "$mpi" = 1 ] && mkdir -p "$tree/tests" && ln -s "$standin" "$tree/tests/rank_error"
export BAD_INPUT_CASES="keep a user's|a user's file named like a step|linked to a user's folder|a user's step folder kept"
want=5
[ "$mpi" = 1 ] && want=6
STANDIN_KEEPS=1 bash "$root/scripts/bad-input.sh" "$tree" > "$tree/keeps.txt" 2>&1
keeps=$?
bash "$root/scripts/bad-input.sh" "$tree" > "$tree/loses.txt" 2>&1
loses=$?
echo "== a stand-in that keeps the user's files (exit status $keeps)"
grep -E "^(PASS|FAIL) " "$tree/keeps.txt"
echo "== a stand-in that loses them (exit status $loses)"
grep -E "^(PASS|FAIL) " "$tree/loses.txt"
passes=$(grep -c "^PASS .*rc=2 \|^PASS .*rc=0 " "$tree/keeps.txt")
lost=$(grep -c "^FAIL .* the user's file .* is gone or changed" "$tree/loses.txt")
if [ "$keeps" -ne 0 ] || [ "$passes" -ne "$want" ]; then
  echo "FAIL: the stand-in that keeps the files should pass all $want cases"; exit 1
fi
if [ "$loses" -ne "$want" ] || [ "$lost" -ne "$want" ]; then
  echo "FAIL: the stand-in that loses the files should fail all $want cases, for the file"; exit 1
fi
echo "OK: bad-input.sh fails each of its $want keep cases on a stand-in that loses the user's file"
