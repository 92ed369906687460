#!/usr/bin/env bash
# Runs a command (an mpirun line) that must fail on bad input: it must end by itself within
# the time limit (no hang), exit non-zero, and print the expected message exactly once.
# usage: expect_failure.sh SECONDS 'message regex' command...
set -u
limit=$1 pattern=$2
shift 2
out=$(timeout "$limit" "$@" 2>&1)
status=$?
echo "$out"
if [ "$status" -eq 124 ]; then echo "FAIL: still running after ${limit}s (hang)"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "FAIL: exit status 0 on bad input"; exit 1; fi
count=$(grep -cE "$pattern" <<<"$out")
if [ "$count" -ne 1 ]; then echo "FAIL: message '$pattern' printed $count times, want 1"; exit 1; fi
echo "OK: exit status $status, message printed once"
