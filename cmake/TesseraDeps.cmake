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

# StarPU-MPI of the same StarPU (starpumpi-1.4 next to starpu-1.4, starpumpi-1.3 next to
# starpu-1.3) and MPI: distributed runs when both are found (TESSERA_WITH_MPI).
if(NOT DEFINED TESSERA_WITH_MPI OR TESSERA_WITH_MPI)
  string(REPLACE "starpu-" "starpumpi-" _tessera_starpumpi_module "${STARPU_MODULE_NAME}")
  if(NOT TARGET PkgConfig::STARPUMPI)
    pkg_check_modules(STARPUMPI QUIET IMPORTED_TARGET GLOBAL ${_tessera_starpumpi_module})
  endif()
  find_package(MPI QUIET COMPONENTS CXX)
  if(STARPUMPI_FOUND AND MPI_CXX_FOUND)
    set(_tessera_mpi_found ON)
  else()
    set(_tessera_mpi_found OFF)
  endif()
  if(TESSERA_WITH_MPI AND NOT _tessera_mpi_found)
    message(FATAL_ERROR "TESSERA_WITH_MPI is ON but ${_tessera_starpumpi_module} or MPI was not found; "
                        "install libopenmpi-dev (and StarPU with MPI) or set -DTESSERA_WITH_MPI=OFF")
  endif()
  set(TESSERA_WITH_MPI ${_tessera_mpi_found} CACHE BOOL "Distributed runs with StarPU-MPI (default: found)")
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
