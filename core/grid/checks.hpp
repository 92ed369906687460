// Validation of user input that the library does before submitting anything: each check
// throws tessera::Error with a message that names the value, the rule and the fix.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/detail/field_storage.hpp"
#include "tessera/detail/memory.hpp"  // available_memory_bytes, defined in checks.cpp

namespace tessera::detail {

std::string face_name(int axis, int side);
/// A field's element type (null: unsupported) and halo width.
/// With CUDA workers whose memory the planner knows, for a new field of `element_size` bytes
/// with `halo` ghost layers named `name` on `grid`: throws, before any task, where the fields
/// on the grid would not fit a GPU as the tiles placed there need them: on a grid streamed
/// through the GPUs' memory (GridSpec::stream_depth), more bytes a point than the planner sized
/// its slabs for (GridSpec::point_bytes, the Grid's PointData); on any other, the largest tile on a
/// GPU, with its ghost layers, of the new field and of the largest other one together beyond what
/// StarPU may use of the GPU's memory (a step reads one field and writes another: such a step
/// could never be brought there, and StarPU would wait for memory forever).
void check_gpu_fields(const Context& rt, const GridSpec& grid, int halo, std::size_t element_size,
                      const std::string& name);
void check_field(int halo, std::size_t element_size, const char* type_name,
                 const std::string& name);
/// Whether a field of `element_size`-byte elements with `halo` ghost layers on `grid` fits: each
/// tile's buffer within what a StarPU vector holds (2^32 - 1 elements), and this rank's share
/// of the data plus the bookkeeping of every tile (every rank registers every tile) within the
/// memory available to this process. The message names a tile size that fits.
/// `simulated`: host memory is folded (tasks/data.hpp), only the tile size limit applies.
/// `other_tiles`: the tiles of the run's other live fields, whose bookkeeping is set aside.
void check_field_memory(const GridSpec& grid, int halo, std::size_t element_size,
                        const std::string& name, int ranks, bool simulated = false,
                        double other_tiles = 0);
/// The boundaries of a field on `grid`, with defaulted faces resolved (periodic axes become
/// Periodic); checks that periodic faces match periodic axes and that Dirichlet values are
/// exact in the element type.
FaceSpecs checked_faces(const GridSpec& grid, FaceSpecs faces, const char* type_name);
/// The fields of one stencil application: one grid, halos at least the radius (but for
/// centre-only inputs), no field both read and written or written twice, tiles at least as
/// thick as the radius.
void check_stencil_fields(const std::string& stencil, int radius,
                          const std::vector<FieldStorage*>& inputs,
                          const std::vector<FieldStorage*>& outputs,
                          const std::vector<bool>& centre_only = {});
/// Inputs with a NeumannVertex face: tiles at least radius + 1 thick along that axis.
void check_vertex_mirror(const std::string& stencil, int radius,
                         const std::vector<FieldStorage*>& inputs,
                         const std::vector<bool>& centre_only);
/// A global point of a field's grid: inside the extent.
void check_point(const GridSpec& grid, const Extent3& p);
/// "double-float": the element types of `fields`, for codelet symbols.
std::string type_names(const std::vector<FieldStorage*>& fields);

}  // namespace tessera::detail
