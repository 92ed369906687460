// Field output for ParaView (include/tessera/output.hpp): one task per tile reads the tile and
// writes its VTK piece on the tile's owner; rank 0 writes the parallel index once every piece
// of the snapshot is on disk.
#include "tessera/output.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <deque>
#include <exception>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/grid/checks.hpp"
#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "core/runtime/files.hpp"
#include "core/io/tile_files.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

// VTK's name of each element type Field supports (FieldStorage::type_name()).
const char* vtk_type(const std::string& element) {
  if (element == "double") return "Float64";
  if (element == "float") return "Float32";
  if (element == "int32") return "Int32";
  if (element == "uint8") return "UInt8";
  return nullptr;
}

bool little_endian() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// VTK extents count points; a grid point is a cell, so a tile's cells [o, o + e) span the points
// o .. o + e. Axes beyond the grid's dimensions are flat ("0 0").
std::string extent_text(const Extent3& origin, const Extent3& extent, int dims) {
  std::ostringstream s;
  for (int a = 0; a < 3; ++a) {
    if (a > 0) s << ' ';
    if (a < dims)
      s << origin[a] << ' ' << origin[a] + extent[a];
    else
      s << "0 0";
  }
  return s.str();
}

std::string file_header(const char* type) {
  return std::string("<?xml version=\"1.0\"?>\n<VTKFile type=\"") + type +
         "\" version=\"1.0\" byte_order=\"" + (little_endian() ? "LittleEndian" : "BigEndian") +
         "\" header_type=\"UInt64\">\n";
}

std::string padded(long step) {
  char text[32];
  std::snprintf(text, sizeof(text), "%08ld", step);
  return text;
}

}  // namespace

struct Snapshot {
  std::string index_path, index;  // the .pvti and its content (rank 0)
  std::deque<TileFile> pieces;    // stable addresses: tasks point at them
};

struct OutputState {
  std::string directory;
  Context* context = nullptr;
  int uncaught = 0;  // exceptions in flight when the Output was made
  std::deque<Snapshot> pending;
};

namespace {

// The task's argument: the file it writes (same process: the owner submitted it).
struct TileFileArg {
  TileFile* file;
};

// Buffer 0: the tile (read), buffer 1: the file's `done` byte (written).
void write_tile_file(void** buffers, void* arg) {
  TileFile& f = *static_cast<TileFileArg*>(arg)->file;
  const TileGeometry& g = f.geometry;
  const auto* tile = static_cast<const unsigned char*>(buffer_data(buffers, 0));
  const std::uint64_t row = static_cast<std::uint64_t>(g.extent[0]) * f.element_size;
  std::string out = f.header;
  out.reserve(out.size() + row * static_cast<std::uint64_t>(g.extent[1] * g.extent[2]) +
              f.footer.size());
  const std::size_t first_value = out.size();
  for (std::int64_t z = 0; z < g.extent[2]; ++z)
    for (std::int64_t y = 0; y < g.extent[1]; ++y) {
      const std::int64_t first = g.offset0 + y * g.stride_y + z * g.stride_z;
      out.append(
          reinterpret_cast<const char*>(tile + first * static_cast<std::int64_t>(f.element_size)),
          row);
    }
  f.bytes = out.size() - first_value;
  f.checksum = fnv1a(out.data() + first_value, f.bytes);
  out += f.footer;
  try {
    files::write_atomically(f.path, out, "tile file", "--output-dir");
  } catch (const std::exception& e) {
    f.error = e.what();  // reported on every rank by wait_tile_files
  }
}

// Waits for the snapshot's pieces, then rank 0 writes the index, so that an index only ever
// names pieces that are on disk.
void complete(Snapshot& s, Context& c) {
  wait_tile_files(s.pieces, c);
  comm::agree([&] {
    if (c.rank == 0) files::write_atomically(s.index_path, s.index, "output index", "--output-dir");
  });
}

void complete_all(OutputState& s) {
  while (!s.pending.empty()) {
    Snapshot& snap = s.pending.front();
    try {
      complete(snap, *s.context);
    } catch (...) {
      s.pending.pop_front();
      throw;
    }
    s.pending.pop_front();
  }
}

}  // namespace

