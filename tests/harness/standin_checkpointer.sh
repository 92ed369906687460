#!/usr/bin/env bash
# A stand-in for an application that checkpoints (--checkpoint-dir D), to show that
# scripts/bad-input.sh fails its "keep" cases when a user's file is lost
# (tests/harness/bad_input_standin.sh). Where D holds a step-* of the user's, it refuses as
# Tessera does ("checkpoint D/step-... is in the way ..."), then, unless STANDIN_KEEPS=1, empties
# it (through a link too) and exits 2; where D holds a *.partial, it runs (checksum=1.5) and
# removes it unless STANDIN_KEEPS=1. Anything else: a run that prints checksum=1.5.
dir=
while [ $# -gt 0 ]; do
  [ "$1" = --checkpoint-dir ] && dir=$2
  shift
done
refused=0
for entry in "$dir"/step-* "$dir"/*.partial; do
  [ -n "$dir" ] && [ -e "$entry" ] || continue
  case $entry in
    *.partial) [ "${STANDIN_KEEPS:-0}" = 1 ] || rm -rf "$entry" ;;
    *)
      if [ -f "$entry" ]; then
        echo "tessera: checkpoint $entry is in the way: it is a file, not a checkpoint" \
          "directory, so it is neither replaced nor removed; move it away, or give another" \
          "--checkpoint-dir" >&2
        [ "${STANDIN_KEEPS:-0}" = 1 ] || : > "$entry"
      else
        echo "tessera: checkpoint $entry is in the way: it exists and was not made by a Tessera" \
          "checkpoint (it has no file tessera-checkpoint), so it is neither replaced nor" \
          "removed; move it away, or give another --checkpoint-dir" >&2
        [ "${STANDIN_KEEPS:-0}" = 1 ] || rm -rf "${entry:?}"/*
      fi
      refused=1 ;;
  esac
done
[ "$refused" = 1 ] && exit 2
echo "standin grid=8 checksum=1.5"
