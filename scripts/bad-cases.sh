# Shared by scripts/bad-input.sh and scripts/bad-files.sh (sourced after `build` is set): a
# scratch directory to run the cases in, and `check`, one case and its verdict line.
# shellcheck shell=bash
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cd "$work" || exit 1
export STARPU_SILENT=1
limit=${BAD_INPUT_TIMEOUT:-60}
passed=0 failed=0
pending=0  # cases of a parallel section not yet counted

# check NAME fail|ok|any REGEX command...: one case (any: either exit status, e.g. a feature
# this build may lack). Where `parallel` is set (the MPI cases, which mostly wait for mpirun's
# start-up), two cases run at a time, their lines kept in files until `collect`. Set before
# `check` for one case: keep=FILE, a user's file the run must leave as it was (FILE must exist
# before); times=N, the message printed exactly N times (lines matching), not at least once.
check() {
  [[ $1 =~ ${BAD_INPUT_CASES:-} ]] || return 0
  if [ -n "${parallel:-}" ]; then
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    pending=$((pending + 1))
    verdict_of "$@" > "$work/case-$pending.txt" &
  else
    count "$(verdict_of "$@")"
  fi
}
# Prints a case's verdict line (PASS or FAIL first), and the run's last lines if it failed.
verdict_of() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local out rc verdict=PASS why="" kept="" said
  [ -n "${keep:-}" ] && kept=$(cksum < "$keep" 2> /dev/null)
  out=$(timeout "$limit" "$@" 2>&1 < /dev/null)
  rc=$?
  if [ -n "${keep:-}" ] && [ -z "$kept" ]; then verdict=FAIL why="set-up: no file $keep before the run"
  elif [ -n "${keep:-}" ] && [ "$(cksum < "$keep" 2> /dev/null)" != "$kept" ]; then
    verdict=FAIL why="the user's file $keep is gone or changed"
  elif [ "$rc" -eq 124 ]; then verdict=FAIL why="hang (still running after ${limit}s)"
  elif [ "$rc" -gt 128 ]; then verdict=FAIL why="crash (signal $((rc - 128)))"
  elif [ "$want" = fail ] && [ "$rc" -eq 0 ]; then verdict=FAIL why="exit status 0"
  elif [ "$want" = ok ] && [ "$rc" -ne 0 ]; then verdict=FAIL why="exit status $rc"
  elif ! grep -qE -- "$pattern" <<<"$out"; then verdict=FAIL why="no message matching '$pattern'"
  elif [ -n "${times:-}" ] && said=$(grep -cE -- "$pattern" <<<"$out") && [ "$said" -ne "$times" ]
  then verdict=FAIL why="the message printed $said times, not $times"
  fi
  printf '%-4s %-44s rc=%-3s %s\n' "$verdict" "$name" "$rc" "${why:-$(grep -m1 -E -- "$pattern" <<<"$out" | cut -c1-110)}"
  [ "$verdict" = PASS ] || sed 's/^/       | /' <<<"$out" | tail -5
}
count() {  # prints a case's lines and counts its verdict
  printf '%s\n' "$1"
  if [[ $1 == PASS* ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
collect() {  # the cases of a parallel section, in order, once all have ended
  wait
  local k
  for ((k = 1; k <= pending; k++)); do count "$(cat "$work/case-$k.txt")"; done
  pending=0
}

