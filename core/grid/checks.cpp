// Validation of fields, boundaries and stencil applications: every rule is checked before any
// task is submitted.
#include "core/grid/checks.hpp"

#include "partition/gpu_memory.hpp"
#include "tessera/stencil.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "partition/autotile.hpp"
#include "partition/tiling.hpp"
#include "tasks/device_classes.hpp"
#include "tasks/halo.hpp"
#include "tessera/detail/boundary_function.hpp"

#include "tessera/error.hpp"
#include "tessera/index.hpp"
#include "tessera/stencil.hpp"

namespace tessera::detail {

std::string face_name(int axis, int side) {
  return std::string(axis_name(axis)) + (side == 0 ? "-low" : "-high");
}

namespace {
// The points of the largest tile of `grid` placed on the CUDA workers (those starting below the
// split along its axis), with `halo` ghost layers on each side of every axis; 0 without any.
double largest_gpu_tile_points(const GridSpec& grid, int halo) {
  if (grid.split_axis < 0 || grid.split <= 0) return 0;
  double points = 1;
  for (int a = 0; a < grid.dims; ++a) {
    const auto ax = static_cast<std::size_t>(a);
    const std::vector<std::int64_t> starts =
        partition::tile_starts(grid.extent[ax], grid.tile[ax], grid.cuts[ax]);
    std::int64_t largest = 0;
    for (std::size_t k = 0; k < starts.size(); ++k) {
      if (a == grid.split_axis && starts[k] >= grid.split) break;
      const std::int64_t end = k + 1 < starts.size() ? starts[k + 1] : grid.extent[ax];
      largest = std::max(largest, end - starts[k]);
    }
    points *= static_cast<double>(largest + 2 * halo);
  }
  return points;
}
}  // namespace

void check_gpu_fields(const Context& rt, const GridSpec& grid, int halo, std::size_t element_size,
                      const std::string& name) {
  const double memory = rt.planner.places() ? rt.planner.machine().gpu_memory_bytes() : 0;
  if (!(memory > 0)) return;
  double bytes = static_cast<double>(element_size);  // a point of every field on the grid
  // A step reads one field and writes another: the new field's largest GPU tile and the
  // largest of the others' must be there at once.
  const double mine = static_cast<double>(element_size) * largest_gpu_tile_points(grid, halo);
  double other_tile = 0;
  std::vector<std::string> on_grid;  // the fields' names, sorted: the message is the same each run
  for (const FieldStorage* other : rt.fields)
    if (other->grid() == grid) {
      bytes += static_cast<double>(other->element_size());
      other_tile = std::max(other_tile, static_cast<double>(other->element_size()) *
                                            largest_gpu_tile_points(grid, other->halo()));
      on_grid.push_back(other->name());
    }
  std::sort(on_grid.begin(), on_grid.end());
  std::string names;
  for (const std::string& n : on_grid) names += "'" + n + "', ";
  names += "'" + name + "'";
  const double tile_bytes = mine + other_tile;
  char b[200];
  if (grid.stream_depth > 0 && bytes > static_cast<double>(grid.point_bytes)) {
    std::snprintf(b, sizeof(b), "%.0f bytes a point, more than the %zu", bytes, grid.point_bytes);
    throw Error("field '" + name + "' makes the fields of its grid (" + names + ") hold " + b +
                " the planner sized the grid's slabs for: the grid is larger than the GPUs' "
                "memory and streams through it in slabs (Grid::stream_depth), of which those "
                "bytes would not fit; say what a point holds where the grid is made "
                "(tessera::PointData::of<...>(), a type a field), or run with CPU workers "
                "taking a share (--ncpu), on more or larger GPUs, or with tiles given "
                "(--tile with --keep-gpu-tiles) in slabs thin enough");
  }
  if (grid.stream_depth == 0 && tile_bytes > memory) {
    std::snprintf(b, sizeof(b), "%.3g bytes on a GPU, more than the %.3g", tile_bytes, memory);
    throw Error("field '" + name + "' and the largest other field of its grid (of " + names +
                ") need, in the largest tile the grid places on the CUDA workers, " + b +
                " StarPU may use of the GPU's memory: a step that reads one and writes the other "
                "never fits there; give thinner tiles (--tile), let the planner merge and stream "
                "given tiles (no --keep-gpu-tiles), or run with CPU workers (--ncpu)");
  }
}

void check_field(int halo, std::size_t element_size, const char* type_name,
                 const std::string& name) {
  if (type_name == nullptr)
    throw Error(std::string("element type of ") + std::to_string(element_size) +
                " bytes is not supported for field '" + name +
                "'; use double, float, std::int32_t or std::uint8_t");
  if (halo < 0)
    throw Error("halo width " + std::to_string(halo) + " of field '" + name +
                "' must be >= 0; use at least the radius of the stencils that read it");
}

namespace {

// What the runtime keeps per tile of a field besides its data, on every rank: the StarPU (and
// StarPU-MPI) handles of the tile and of its face buffers, the halo plans (region-copy lists)
// and the tasks of a step in flight. Measured with heat3d in tiles of 1^3 (two fields, 2
// steps, 2 CPU workers, StarPU 1.3; peak resident set): 8^3 54 MB, 20^3 701 MB, 28^3 1918 MB,
// 87 KiB per tile between them, so 43.6 KiB per tile and field; 48 KiB leaves a margin (the
// figure of 32 KiB had let a 64^3 grid in 1^3 tiles start and exhaust memory).
constexpr double kBytesPerTile = 48.0 * 1024;

// A number of the first word of `path` (e.g. cgroup's memory.max), or -1 ("max", missing).
double number_in(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return -1;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  return end != word.c_str() && *end == '\0' ? v : -1;
}

// A "Key: value kB" line of a /proc file, in bytes; -1 when absent.
double proc_kib(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size() + 1, key + ":") == 0)
      return std::atof(line.c_str() + key.size() + 1) * 1024;
  return -1;
}

