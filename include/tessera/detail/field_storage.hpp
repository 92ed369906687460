// Type-erased storage of a field: one StarPU handle per tile (interior plus ghost layers) and
// the halo buffers of each stencil shape used on it. Field<T, D> is a typed view of this.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/detail/task.hpp"

namespace tessera::detail {

using Extent3 = std::array<std::int64_t, 3>;

struct GridSpec {
  int dims = 3;
  Extent3 extent{1, 1, 1}, tile{1, 1, 1};
  std::array<bool, 3> periodic{};
  bool operator==(const GridSpec& o) const {
    return dims == o.dims && extent == o.extent && tile == o.tile && periodic == o.periodic;
  }
};

// Per face: 0 Dirichlet, 1 Neumann, 2 Periodic; `constant` is the Dirichlet value's bytes.
struct FaceSpec {
  int kind = 0;
  std::uint64_t constant_bits = 0;
};

struct TileGeometry {
  Extent3 origin, extent;
  std::int64_t offset0;         // element offset of interior point (0, 0, 0)
  std::int64_t stride_y, stride_z;
};

struct HaloSet;

class FieldStorage {
 public:
  FieldStorage(const GridSpec& grid, int halo, const std::array<std::array<FaceSpec, 2>, 3>& faces,
               std::size_t element_size, std::string type_name, std::string name);
  ~FieldStorage();
  FieldStorage(const FieldStorage&) = delete;
  FieldStorage& operator=(const FieldStorage&) = delete;

  const GridSpec& grid() const { return grid_; }
  int halo() const { return halo_; }
  const std::string& name() const { return name_; }
  const std::string& type_name() const { return type_; }
  int tiles() const;
  TileGeometry geometry(int tile) const;
  /// The tile holding global point `p` (inside the extent; unused axes 0).
  int tile_at(const Extent3& p) const;
  /// Smallest tile extent along `axis` (the last tile when the tile size does not divide).
  std::int64_t thinnest_tile(int axis) const;
  Handle handle(int tile) const { return handles_[static_cast<std::size_t>(tile)]; }

  /// The rank that owns (stores, computes) `tile`, and whether that is this rank.
  int owner(int tile) const;
  bool mine(int tile) const;
  /// Whether a neighbour of `tile` (any of the 26 directions) belongs to another rank: its
  /// tasks get a higher priority so that its faces leave early.
  bool on_rank_edge(int tile) const;
  /// Ranks per axis of the distribution.
  const std::array<int, 3>& rank_grid() const;
  /// The interior of every tile, in global order (x fastest), on every rank. Collective.
  void gather(void* out) const;
  /// The element at global point `p`, on every rank (the owner broadcasts it). Collective.
  void read_point(const Extent3& p, void* out) const;
  /// `per_tile[t]` as computed by tile t's owner, on every rank. Collective.
  std::vector<double> from_owners(const std::vector<double>& per_tile) const;

  /// Submits halo-pack and boundary tasks so every tile's ghost layers hold `width` layers
  /// for a stencil of that shape; skipped when nothing was written since the last exchange.
  void exchange(const std::string& stencil, int width, bool box);
  /// Records that tasks were submitted that write the tiles (ghost layers now stale).
  void written() { ++version_; }

  /// Host access to one tile this rank owns (waits for the tasks that write it).
  void* acquire(int tile, bool write);
  void release(int tile);

  /// Unregisters every handle and frees the tiles (at destruction, or by a Runtime shutting
  /// down before this field is destroyed). The field is unusable afterwards.
  void release_handles();

 private:
  GridSpec grid_;
  int halo_;
  std::size_t element_size_;
  std::string type_, name_;
  std::array<std::array<FaceSpec, 2>, 3> faces_;
  struct Impl;
  void count_received(const HaloSet& set);
  std::unique_ptr<Impl> impl_;
  std::vector<Handle> handles_;
  std::vector<void*> memory_;
  long version_ = 0;
};

}  // namespace tessera::detail
