#!/usr/bin/env bash
# An application's --checkpoint-every / --restart / --output-every:
# - checkpointing and output leave the result alone (checksum of the plain run);
# - a restart from the middle, on another tiling (and under MPIRUN, with 2 ranks, when given;
#   and a checkpoint written by 2 ranks restarted on 1),
#   prints the checksum of the uninterrupted run on that tiling (the checksum's sum runs in
#   tile order; the fields themselves are bitwise equal for any tiling: test_checkpoint);
# - output holds an index and one piece per tile for step 0, the middle and the end;
# - a corrupted tile file, a truncated manifest and another --size are refused with a message.
#   app_restart.sh WORKDIR APP "COMMON ARGS" "TILE A" "TILE B" STEPS [MPIRUN...]
set -u
work=$1 app=$2 common=$3 tile_a=$4 tile_b=$5 steps=$6
shift 6
mpirun=("$@")
half=$((steps / 2))
export STARPU_SILENT=1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
checksum() { grep -o "checksum=[^ ]*" <<< "$1"; }
run() { "$app" $common --quiet "$@"; }
# The checksum a command prints, and its status: a run that prints its result and then fails
# (a rank after rank 0 printed) fails here, where checksum "$(...)" kept only grep's status.
result_of() {
  local out
  out=$("$@") || return 1
  checksum "$out"
}

plain_a=$(result_of run $tile_a --steps "$steps") || fail "plain run"
plain_b=$(result_of run $tile_b --steps "$steps") || fail "plain run on tile B"
with_io=$(result_of run $tile_a --steps "$steps" --checkpoint-every "$half" --output-every "$half") ||
  fail "run with checkpoints"
[ "$with_io" = "$plain_a" ] || fail "checkpoints changed the result: $with_io, not $plain_a"
ck=checkpoints/$(printf "step-%08d" "$half")
[ -f "$ck/manifest" ] || fail "no $ck/manifest"
ls -d checkpoints/*.partial 2> /dev/null && fail "a partial checkpoint was left"
for s in 0 "$half" "$steps"; do
  ls output/*_$(printf %08d "$s").pvti > /dev/null 2>&1 || fail "no output index for step $s"
done
line=$(run $tile_b --steps "$steps" --restart "$ck") || fail "restart"
restarted=$(checksum "$line")
# Its rates count the steps it computed: the line says where it began.
grep -q " from_step=$half\b" <<< "$line" || fail "the restart's result line lacks from_step=$half: $line"
[ "$restarted" = "$plain_b" ] || fail "restart on tile B gave $restarted, the plain run $plain_b"
echo "restart on another tiling: $restarted"
if [ ${#mpirun[@]} -gt 0 ]; then
  plain_mpi=$(result_of "${mpirun[@]}" -np 2 "$app" $common --quiet $tile_b --steps "$steps") ||
    fail "plain run under mpirun"
  mpi=$(result_of "${mpirun[@]}" -np 2 "$app" $common --quiet $tile_b --steps "$steps" --restart "$ck") ||
    fail "restart under mpirun"
  [ "$mpi" = "$plain_mpi" ] || fail "restart on 2 ranks gave $mpi, the plain 2-rank run $plain_mpi"
  echo "restart on 2 ranks: $mpi"
  # Written by 2 ranks (each its own tiles and pieces), restarted on 1.
  two=$(result_of "${mpirun[@]}" -np 2 "$app" $common --quiet $tile_b --steps "$steps" \
        --checkpoint-every "$half" --checkpoint-dir ck2 --output-every "$half" --output-dir out2) ||
    fail "checkpoints written by 2 ranks"
  [ "$two" = "$plain_mpi" ] || fail "checkpoints on 2 ranks changed the result: $two"
  ls out2/*.pvti > /dev/null 2>&1 || fail "no output from 2 ranks"
  one=$(result_of run $tile_a --steps "$steps" --restart "ck2/$(basename "$ck")") || fail "restart of a 2-rank checkpoint"
  [ "$one" = "$plain_a" ] || fail "restart on 1 rank of a 2-rank checkpoint gave $one, not $plain_a"
  echo "2-rank checkpoint restarted on 1 rank: $one"
fi
expect_refusal() {  # expect_refusal WHAT PATTERN args...
  local what=$1 pattern=$2
  shift 2
  out=$(run "$@" 2>&1) && fail "$what: accepted"
  grep -q -- "$pattern" <<< "$out" || fail "$what: message '$out' lacks '$pattern'"
  echo "refused ($what): $(grep -o "tessera: .*" <<< "$out" | head -1)"
}
cp -r "$ck" bad && printf 'Z' | dd of=bad/$(ls bad | grep '_0.bin$') bs=1 seek=9 conv=notrunc status=none
expect_refusal "corrupted tile" "is corrupted" $tile_a --steps "$steps" --restart bad
rm -rf bad && cp -r "$ck" bad && truncate -s -3 bad/manifest
expect_refusal "truncated manifest" "manifest is truncated or corrupted" $tile_a --steps "$steps" --restart bad
expect_refusal "steps before the checkpoint" "past --steps" $tile_a --steps $((half - 1)) --restart "$ck"
echo "OK"
