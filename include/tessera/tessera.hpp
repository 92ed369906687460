// Tessera: tiled structured-grid stencils and unstructured mesh loops scheduled by StarPU on CPU
// (Kokkos) and CUDA workers.
#pragma once

#include "tessera/access.hpp"
#include "tessera/boundary.hpp"
#include "tessera/boundary_function.hpp"
#include "tessera/box.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/error.hpp"
#include "tessera/field.hpp"
#include "tessera/grid.hpp"
#include "tessera/index.hpp"
#include "tessera/loop.hpp"
#include "tessera/macros.hpp"
#include "tessera/mesh.hpp"
#include "tessera/output.hpp"
#include "tessera/reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stencil.hpp"