std::string gib(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof(buf), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof(buf), "%.0f MiB", std::ceil(bytes / (1024.0 * 1024)));
  return buf;
}

std::string extent_text(const Extent3& v, int dims) {
  std::string s;
  for (int a = 0; a < dims; ++a) s += (a ? " x " : "") + std::to_string(v[a]);
  return s;
}

const std::vector<std::int64_t> kNoCuts;

// "cut in tiles of 16", or for an axis cut at positions of its own "cut at 24, 48, 52".
std::string axis_tiles_text(const GridSpec& grid, int a) {
  if (grid.cuts[a].empty()) return "cut in tiles of " + std::to_string(grid.tile[a]);
  std::string s = "cut at ";
  for (std::size_t k = 0; k < grid.cuts[a].size(); ++k)
    s += (k ? ", " : "") + std::to_string(grid.cuts[a][k]);
  return s;
}

struct FieldSize {
  double tiles = 1;    // tiles of the grid
  double data = 1;     // bytes of every tile with its ghost layers
  double largest = 1;  // elements of the largest tile with its ghost layers
};

// Separable: along each axis, the tiles' extents plus their ghost layers add up to
// extent + 2 halo tiles.
FieldSize field_size(const GridSpec& grid, const Extent3& tile, int halo,
                     std::size_t element_size) {
  FieldSize f;
  f.data = static_cast<double>(element_size);
  for (int a = 0; a < grid.dims; ++a) {
    const std::vector<std::int64_t>& cuts = tile[a] == grid.tile[a] ? grid.cuts[a] : kNoCuts;
    const double n =
        static_cast<double>(partition::tile_count_along(grid.extent[a], tile[a], cuts));
    const double h = (grid.dims == 3 || a < 2) ? halo : 0;
    f.tiles *= n;
    f.data *= static_cast<double>(grid.extent[a]) + 2 * h * n;
    f.largest *=
        static_cast<double>(partition::largest_tile(grid.extent[a], tile[a], cuts)) + 2 * h;
  }
  return f;
}

}  // namespace

