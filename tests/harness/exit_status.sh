#!/usr/bin/env bash
# Runs a command and says so when it exits non-zero: "exit_status.sh: exited with status N".
# CTest ignores the exit status of a test with PASS_REGULAR_EXPRESSION, so a run that prints its
# result line and then aborts (a StarPU assertion at shutdown, a rank of mpirun) would pass; such
# tests run through this script and fail on that line (tests/CMakeLists.txt, FAIL_REGULAR_EXPRESSION).
#   exit_status.sh COMMAND [ARGS...]
"$@"
rc=$?
[ "$rc" -eq 0 ] || echo "exit_status.sh: exited with status $rc: $*"
exit "$rc"
