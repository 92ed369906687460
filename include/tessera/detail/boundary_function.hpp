// What the library knows of a user boundary function (Boundary::Kind::Function): its name,
// the field it fits (dimensions, element type), its task kind and argument block. The
// template that builds them from the user's functor is tessera/boundary_function.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/detail/task.hpp"

namespace tessera::detail {

/// One block of ghost points of a tile whose values a boundary function gives. The boundary
/// task has already put each point's mirrored interior value there; the function's task
/// replaces it in place by f(global index, that value).
struct FunctionGhostRegion {
  std::int64_t dims[3];    // points per axis
  std::int64_t start;      // element offset of point (0, 0, 0) in the tile buffer
  std::int64_t stride[3];  // element strides in the tile buffer
  std::int64_t origin[3];  // global index of point (0, 0, 0): outside the grid on the face's axis
};

/// The regions of one tile on one face: at most the 9 directions that cross a face in 3-D.
struct FunctionGhostList {
  static constexpr int kMax = 9;
  std::int32_t count = 0;
  FunctionGhostRegion region[kMax];
};

/// A user boundary function, type-erased: `kind` runs it on a tile (first buffer, read and
/// written) with an argument block that is `prototype` (the functor after a FunctionGhostList
/// at offset 0) with that tile's list written in.
struct BoundaryFunction {
  std::string name;       // names its tasks and performance model
  int dims = 0;           // the functor takes Index<dims>
  const char* type_name;  // and the element type (element_name<T>())
  TaskKind kind;
  std::vector<unsigned char> prototype;
};

}  // namespace tessera::detail
