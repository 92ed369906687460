#include "core/runtime/recording.hpp"

#include <algorithm>
#include <sstream>

#include "core/runtime/comm.hpp"
#include "core/runtime/files.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"
#include "trace/encoding.hpp"

namespace tessera::detail {

Recording::Recording(std::string json_path, std::string html_path)
    : json_path_(std::move(json_path)), html_path_(std::move(html_path)) {
  if (!json_path_.empty() && !html_path_.empty() && files::same_file(json_path_, html_path_))
    throw Error("--trace and --report both name '" + json_path_ +
                "'; the report would overwrite the trace: give them different files");
  // Checked without touching the files: an existing trace stays as it is until the new one is
  // complete (files::write_atomically).
  if (!json_path_.empty()) files::check_writable(json_path_, "--trace");
  if (!html_path_.empty()) files::check_writable(html_path_, "--report");
}

std::vector<trace::RankTrace> Recording::gather(const trace::RankTrace& mine) {
  if (comm::ranks() == 1) return {mine};
  if (comm::smpi_simulated()) return {mine};  // no MPI from the program: this rank's record
  std::string bytes;
  trace::encode(mine, bytes);
  const std::vector<unsigned char> all = comm::all_gather(bytes.data(), bytes.size());
  return trace::decode(all.data(), all.size());
}

void Recording::write(const std::vector<trace::RankTrace>& ranks, const std::string& title) const {
  if (!json_path_.empty()) {
    std::ostringstream out;
    trace::write_chrome_json(ranks, out);
    files::write_atomically(json_path_, out.str(), "--trace file", "--trace");
  }
  if (!html_path_.empty()) {
    std::ostringstream out;
    std::vector<trace::TileMap> maps;
    for (const auto& [name, map] : maps_) maps.push_back(map);
    std::vector<trace::PartitionMap> meshes;
    for (const auto& [mesh, map] : meshes_)
      if (!map.tile.empty()) meshes.push_back(map);
    trace::write_html_report(ranks, title, out, maps, meshes);
    files::write_atomically(html_path_, out.str(), "--report file", "--report");
  }
}

void Recording::map_tiles(const char* stencil, const FieldStorage& field) {
  if (!mapped_.insert(stencil).second || maps_.count(stencil)) return;
  trace::TileMap& m = maps_[stencil];
  m.stencil = stencil;
  m.dims = field.grid().dims;
  for (int a = 0; a < 3; ++a) m.extent[a] = field.grid().extent[a];
  for (int t = 0; t < field.tiles(); ++t) {
    const TileGeometry g = field.geometry(t);
    trace::TileMap::Box& b = m.tiles.emplace_back();
    for (int a = 0; a < 3; ++a) {
      b.origin[a] = g.origin[a];
      b.extent[a] = g.extent[a];
    }
    b.rank = field.owner(t);
  }
}

void Recording::map_partitions(const void* mesh, trace::PartitionMap map) {
  trace::PartitionMap& m = meshes_[mesh];
  map.loops = std::move(m.loops);
  m = std::move(map);
}

void Recording::map_loop(const void* mesh, const std::string& loop) {
  std::vector<std::string>& loops = meshes_[mesh].loops;
  if (std::find(loops.begin(), loops.end(), loop) == loops.end()) loops.push_back(loop);
}

}  // namespace tessera::detail
