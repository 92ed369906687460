#!/usr/bin/env bash
# Checks the include rules of docs/architecture.md ("Who may include whom"): prints every
# include that breaks one and exits 1, or prints nothing and exits 0. CTest runs it (layers).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

status=0
# forbid <folder> <extended regex of what it must not include>
forbid() {
  local hits
  hits=$(grep -rnE "#include [<\"]($2)" "$1" 2>/dev/null)
  if [ -n "$hits" ]; then
    printf '%s may not include %s:\n%s\n' "$1" "$2" "$hits"
    status=1
  fi
}

# core/'s rooms: runtime at the bottom; grid and mesh on it; tiles and io on grid.
forbid core/runtime 'core/(grid|mesh|tiles|io)/'
forbid core/grid    'core/(mesh|tiles|io)/'
forbid core/mesh    'core/(grid|tiles|io)/'
forbid core/tiles   'core/(mesh|io)/'
forbid core/io      'core/(mesh|tiles)/'
# StarPU lives in tasks/ and perfmodels/ only.
forbid core         'starpu|tasks/starpu\.hpp'
forbid include      'starpu|core/|tasks/|kernels/|partition/|trace/'
forbid perfmodels   'core/(grid|mesh|tiles|io)/'
forbid tasks        'core/'
forbid kernels      'starpu|core/|tasks/'
forbid partition    'starpu|core/|tasks/|kernels/|trace/'
forbid trace        'starpu|core/|tasks/|kernels/|partition/'
forbid apps         'starpu|core/|tasks/|kernels/|partition/|trace/'
exit $status
