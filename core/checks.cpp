// Validation of stencil applications: every rule is checked before any task is submitted.
#include <string>
#include <vector>

#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"
#include "tessera/field.hpp"
#include "tessera/index.hpp"

namespace tessera::detail {

std::string face_name(int axis, int side) {
  return std::string(axis_name(axis)) + (side == 0 ? "-low" : "-high");
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
                          const std::vector<FieldStorage*>& outputs) {
  const GridSpec& grid = inputs.front()->grid();
  std::vector<FieldStorage*> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  for (FieldStorage* f : all)
    if (!(f->grid() == grid))
      throw Error("stencil '" + stencil + "': field '" + f->name() +
                  "' is on a different grid (extent, tile or periodicity) than field '" +
                  inputs.front()->name() + "'; create all fields of one stencil on one Grid");
  for (FieldStorage* f : inputs)
    if (f->halo() < radius)
      throw Error("stencil '" + stencil + "' has radius " + std::to_string(radius) +
                  " but input field '" + f->name() + "' has halo width " +
                  std::to_string(f->halo()) + "; create the field with a halo >= " +
                  std::to_string(radius));
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