double available_memory_bytes() {
  double available = proc_kib("/proc/meminfo", "MemAvailable");
  if (available < 0) available = 1e300;
  // The ranks of one node share it (Open MPI and MPICH say how many there are).
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(var))
      if (std::atoi(v) > 1) available /= std::atoi(v);
  const double limit = number_in("/sys/fs/cgroup/memory.max");  // cgroup v2
  const double used = number_in("/sys/fs/cgroup/memory.current");
  if (limit > 0 && used >= 0) available = std::min(available, limit - used);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const double mapped = proc_kib("/proc/self/status", "VmSize");
    available = std::min(available, static_cast<double>(as.rlim_cur) - std::max(0.0, mapped));
  }
  return std::max(0.0, available);
}

void check_field_memory(const GridSpec& grid, int halo, std::size_t element_size,
                        const std::string& name, int ranks, bool simulated, double other_tiles) {
  const FieldSize f = field_size(grid, grid.tile, halo, element_size);
  if (f.largest > 4294967295.0)
    throw Error("field '" + name + "': a tile of " + extent_text(grid.tile, grid.dims) +
                " points with its ghost layers has " +
                std::to_string(static_cast<long long>(f.largest)) +
                " elements, more than a StarPU vector holds (2^32 - 1); use smaller tiles");
  if (simulated) return;
  const double data = f.data / ranks;  // the block distribution balances tiles over ranks
  const double needed = data + f.tiles * kBytesPerTile;
  // The run's other fields' bookkeeping grows as the run goes on (tasks, halo plans), which the
  // memory available now does not show yet: set aside for them.
  const double others = other_tiles * kBytesPerTile;
  const double available = std::max(0.0, available_memory_bytes() - others);
  if (needed <= available) return;
  std::string fix;
  if (data > 0.8 * available) {
    fix = "the data alone does not fit: use a smaller grid or more ranks (on more nodes)";
  } else {
    // Larger tiles until their bookkeeping fits in a quarter of what the data leaves (a
    // program has several fields): double the tile along the axis cut into the most tiles.
    Extent3 tile = grid.tile;
    FieldSize g = f;
    while (g.tiles * kBytesPerTile > 0.25 * (available - data)) {
      int axis = 0;
      double most = 0;
      for (int a = 0; a < grid.dims; ++a) {
        const double n = static_cast<double>(partition::tile_count_along(grid.extent[a], tile[a]));
        if (n > most) most = n, axis = a;
      }
      if (most <= 1) break;
      tile[axis] =
          std::min(grid.extent[axis], 2 * partition::clamped_tile(grid.extent[axis], tile[axis]));
      g = field_size(grid, tile, halo, element_size);
    }
    fix = "use larger tiles, e.g. " + extent_text(tile, grid.dims) + " (" +
          std::to_string(static_cast<long long>(g.tiles)) + " tiles)";
  }
  throw Error("field '" + name + "' on " + extent_text(grid.extent, grid.dims) +
              " points in tiles of " + extent_text(grid.tile, grid.dims) + " needs about " +
              gib(needed) + " on this rank (" + gib(data) + " of data with ghost layers, " +
              gib(f.tiles * kBytesPerTile) + " for its " +
              std::to_string(static_cast<long long>(f.tiles)) + " tiles at about " +
              std::to_string(static_cast<int>(kBytesPerTile / 1024)) + " KiB each) but " +
              gib(available) + " is available" +
              (others > 0 ? " besides the " + gib(others) + " set aside for the " +
                                std::to_string(static_cast<long long>(other_tiles)) +
                                " tiles of this run's other fields"
                          : std::string()) +
              "; " + fix);
}

namespace {
// A Function face: a function made by tessera::boundary_function, for this field's dimensions
// and element type (its call operator fixes both).
void check_boundary_function(const BoundaryFunction* fn, const GridSpec& grid, int axis, int side,
                             const char* type_name) {
  if (fn == nullptr)
    throw Error("face " + face_name(axis, side) + " is of kind Function but has no function; " +
                "make it with tessera::boundary_function(name, functor)");
  const std::string wanted = "Index<" + std::to_string(grid.dims) + "> and " + type_name;
  const std::string given = "Index<" + std::to_string(fn->dims) + "> and " +
                            (fn->type_name != nullptr ? fn->type_name : "an unsupported type");
  if (fn->dims != grid.dims || fn->type_name == nullptr || std::string(fn->type_name) != type_name)
    throw Error("boundary function '" + fn->name + "' on face " + face_name(axis, side) +
                " takes " + given + " but the field is " + std::to_string(grid.dims) + "-D of " +
                type_name +
                "; write its call operator as T operator()(tessera::Index<D>, T) const "
                "with the field's " +
                wanted);
}
}  // namespace

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
      if (f.kind == Boundary::Kind::Function)
        check_boundary_function(f.function.get(), grid, a, s, type_name);
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