void check_file_name(const std::string& name) {
  bool ok = !name.empty() && name[0] != '.';
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.');
  if (!ok)
    throw Error("field name '" + name +
                "' cannot name an output file; give the field a name of "
                "letters, digits, '_', '-' and '.' (not starting with '.') to write it");
}

std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

void submit_tile_file(FieldStorage& f, int t, TileFile& file, long step, const char* what) {
  tasks::Engine& engine = *f.context().engine;
  // Untimed: writing is I/O, which no performance model should learn.
  const TaskKind kind{what, Access::Read, Access::Write, &write_tile_file, nullptr, true};
  tasks::Codelet& codelet = engine.codelets().get("io", type_names({&f}), kind);
  file.geometry = f.geometry(t);
  file.element_size = f.element_size();
  file.mine = f.mine(t);
  const int owner = f.owner(t);
  file.done = engine.data().register_vector(file.mine ? &file.done_byte : nullptr, 1, 1, owner);
  auto* arg = static_cast<TileFileArg*>(std::malloc(sizeof(TileFileArg)));  // freed by the engine
  arg->file = &file;
  tasks::TaskTag tag;
  tag.field = f.impl().tag_name;
  tag.tile = t;
  tag.step = step;
  tag.rank = owner;
  engine.submitter().submit(codelet, {f.impl().tile(t).handle}, {file.done}, arg,
                            sizeof(TileFileArg), true, tag, {});
}

void wait_tile_files(std::deque<TileFile>& files, Context& c) {
  tasks::DataRegistry& data = c.engine->data();
  for (TileFile& f : files)
    if (f.done != nullptr) {
      data.unregister(f.done);  // waits for the file's task
      f.done = nullptr;
    }
  comm::agree([&] {
    for (const TileFile& f : files)
      if (f.mine && !f.error.empty()) {
        const std::string prefix = "tessera: ";
        const std::string m = f.error.compare(0, prefix.size(), prefix) == 0
                                  ? f.error.substr(prefix.size())
                                  : f.error;
        throw Error("writing " + f.path + ": " + m);
      }
  });
}

