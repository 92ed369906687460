#!/usr/bin/env bash
# The README's two commands in order, on a fresh build directory: run-heat3d.sh configures it
# (without the emulated device), then test.sh must configure it with the emulated device, as CI
# (test.sh alone) does. CMake runs for real; the packages' check, the builds, heat3d and CTest
# are stand-ins that only record they ran.
#   readme_commands.sh SOURCE_DIR
set -euo pipefail
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/build/apps/heat3d"
real_cmake=$(command -v cmake)
cat > "$work/bin/cmake" <<STUB
#!/usr/bin/env bash
[ "\$1" = --build ] && exit 0  # configure for real, build nothing
exec "$real_cmake" "\$@"
STUB
printf '#!/bin/sh\necho "ctest ran"\n' > "$work/bin/ctest"
printf '#!/bin/sh\necho "install ok installed"\n' > "$work/bin/dpkg-query"
printf '#!/bin/sh\necho "heat3d ran"\n' > "$work/build/apps/heat3d/heat3d"
chmod +x "$work/bin/"* "$work/build/apps/heat3d/heat3d"
export PATH="$work/bin:$PATH" BUILD_DIR="$work/build"
# As a user types them: no StarPU of the suite's own (scripts/test-starpu14.sh exports its 1.4
# with CUDA as STARPU_PREFIX, a sanitizer run on 1.4 through PKG_CONFIG_PATH; nvcc-compiled
# programs cannot take the emulated device).
unset TESSERA_EMULATE_CUDA TESSERA_GPU STARPU_PREFIX PKG_CONFIG_PATH
cached() { sed -n 's/^TESSERA_EMULATE_CUDA:BOOL=//p' "$work/build/CMakeCache.txt"; }
bash "$root/scripts/run-heat3d.sh" > "$work/first.log" 2>&1 || { cat "$work/first.log"; exit 1; }
echo "after run-heat3d.sh: TESSERA_EMULATE_CUDA=$(cached)"
bash "$root/scripts/test.sh" > "$work/second.log" 2>&1 || { cat "$work/second.log"; exit 1; }
echo "after test.sh: TESSERA_EMULATE_CUDA=$(cached)"
if [ "$(cached)" != ON ]; then
  echo "FAIL: test.sh after run-heat3d.sh left the emulated device out (CI builds it)"
  exit 1
fi
echo "OK: the README's commands build the emulated tests"
