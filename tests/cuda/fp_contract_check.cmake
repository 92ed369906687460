# Checks that no build option lets the host code of a program compiled as CUDA contract to
# fused multiply-adds (docs/gpu.md, "Bitwise equality"):
#   cmake -DBUILD_DIR=<build> -P fp_contract_check.cmake
# 1. every nvcc command of <build>/compile_commands.json passes -ffp-contract=off to the host
#    compiler (none when the build has no nvcc: said so);
# 2. the exported Tessera::tessera (the TesseraTargets.cmake that `cmake --install` copies from
#    <build>/CMakeFiles/Export, what `find_package(Tessera)` gives installed users) carries it
#    for CUDA sources.
if(NOT EXISTS "${BUILD_DIR}/compile_commands.json")
  message(FATAL_ERROR "no ${BUILD_DIR}/compile_commands.json: configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON")
endif()
file(READ "${BUILD_DIR}/compile_commands.json" json)
string(JSON count LENGTH "${json}")
set(cuda 0)
set(missing "")
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON command GET "${json}" ${i} command)
    string(JSON file GET "${json}" ${i} file)
    if(command MATCHES "nvcc[^ ]* ")
      math(EXPR cuda "${cuda} + 1")
      if(NOT command MATCHES "-Xcompiler=[^ ]*-ffp-contract=off")
        list(APPEND missing "${file}")
      endif()
    endif()
  endforeach()
endif()
if(missing)
  list(JOIN missing "\n  " missing)
  message(FATAL_ERROR "compiled by nvcc without -Xcompiler=-ffp-contract=off (their host code may "
                      "contract to FMA and lose the CPU/GPU bitwise equality):\n  ${missing}")
endif()
message(STATUS "${cuda} nvcc commands, each with -Xcompiler=-ffp-contract=off")
file(GLOB export_file "${BUILD_DIR}/CMakeFiles/Export/*/TesseraTargets.cmake")
if(NOT export_file)
  message(FATAL_ERROR "no ${BUILD_DIR}/CMakeFiles/Export/*/TesseraTargets.cmake (the install's export)")
endif()
file(READ "${export_file}" exported)
# The export file escapes each $ of a generator expression as \$. Tessera::native's own
# "-Xcompiler=-march=native,-ffp-contract=off" does not count: it is there only with TESSERA_NATIVE.
if(NOT exported MATCHES "COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffp-contract=off>")
  message(FATAL_ERROR "${export_file}: the exported Tessera::tessera does not give CUDA sources "
                      "-Xcompiler=-ffp-contract=off")
endif()
message(STATUS "the exported Tessera::tessera gives CUDA sources -Xcompiler=-ffp-contract=off")
