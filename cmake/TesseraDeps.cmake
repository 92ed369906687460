# Finding Tessera's dependencies: used by the build and, installed, by find_package(Tessera).

# StarPU through pkg-config: starpu-1.4 if found, else starpu-1.3 (or the module named in
# TESSERA_STARPU_MODULE). TESSERA_STARPU_PREFIX names the prefix of a StarPU built by
# scripts/build-starpu.sh: its lib/pkgconfig is searched first and starpu-1.4 is required.
find_package(PkgConfig REQUIRED)
if(TESSERA_STARPU_PREFIX)
  if(NOT EXISTS "${TESSERA_STARPU_PREFIX}/lib/pkgconfig/starpu-1.4.pc")
    message(FATAL_ERROR "TESSERA_STARPU_PREFIX=${TESSERA_STARPU_PREFIX} has no "
      "lib/pkgconfig/starpu-1.4.pc: it must be the prefix given to scripts/build-starpu.sh "
      "after that script succeeded; build StarPU there first or fix the path")
  endif()
  set(ENV{PKG_CONFIG_PATH} "${TESSERA_STARPU_PREFIX}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
  if(NOT TESSERA_STARPU_MODULE)
    set(TESSERA_STARPU_MODULE starpu-1.4)
  endif()
endif()
if(NOT TARGET PkgConfig::STARPU)
  if(TESSERA_STARPU_MODULE)
    pkg_check_modules(STARPU REQUIRED IMPORTED_TARGET GLOBAL ${TESSERA_STARPU_MODULE})
  else()
    pkg_check_modules(STARPU QUIET IMPORTED_TARGET GLOBAL starpu-1.4)
    if(NOT STARPU_FOUND)
      pkg_check_modules(STARPU REQUIRED IMPORTED_TARGET GLOBAL starpu-1.3)
    endif()
  endif()
endif()

find_package(Kokkos REQUIRED)
# Debian's KokkosConfig.cmake records a non-existent include path (/usr/lib/include); use
# Kokkos_INCLUDE_DIRS instead when the recorded one is missing.
get_target_property(_tessera_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
foreach(_dir IN LISTS _tessera_kokkos_inc)
  if(NOT EXISTS "${_dir}")
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
    break()
  endif()
endforeach()
find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