void check_retile(const GridSpec& from, const GridSpec& to, const std::string& name) {
  if (from.dims != to.dims || from.extent != to.extent || from.periodic != to.periodic)
    throw Error("field '" + name + "' on " + extent_text(from.extent, from.dims) +
                " points cannot move onto a grid of " + extent_text(to.extent, to.dims) +
                " points or of other periodic axes; retile onto another tiling of the same "
                "extent and periodicity (Grid::cut, or tiles of other extents)");
}

void check_stencil_radius(const std::string& name, int radius) {
  if (radius < 1)
    throw Error("stencil '" + name + "' has radius " + std::to_string(radius) +
                "; the radius must be >= 1 (use a parallel loop for pointwise updates)");
}

std::string check_name(const char* what, const std::string& name) {
  if (name.empty())
    throw Error(std::string(what) + " name is empty; give a name such as \"heat3d\"");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw Error(std::string(what) + " name '" + name +
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
                    "' is both an input and an output; write to a second field and swap, or, if "
                    "the stencil reads it at the point only, pass it once as tessera::inout(" +
                    in->name() + ")");
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
                  axis_name(a) + " (extent " + std::to_string(grid.extent[a]) + " " +
                  axis_tiles_text(grid, a) +
                  "); every tile must be at least as thick as the "
                  "radius: choose a tile size whose last tile is >= " +
                  std::to_string(radius) + " (or cuts at least that far apart)");
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

