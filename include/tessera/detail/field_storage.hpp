// Type-erased storage of a field: the tiles (interior plus ghost layers) of one field, each a
// runtime data handle, and the halo buffers of each stencil shape used on it. Field<T, D> is a
// typed view of this; the library (core/grid/field.cpp) implements it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/boundary.hpp"
#include "tessera/detail/device_class.hpp"
#include "tessera/index.hpp"

namespace tessera::detail {

struct Context;
struct HaloSet;  // the halo buffers and plans of one (width, shape) (core/grid/field_impl.hpp)

/// A grid as the library takes it (tessera::Grid): `tile` the largest tile per axis, `cuts`
/// the cut positions of the axes not cut uniformly in tiles of `tile` (empty on the others),
/// and a split between CUDA and CPU workers (`split_axis` -1: none; Grid::split). `chosen`:
/// the library chose the tiles (Grid::chosen; not part of what makes two tilings the same).
struct GridSpec {
  int dims = 3;
  Extent3 extent{1, 1, 1}, tile{1, 1, 1};
  std::array<std::vector<std::int64_t>, 3> cuts;
  std::array<bool, 3> periodic{};
  int split_axis = -1;
  std::int64_t split = -1;
  int stream_depth = 0;  // Grid::stream_depth
  // What a point of its fields was planned to hold, and of the stencil's field (PointData).
  std::size_t point_bytes = 24, field_bytes = 8;
  bool chosen = false;
  bool operator==(const GridSpec& o) const {
    return dims == o.dims && extent == o.extent && tile == o.tile && cuts == o.cuts &&
           periodic == o.periodic && split_axis == o.split_axis && split == o.split;
  }
};

/// One face's boundary condition as a field of element type T sees it.
struct FaceSpec {
  Boundary::Kind kind = Boundary::Kind::Dirichlet;
  double value = 0;                                  // the Dirichlet value as given
  std::uint64_t constant_bits = 0;                   // that value converted to T, as T's bytes
  bool exact = true;                                 // whether T holds the value exactly
  std::shared_ptr<const BoundaryFunction> function;  // Function faces: the user's function
};
struct FaceSpecs {
  std::array<std::array<FaceSpec, 2>, 3> face{};  // [axis][0 low, 1 high]
  bool defaulted = true;  // Boundaries never set: periodic axes become Periodic
};

struct TileGeometry {
  Extent3 origin, extent;
  std::int64_t offset0;  // element offset of interior point (0, 0, 0)
  std::int64_t stride_y, stride_z;
};

class FieldStorage {
 public:
  /// Checks the element type (`type_name` null: unsupported), the halo and the boundaries,
  /// then allocates and registers this rank's tiles with the live runtime.
  FieldStorage(const GridSpec& grid, int halo, const FaceSpecs& faces, std::size_t element_size,
               const char* type_name, std::string name);
  ~FieldStorage();
  FieldStorage(const FieldStorage&) = delete;
  FieldStorage& operator=(const FieldStorage&) = delete;

  const GridSpec& grid() const { return grid_; }
  int halo() const { return halo_; }
  const std::string& name() const { return name_; }
  const std::string& type_name() const { return type_; }
  std::size_t element_size() const { return element_size_; }
  /// The boundary conditions, defaulted faces resolved.
  const FaceSpecs& faces() const { return faces_; }
  /// The runtime this field was created in (throws once it has ended).
  Context& context() const;
  int tiles() const;
  TileGeometry geometry(int tile) const;
  /// The tile holding global point `p` (inside the extent; unused axes 0).
  int tile_at(const Extent3& p) const;
  /// Smallest tile extent along `axis` (the last tile when the tile size does not divide).
  std::int64_t thinnest_tile(int axis) const;
  /// Where `tile`'s tasks run: any worker, CPU workers only, or CUDA workers only (the grid's
  /// split, Grid::split; CPU too for tiles the library chose without CUDA workers), on one
  /// worker of that class per tile.
  DeviceClass device_class(int tile) const;
  /// The bytes of `tile`'s buffer on this rank (0: another rank's tile): its layout's, or, for
  /// the tiles a GPU streams, the largest of theirs (one size: StarPU then reuses a leaving
  /// slab's device buffer for the next visit).
  std::size_t tile_bytes(int tile) const;

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
  /// The element at global point `p` (checked against the extent), on every rank (the owner
  /// broadcasts it). Collective.
  void read_point(const Extent3& p, void* out) const;
  /// `per_tile[t]` as computed by tile t's owner, on every rank. Collective.
  /// `width` values per tile (per_tile[t * width + k]).
  std::vector<double> from_owners(const std::vector<double>& per_tile, int width = 1) const;

