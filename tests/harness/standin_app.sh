#!/usr/bin/env bash
# A stand-in for an application, to show that a harness fails when it should (tests/CMakeLists.txt,
# "harness.*"; docs/reliability.md, "Harnesses that can fail"). The first argument says how it
# misbehaves; the arguments a harness adds after it are ignored.
#   ok:            prints the result line "checksum=1.5" and exits 0 (a control: the harness passes);
#   abort:         prints it, then exits 134 (as a StarPU assertion at shutdown does);
#   rank1-aborts:  under mpirun rank 0 prints it and exits 0, rank 1 exits 134 without a word.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
case $1 in
  ok) echo "standin grid=8 checksum=1.5" ;;
  abort) echo "standin grid=8 checksum=1.5"; exit 134 ;;
  rank1-aborts)
    [ "$rank" -ne 0 ] && exit 134
    echo "standin grid=8 checksum=1.5" ;;
  *) echo "standin_app.sh: unknown mode '$1'" >&2; exit 2 ;;
esac