namespace tessera::detail {

namespace {

// The first face of u or next whose ghost values a temporal block cannot keep current between
// its steps (a boundary function, or a mirror face the other field does not share): {field,
// axis * 2 + side}, or {nullptr, -1} when every face is Dirichlet, periodic or a mirror of both.
std::pair<const FieldStorage*, int> face_against_blocking(const FieldStorage& u,
                                                          const FieldStorage& next) {
  for (const FieldStorage* f : {&u, &next})
    for (int ax = 0; ax < f->grid().dims; ++ax)
      for (int s = 0; s < 2; ++s) {
        const Boundary::Kind k = f->faces().face[ax][s].kind;
        const bool mirror = k == Boundary::Kind::Neumann || k == Boundary::Kind::NeumannVertex;
        // A mirror face a block refreshes after each step, when both fields mirror alike.
        if (mirror && u.faces().face[ax][s].kind == next.faces().face[ax][s].kind) continue;
        if (k != Boundary::Kind::Dirichlet && k != Boundary::Kind::Periodic) return {f, 2 * ax + s};
      }
  return {nullptr, -1};
}

}  // namespace

void check_time_block(const std::string& name, int radius, const FieldStorage& u,
                      const FieldStorage& next, const std::vector<FieldStorage*>& extras,
                      const std::vector<FieldStorage*>& state, long steps, int depth) {
  const std::string what =
      "stencil '" + name + "' advancing " + std::to_string(depth) + " step(s) per exchange";
  if (steps < 0)
    throw Error(what + ": steps is " + std::to_string(steps) + "; give 0 or more steps");
  if (depth < 1)
    throw Error("stencil '" + name + "': temporal-blocking depth is " + std::to_string(depth) +
                "; give a depth of at least 1 (1: one exchange per step, as apply()), or "
                "tessera::kAutoDepth");
  std::vector<FieldStorage*> inputs{const_cast<FieldStorage*>(&u)};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  std::vector<FieldStorage*> outputs{const_cast<FieldStorage*>(&next)};
  outputs.insert(outputs.end(), state.begin(), state.end());
  check_stencil_fields(name, radius, inputs, outputs);
  if (depth == 1) return;  // the step-by-step loop: apply()'s rules
  if (state.size() + 1 > tasks::HaloWork::kMax)
    throw Error(what + " exchanges u and " + std::to_string(state.size()) +
                " field(s) updated in place in every block, but a block task copies the ghost "
                "layers of at most " +
                std::to_string(tasks::HaloWork::kMax) + " fields; update at most " +
                std::to_string(tasks::HaloWork::kMax - 1) +
                " fields in place, or advance with a depth of 1");
  const long width = static_cast<long>(depth) * radius;
  std::vector<const FieldStorage*> all(inputs.begin(), inputs.end());
  all.insert(all.end(), outputs.begin(), outputs.end());
  for (const FieldStorage* f : all)
    if (f->halo() < width)
      throw Error(what + " needs ghost layers of depth x radius = " + std::to_string(width) +
                  " on every field, but field '" + f->name() + "' has halo width " +
                  std::to_string(f->halo()) + "; create the fields with a halo of at least " +
                  std::to_string(width) +
                  (f->halo() >= radius
                       ? ", or lower the depth to " + std::to_string(f->halo() / radius)
                       : std::string()));
  if (const auto [f, face] = face_against_blocking(u, next); f != nullptr) {
    const int ax = face / 2, s = face % 2;
    if (f->faces().face[ax][s].kind == Boundary::Kind::Function)
      throw Error(what + ": field '" + f->name() + "' has a boundary-function face at " +
                  face_name(ax, s) +
                  ", whose ghost values the block cannot recompute between its steps; temporal "
                  "blocking needs Dirichlet, periodic or Neumann faces: use apply() step by step "
                  "(or a depth of 1)");
    throw Error(what + ": field '" + u.name() + "' and field '" + next.name() +
                "' have different kinds of face at " + face_name(ax, s) +
                "; a block mirrors a Neumann face only where u and next both have it: give them "
                "the same boundary conditions");
  }
  for (int ax = 0; ax < u.grid().dims; ++ax) {
    const std::int64_t thinnest = u.thinnest_tile(ax);
    if (thinnest < width)
      throw Error(what + " reads ghost layers depth x radius = " + std::to_string(width) +
                  " deep, but a tile is only " + std::to_string(thinnest) +
                  " point(s) thick along " + axis_name(ax) + " (extent " +
                  std::to_string(u.grid().extent[ax]) + " " + axis_tiles_text(u.grid(), ax) +
                  "); choose tiles (the last one included) at least " + std::to_string(width) +
                  " thick, or lower the depth to " + std::to_string(thinnest / radius));
  }
}

}  // namespace tessera::detail