void submit_output(OutputState& s, FieldStorage& f, long step, const std::string& name) {
  Context& c = f.context();
  if (&c != s.context)
    throw Error("field '" + f.name() +
                "' belongs to another Runtime than its tessera::Output; "
                "create the Output after the Runtime, for the fields of that Runtime");
  if (step < 0)
    throw Error("output step " + std::to_string(step) +
                " is negative; give the step number (>= 0)");
  check_file_name(name);
  const char* type = vtk_type(f.type_name());
  if (type == nullptr)
    throw Error("field '" + f.name() + "' has elements of type " + f.type_name() +
                ", which VTK output does not support");
  complete_all(s);  // the earlier snapshots' pieces ran long ago: their indexes now

  const GridSpec& grid = f.grid();
  const Extent3 zero{0, 0, 0};
  const std::string whole = extent_text(zero, grid.extent, grid.dims);
  const std::string base = name + "_" + padded(step);
  const std::string array = "<DataArray type=\"" + std::string(type) + "\" Name=\"" + name +
                            "\" format=\"appended\" offset=\"0\"/>\n";
  Snapshot& snap = s.pending.emplace_back();
  snap.index_path = s.directory + "/" + base + ".pvti";
  std::ostringstream index;
  index << file_header("PImageData") << "<PImageData WholeExtent=\"" << whole
        << "\" GhostLevel=\"0\" Origin=\"0 0 0\" Spacing=\"1 1 1\">\n<PCellData Scalars=\"" << name
        << "\">\n<PDataArray type=\"" << type << "\" Name=\"" << name << "\"/>\n</PCellData>\n";

  for (int t = 0; t < f.tiles(); ++t) {
    TileFile& p = snap.pieces.emplace_back();
    const TileGeometry g = f.geometry(t);
    const std::string file = base + "_" + std::to_string(t) + ".vti";
    p.path = s.directory + "/" + file;
    const std::string extent = extent_text(g.origin, g.extent, grid.dims);
    index << "<Piece Extent=\"" << extent << "\" Source=\"" << file << "\"/>\n";
    if (f.mine(t)) {
      p.header = file_header("ImageData") + "<ImageData WholeExtent=\"" + whole +
                 "\" Origin=\"0 0 0\" Spacing=\"1 1 1\">\n<Piece Extent=\"" + extent +
                 "\">\n<CellData Scalars=\"" + name + "\">\n" + array +
                 "</CellData>\n</Piece>\n</ImageData>\n<AppendedData encoding=\"raw\">\n_";
      // The appended block's UInt64 size, then the values.
      const std::uint64_t bytes =
          static_cast<std::uint64_t>(g.extent[0] * g.extent[1] * g.extent[2]) * f.element_size();
      p.header.append(reinterpret_cast<const char*>(&bytes), sizeof(bytes));
      p.footer = "\n</AppendedData>\n</VTKFile>\n";
    }
    submit_tile_file(f, t, p, step, "vtk-piece");
  }
  index << "</PImageData>\n</VTKFile>\n";
  snap.index = index.str();
}

// Every rank writes its tiles into `dir` and rank 0 the index naming them all: ranks that see
// different folders there (separate file systems, or separate working directories for a
// relative path) would leave an index of missing files. Rank 0 leaves a file there; the others
// must see it. Collective.
void require_shared_directory(const Context& c, const std::string& dir) {
  if (c.ranks == 1) return;
  std::uint64_t token =
      (static_cast<std::uint64_t>(getpid()) << 32) ^
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  comm::broadcast(&token, sizeof(token), 0);
  const std::string probe = dir + "/.tessera-ranks-see-" + std::to_string(token);
  comm::agree([&] {
    if (c.rank == 0 && !std::ofstream(probe))
      throw Error("cannot write in the output directory " + dir);
  });
  comm::agree([&] {
    std::error_code ec;
    if (c.rank != 0 && !std::filesystem::exists(probe, ec))
      throw Error("the output directory " + dir +
                  " is not the one rank 0 writes in: every rank "
                  "writes its tiles there and rank 0 the index naming them, so the ranks must "
                  "share its file system (and, for a relative --output-dir, start in the same "
                  "working directory); give an --output-dir on a file system every rank shares");
  });
  if (c.rank == 0) std::remove(probe.c_str());
}

}  // namespace tessera::detail

namespace tessera {

Output::Output(std::string directory) : state_(std::make_unique<detail::OutputState>()) {
  state_->context = &detail::live_context("tessera::Output");
  detail::refuse_in_simulation(*state_->context, "tessera::Output (--output-every)");
  state_->uncaught = std::uncaught_exceptions();
  if (directory.empty()) directory = ".";
  detail::comm::agree([&] { detail::files::check_directory(directory, "the output directory"); });
  detail::require_shared_directory(*state_->context, directory);
  state_->directory = std::move(directory);
}

Output::~Output() {
  // Leaving on an error, or after the Runtime: no collective, no waiting (the Runtime's end
  // waits for the tasks); the pending snapshots have no index.
  if (std::uncaught_exceptions() > state_->uncaught) return;
  try {
    if (&detail::live_context("tessera::Output") != state_->context) return;
    finish();
  } catch (const std::exception& e) { std::cerr << e.what() << std::endl; }
}

void Output::finish() { detail::complete_all(*state_); }

const std::string& Output::directory() const { return state_->directory; }

}  // namespace tessera