  /// Submits halo-pack and boundary tasks so every tile's ghost layers hold `width` layers
  /// for a stencil of that shape; skipped when nothing was written since the last exchange.
  void exchange(const std::string& stencil, int width, bool box);
  /// Submits, once per (width, shape), the tasks that write the constant (Dirichlet) ghost
  /// regions of `width` layers; exchange() does it first. For a field that is written before
  /// it is ever exchanged but read at its faces (the second field of a temporal block).
  void fill_constant_ghosts(const std::string& stencil, int width, bool box);
  /// Records that tasks were submitted that write the tiles (ghost layers now stale).
  void written() { ++version_; }

  /// The exchange of exchange() with its boundary copies left to the tasks that read the
  /// tiles next (Options::fused_exchange): submits the halo-pack tasks the face buffers still
  /// need and returns the halo set whose plans[t].ghosts the reader of tile t copies in from
  /// sources[t] before its kernel (tasks::HaloWork). Null when there is nothing to copy
  /// (nothing written since the last exchange) or exchange() did all of it (fused exchanges
  /// off, or boundary functions, which run as tasks after the copies).
  /// `packs_ahead`: the caller packs ahead (pack_ahead) the faces the last call packed so;
  /// anything else packs them again first.
  HaloSet* exchange_in_tasks(const std::string& stencil, int width, bool box,
                             bool packs_ahead = false);
  /// The halo set whose face buffers a task writing this field packs after its kernel: the
  /// one exchanged last (null: none yet, or fused exchanges off).
  HaloSet* pack_target();
  /// written(), by tasks that also packed `packed` (null: none): its face buffers hold the
  /// new values, so the next exchange needs no halo-pack tasks.
  void written(HaloSet* packed);
  /// For tasks that fill the ghost layers of `set` (from exchange_in_tasks) and pack the
  /// field's new faces in the same call: makes the set's spare face buffers, for them to pack
  /// into (HaloCopies::spare). Returns `set`, or null with fused exchanges off.
  HaloSet* pack_spare(HaloSet* set);
  /// written(), by tasks that packed `set`'s spare face buffers: they become its face buffers.
  void written_spare(HaloSet* set);
  /// Counts the face buffers this rank's tasks receive from other ranks for `set`, once
  /// the tasks that read them are submitted (exchange() does it itself).
  void count_received(const HaloSet& set);

  /// Host access to one tile this rank owns (waits for the tasks that write it). To write, also
  /// a tile whose values a streamed time block dropped (after_visit): the caller writes every
  /// point, and the constant ghost layers are written again before they are read.
  void* acquire(int tile, bool write);
  /// A simulated run (Runtime::simulated): tiles hold no values, host access is skipped.
  bool simulated() const;
  void release(int tile);

  /// Moves the field onto another tiling of its grid (`grid`: the same dimensions, extent and
  /// periodicity): waits for the tasks that write it, gathers every value on every rank,
  /// unregisters the old tiles (and face buffers) and registers the new ones, owned by the new
  /// distribution, and copies the values in. No value changes; the halo plans are made again
  /// by the next exchange. Collective.
  void retile(const GridSpec& grid);

  /// Unregisters every handle and frees the tiles (at destruction, or by a Runtime shutting
  /// down before this field is destroyed). The field is unusable afterwards.
  void release_handles();
  void retile_in_place(const GridSpec& grid);  // retile() on one rank

  struct Impl;  // tiling, distribution, handles, halo buffers (core/grid/field_impl.hpp)
  Impl& impl() const { return *impl_; }

 private:
  // The tiling, distribution, memory and handles of grid_; with `reuse` (the old tiles of a
  // retile), a new tile of the same box as an old one takes its memory and handle over.
  void build(Context& rt, Impl* reuse = nullptr);
  Context* context_;
  GridSpec grid_;
  int halo_;
  std::size_t element_size_;
  std::string type_, name_;
  FaceSpecs faces_;
  std::unique_ptr<Impl> impl_;
  long version_ = 0;
};

/// Throws unless `a` and `b` are on the same grid (Field::swap).
void check_swap(const FieldStorage& a, const FieldStorage& b);
/// Throws unless `to` is a tiling of the grid of `from` (Field::retile).
void check_retile(const GridSpec& from, const GridSpec& to, const std::string& name);

}  // namespace tessera::detail
