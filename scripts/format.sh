#!/usr/bin/env bash
# Formats every C++ and CUDA source the repository tracks with clang-format (.clang-format).
#   bash scripts/format.sh          rewrites the files in place
#   bash scripts/format.sh --check  changes nothing; lists each file that is not formatted and
#                                   exits 1 (CTest runs this as the `format` test)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

format=${CLANG_FORMAT:-clang-format}
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
if [ "${1:-}" = --check ]; then
  "$format" --dry-run --Werror "${sources[@]}"
else
  "$format" -i "${sources[@]}"
fi
