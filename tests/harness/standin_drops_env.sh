#!/usr/bin/env bash
# A stand-in for an application that ignores part of its environment, as a launcher that drops
# variables would (the NUMA gtests ran without their topology until 2026-11-28):
#   standin_drops_env.sh VARIABLE... -- APP ARGS...   runs APP without those variables.
unset_args=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do unset_args+=(-u "$1"); shift; done
shift
exec env "${unset_args[@]}" "$@"
