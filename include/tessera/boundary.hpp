// Physical boundary conditions of a field, one per face of the domain.
#pragma once

#include <array>
#include <memory>

namespace tessera {

namespace detail {
struct BoundaryFunction;  // a user's ghost function, compiled for both backends
                          // (boundary_function.hpp)
}

/// What the ghost layers outside a domain face hold.
///  - Dirichlet: a constant value.
///  - Neumann: zero gradient, cell-centred: the interior mirrored about the face (ghost -1-i
///    takes interior i).
///  - NeumannVertex: zero gradient, vertex-centred: mirrored about the first point (ghost -i
///    takes interior i, so ghost -1 takes interior 1), as classic finite-difference codes
///    (Aliev-Panfilov) write it. Tiles at the face must be at least radius + 1 thick.
///  - Periodic: the opposite side of the domain; the grid axis must be periodic.
///  - Function: a user function of the ghost point's global index and the cell-centred mirrored
///    interior value (what Neumann would give): tessera::boundary_function(name, f), declared in
///    tessera/boundary_function.hpp.
struct Boundary {
  enum class Kind { Dirichlet, Neumann, Periodic, NeumannVertex, Function };
  Kind kind = Kind::Dirichlet;
  double value = 0.0;
  std::shared_ptr<const detail::BoundaryFunction> function;  // Kind::Function only

  static Boundary dirichlet(double v) { return {Kind::Dirichlet, v}; }
  static Boundary neumann() { return {Kind::Neumann, 0.0}; }
  static Boundary periodic() { return {Kind::Periodic, 0.0}; }
  static Boundary neumann_vertex() { return {Kind::NeumannVertex, 0.0}; }
};

/// Boundary per face: face[axis][0] is the low face, face[axis][1] the high face.
/// The default is Dirichlet 0 on non-periodic axes and Periodic on periodic ones.
/// Example: auto bc = tessera::Boundaries<3>::all(tessera::Boundary::dirichlet(1.0));
template <int D>
struct Boundaries {
  std::array<std::array<Boundary, 2>, D> face{};
  bool defaulted = true;  // true until a face is set: periodic axes then become Periodic

  static Boundaries all(Boundary b) {
    Boundaries out;
    for (auto& f : out.face) f = {b, b};
    out.defaulted = false;
    return out;
  }
  Boundaries& set(int axis, int side, Boundary b) {
    face[axis][side] = b;
    defaulted = false;
    return *this;
  }
};

}  // namespace tessera