namespace tessera::detail {

namespace {
// The points of a tile of `grid` on average (the grid's over its tile count).
double mean_tile_points(const GridSpec& grid) {
  double points = 1, tiles = 1;
  for (int ax = 0; ax < grid.dims; ++ax) {
    points *= static_cast<double>(grid.extent[ax]);
    tiles *= static_cast<double>(
        partition::tile_count_along(grid.extent[ax], grid.tile[ax], grid.cuts[ax]));
  }
  return points / tiles;
}

// block_costs' state for the Runtime's life: the models' seconds per point, by stencil and
// tile points (0: no model on some rank).
struct ModelPointSeconds {
  std::map<std::string, double> by_key;
};
}  // namespace

BlockCosts block_costs(const std::string& stencil, const GridSpec& grid) {
  BlockCosts costs{partition::kCpuPointSeconds, partition::kTaskSeconds};
  Context* rt = live_context_or_null();
  if (rt == nullptr || rt->engine == nullptr) return costs;
  const double tile_points = mean_tile_points(grid);
  // Read once per stencil and tile size (advance() with kAutoDepth may run a step at a time);
  // every rank asks the same questions in the same order, so the collectives match.
  const std::string key = stencil + "@" + std::to_string(std::llround(tile_points));
  std::map<std::string, double>& point_seconds = rt->state<ModelPointSeconds>().by_key;
  auto known = point_seconds.find(key);
  if (known == point_seconds.end()) {
    const tasks::PointCost mine = tasks::model_point_cost(stencil, tile_points);
    // The models' choice only where every rank's models have one.
    known = point_seconds.emplace(key, comm::mean_over_ranks({mine.seconds}, true)[0]).first;
  }
  if (known->second > 0) costs.point_seconds = known->second;
  return costs;
}

int deepest_block_for_tiles(int radius, const GridSpec& grid, int most, const BlockCosts& costs) {
  long width = static_cast<long>(most) * radius;
  std::int64_t thinnest[3] = {1, 1, 1};
  for (int ax = 0; ax < grid.dims; ++ax) {
    thinnest[ax] = partition::thinnest_tile(grid.extent[ax], grid.tile[ax], grid.cuts[ax]);
    width = std::min<long>(width, thinnest[ax]);
  }
  // The recomputed ghost points: step j of a block widens its window by (depth - 1 - j) radius
  // on both sides of every axis with a neighbour tile, about (depth - 1) radius / thickness more
  // points per such axis. Thin tiles (64^3 in slabs of 8: 3/8 more at depth 4) lose more to it
  // than the exchanges saved bring; keep it to an eighth (the redundant-work limit).
  // A tile across a whole periodic x axis recomputes nothing along x: a block on a CPU worker
  // copies the wrapped columns after each step (TimeBlock::each_wrapped_x_box).
  const bool x_by_copy = grid.periodic[0] && partition::tile_count_along(
                                                 grid.extent[0], grid.tile[0], grid.cuts[0]) == 1;
  auto recomputed = [&](int d) {
    double more = 0;
    for (int ax = x_by_copy ? 1 : 0; ax < grid.dims; ++ax)
      if (grid.periodic[ax] || grid.tile[ax] < grid.extent[ax])
        more += static_cast<double>((d - 1) * radius) / static_cast<double>(thinnest[ax]);
    return more;
  };
  int limit = std::max(1, static_cast<int>(width / radius));
  // A GPU part streamed through the GPUs' memory: the planner's depth, priced with the bus (each
  // step of a visit saves a crossing), within what the tiles allow.
  if (grid.stream_depth > 0) return std::min(limit, grid.stream_depth);
  while (limit > 1 && recomputed(limit) > kRedundantWorkLimit) --limit;
  // Up to kMaxAutoDepth, the deepest: a deeper block also brings each plane from memory fewer
  // times, which the per-point cost below does not see.
  const int base = std::min(limit, kMaxAutoDepth);
  if (costs.point_seconds <= 0 || costs.block_seconds <= 0 || limit <= base) return base;
  // Deeper only where the per-block cost dominates: a step of a tile then costs its points
  // (and those recomputed) plus 1/depth of a block task's own cost; the depth with the
  // shortest step, if it is shorter than the base depth's by more than kDeeperGain.
  const double tile_points = mean_tile_points(grid);
  auto step = [&](int d) {
    return tile_points * costs.point_seconds * (1 + recomputed(d)) + costs.block_seconds / d;
  };
  int best = base;
  for (int d = base + 1; d <= limit; ++d)
    if (step(d) < step(best)) best = d;
  return step(best) < (1 - kDeeperGain) * step(base) ? best : base;
}

int deepest_time_block(int radius, const FieldStorage& u, const FieldStorage& next,
                       const std::vector<FieldStorage*>& extras,
                       const std::vector<FieldStorage*>& state, int most, const BlockCosts& costs) {
  std::vector<const FieldStorage*> all{&u, &next};
  all.insert(all.end(), extras.begin(), extras.end());
  all.insert(all.end(), state.begin(), state.end());
  if (state.size() + 1 > tasks::HaloWork::kMax) return 1;  // more than a block task exchanges
  for (const FieldStorage* f : all)
    if (!(f->grid() == u.grid())) return 1;  // advance()'s checks will say why
  if (face_against_blocking(u, next).first != nullptr) return 1;
  int deepest = most;
  for (const FieldStorage* f : all) deepest = std::min(deepest, f->halo() / radius);
  return deepest_block_for_tiles(radius, u.grid(), std::max(1, deepest), costs);
}

}  // namespace tessera::detail
