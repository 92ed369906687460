// Validation of fields, boundaries and stencil applications: every rule is checked before any
// task is submitted.
#include "core/checks.hpp"

#include <cctype>

#include "tessera/error.hpp"
#include "tessera/index.hpp"
#include "tessera/stencil.hpp"

namespace tessera::detail {

std::string face_name(int axis, int side) {
  return std::string(axis_name(axis)) + (side == 0 ? "-low" : "-high");
}

void check_field(int halo, std::size_t element_size, const char* type_name, const std::string& name) {
  if (type_name == nullptr)
    throw Error(std::string("element type of ") + std::to_string(element_size) +
                " bytes is not supported for field '" + name +
                "'; use double, float, std::int32_t or std::uint8_t");
  if (halo < 0)
    throw Error("halo width " + std::to_string(halo) + " of field '" + name +
                "' must be >= 0; use at least the radius of the stencils that read it");
}

FaceSpecs checked_faces(const GridSpec& grid, FaceSpecs faces, const char* type_name) {
  for (int a = 0; a < grid.dims; ++a)
    for (int s = 0; s < 2; ++s) {
      FaceSpec& f = faces.face[a][s];
      if (faces.defaulted && grid.periodic[a]) f = FaceSpec{Boundary::Kind::Periodic};
      const bool periodic_face = f.kind == Boundary::Kind::Periodic;
      if (periodic_face != grid.periodic[a])
        throw Error("face " + face_name(a, s) + " is " +
                    (periodic_face ? "Periodic but the grid is not periodic along "
                                   : "not Periodic but the grid is periodic along ") +
                    axis_name(a) + "; make the grid's periodic flag and both " + axis_name(a) +
                    " faces agree");
      if (f.kind == Boundary::Kind::Dirichlet && !f.exact)
        throw Error("Dirichlet value " + std::to_string(f.value) + " on face " + face_name(a, s) +
                    " is not representable as " + type_name +
                    "; give a value the element type holds exactly");
    }
  return faces;
}

void check_point(const GridSpec& grid, const Extent3& p) {
  for (int a = 0; a < grid.dims; ++a)
    if (p[a] < 0 || p[a] >= grid.extent[a])
      throw Error("index " + std::to_string(p[a]) + " on axis " + axis_name(a) +
                  " is outside the grid extent " + std::to_string(grid.extent[a]));
}

void check_swap(const FieldStorage& a, const FieldStorage& b) {
  if (!(a.grid() == b.grid()))
    throw Error("cannot swap fields '" + a.name() + "' and '" + b.name() +
                "' on different grids; swap fields of one grid");
}

void check_stencil_radius(const std::string& name, int radius) {
  if (radius < 1)
    throw Error("stencil '" + name + "' has radius " + std::to_string(radius) +
                "; the radius must be >= 1 (use a parallel loop for pointwise updates)");
}

std::string check_stencil_name(const std::string& name) {
  if (name.empty()) throw Error("stencil name is empty; give a name such as \"heat3d\"");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw Error("stencil name '" + name +
                  "' may contain only letters, digits, '_' and '-' (it names perfmodel files)");
  return name;
}

void check_stencil_fields(const std::string& stencil, int radius,
                          const std::vector<FieldStorage*>& inputs,
                          const std::vector<FieldStorage*>& outputs,
                          const std::vector<bool>& centre_only) {
  const GridSpec& grid = inputs.front()->grid();
  std::vector<FieldStorage*> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  for (FieldStorage* f : all)
    if (!(f->grid() == grid))
      throw Error("stencil '" + stencil + "': field '" + f->name() +
                  "' is on a different grid (extent, tile or periodicity) than field '" +
                  inputs.front()->name() + "'; create all fields of one stencil on one Grid");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const FieldStorage* f = inputs[k];
    if (k < centre_only.size() && centre_only[k]) continue;  // read at the point only
    if (f->halo() < radius)
      throw Error("stencil '" + stencil + "' has radius " + std::to_string(radius) +
                  " but input field '" + f->name() + "' has halo width " +
                  std::to_string(f->halo()) + "; create the field with a halo >= " +
                  std::to_string(radius) + ", or pass it as tessera::centre(" + f->name() +
                  ") if the stencil reads it at the point only");
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (FieldStorage* in : inputs)
      if (in == outputs[i])
        throw Error("stencil '" + stencil + "': field '" + in->name() +
                    "' is both an input and an output; write to a second field and swap");
    for (std::size_t j = 0; j < i; ++j)
      if (outputs[j] == outputs[i])
        throw Error("stencil '" + stencil + "': field '" + outputs[i]->name() +
                    "' is given twice as an output; give each output once");
  }
  for (int a = 0; a < grid.dims; ++a) {
    const std::int64_t thinnest = inputs.front()->thinnest_tile(a);
    if (thinnest < radius)
      throw Error("stencil '" + stencil + "' has radius " + std::to_string(radius) +
                  " but a tile is only " + std::to_string(thinnest) + " point(s) thick along " +
                  axis_name(a) + " (extent " + std::to_string(grid.extent[a]) + " cut in tiles of " +
                  std::to_string(grid.tile[a]) + "); every tile must be at least as thick as the "
                  "radius: choose a tile size whose last tile is >= " + std::to_string(radius));
  }
}

std::string type_names(const std::vector<FieldStorage*>& fields) {
  std::string out;
  for (FieldStorage* f : fields) out += (out.empty() ? "" : "-") + f->type_name();
  return out;
}

}  // namespace tessera::detail

namespace tessera::detail {

void check_vertex_mirror(const std::string& stencil, int radius,
                         const std::vector<FieldStorage*>& inputs,
                         const std::vector<bool>& centre_only) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const FieldStorage& f = *inputs[k];
    if (centre_only[k]) continue;
    for (int a = 0; a < f.grid().dims; ++a) {
      const auto& faces = f.faces().face[a];
      const bool vertex = faces[0].kind == Boundary::Kind::NeumannVertex ||
                          faces[1].kind == Boundary::Kind::NeumannVertex;
      if (vertex && f.thinnest_tile(a) < radius + 1)
        throw Error("stencil '" + stencil + "' has radius " + std::to_string(radius) +
                    " and field '" + f.name() + "' has a NeumannVertex face along " + axis_name(a) +
                    ", whose ghost -" + std::to_string(radius) + " mirrors interior point " +
                    std::to_string(radius) + ", but a tile is only " +
                    std::to_string(f.thinnest_tile(a)) + " point(s) thick there; choose tiles " +
                    "(the last one included) at least " + std::to_string(radius + 1) + " thick");
    }
  }
}

}  // namespace tessera::detail
