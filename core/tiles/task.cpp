// User tasks on tiles (include/tessera/task.hpp): checks, the buffers of one task (each tile
// once, read tiles first), the slots that tell the body where each tile is, submission.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/grid/checks.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "tessera/error.hpp"
#include "tessera/stencil.hpp"
#include "tessera/task.hpp"

namespace tessera {

// A sense-reversing barrier on two words of the task's argument block, which every member of
// the team sees at the same address: [0] members arrived, [1] the generation. The last to
// arrive resets the count and starts the next generation; the others spin (the team's workers
// have nothing else to run meanwhile).
void Team::sync() const {
  if (size <= 1) return;
  const int generation = __atomic_load_n(&barrier[1], __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&barrier[0], 1, __ATOMIC_ACQ_REL) == size) {
    __atomic_store_n(&barrier[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&barrier[1], generation + 1, __ATOMIC_RELEASE);
    return;
  }
  while (__atomic_load_n(&barrier[1], __ATOMIC_ACQUIRE) == generation) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace tessera

namespace tessera::detail {

namespace {

const char* mode_name(Mode m) {
  return m == Mode::Read ? "read_tile" : (m == Mode::Write ? "write_tile" : "update_tile");
}

std::string tile_text(const TileRef& r) {
  return "tile " + std::to_string(r.tile) + " of field '" + r.field->name() + "'";
}

void check_tile(const std::string& task, const FieldStorage& f, int t) {
  if (t < 0 || t >= f.tiles())
    throw Error("task '" + task + "': tile " + std::to_string(t) + " of field '" + f.name() +
                "' does not exist (the field has tiles 0 to " + std::to_string(f.tiles() - 1) +
                "); give a tile number below Grid::tiles()");
}

void check_task(const std::string& name, const std::vector<TileRef>& tiles) {
  const TileRef* written = nullptr;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const TileRef& r = tiles[i];
    check_tile(name, *r.field, r.tile);
    if (&r.field->context() != &tiles.front().field->context())
      throw Error("task '" + name + "': field '" + r.field->name() +
                  "' belongs to another Runtime; use fields of one Runtime");
    for (std::size_t j = 0; j < i; ++j) {
      const TileRef& o = tiles[j];
      if (o.field != r.field || o.tile != r.tile) continue;
      if (r.mode != Mode::Read || o.mode != Mode::Read)
        throw Error("task '" + name + "': " + tile_text(r) + " is given twice (" +
                    mode_name(o.mode) + " and " + mode_name(r.mode) +
                    "); give each tile once, as update_tile to read and write it");
    }
    if (r.mode == Mode::Read) continue;
    if (written == nullptr) {
      written = &r;
    } else if (r.field->owner(r.tile) != written->field->owner(written->tile)) {
      throw Error("task '" + name + "' writes " + tile_text(*written) + " (rank " +
                  std::to_string(written->field->owner(written->tile)) + ") and " + tile_text(r) +
                  " (rank " + std::to_string(r.field->owner(r.tile)) +
                  "); a task runs on the rank that owns what it writes: split it into one task "
                  "per owner");
    }
  }
  if (written == nullptr)
    throw Error("task '" + name +
                "' writes no tile; give at least one write_tile or update_tile "
                "(a task without output has no effect)");
}

}  // namespace

void tile_info(const FieldStorage& f, int t, std::int64_t* origin, std::int64_t* extent,
               int* owner) {
  check_tile("tile_of", f, t);
  const TileGeometry g = f.geometry(t);
  for (int a = 0; a < 3; ++a) {
    origin[a] = g.origin[a];
    extent[a] = g.extent[a];
  }
  *owner = f.owner(t);
}

void submit_tiles(const std::string& name, const TaskKind& kind, const std::vector<TileRef>& tiles,
                  const SlotBlock& args, double work, const std::vector<TileRef>& fetch_early) {
  check_task(name, tiles);
  Context& rt = tiles.front().field->context();
  tasks::Engine& engine = *rt.engine;
  // Buffers: each read tile once, then the written ones; slot k names its tile's buffer.
  std::vector<tasks::Handle> read, write;
  std::vector<FieldStorage*> fields;
  std::vector<std::int64_t> buffer(tiles.size());
  for (bool reading : {true, false})
    for (std::size_t k = 0; k < tiles.size(); ++k) {
      const TileRef& r = tiles[k];
      if ((r.mode == Mode::Read) != reading) continue;
      tasks::Handle h = r.field->impl().tile(r.tile).handle;
      std::vector<tasks::Handle>& list = reading ? read : write;
      auto at = std::find(list.begin(), list.end(), h);
      if (at == list.end()) {
        list.push_back(h);
        fields.push_back(r.field);
        at = list.end() - 1;
      }
      buffer[k] = (reading ? 0 : static_cast<std::int64_t>(read.size())) + (at - list.begin());
    }
  tasks::Codelet* known = engine.codelets().find(name, kind);  // no types string per task
  tasks::Codelet& codelet =
      known != nullptr ? *known : engine.codelets().get(name, type_names(fields), kind);

  auto* block = static_cast<unsigned char*>(std::malloc(args.size));  // freed by the engine
  std::memcpy(block, args.prototype, args.size);
  auto* slots = reinterpret_cast<TileSlot*>(block + args.slots_offset);
  for (std::size_t k = 0; k < tiles.size(); ++k) {
    const TileGeometry g = tiles[k].field->geometry(tiles[k].tile);
    TileSlot s{};
    s.buffer = buffer[k];
    for (int a = 0; a < 3; ++a) {
      s.origin[a] = g.origin[a];
      s.extent[a] = g.extent[a];
    }
    s.offset0 = g.offset0;
    s.sy = g.stride_y;
    s.sz = g.stride_z;
    std::memcpy(&slots[k], &s, sizeof(s));
  }
  const TileRef& first_written = *std::find_if(
      tiles.begin(), tiles.end(), [](const TileRef& r) { return r.mode != Mode::Read; });
  tasks::TaskTag tag;
  tag.field = first_written.field->impl().tag_name;
  tag.tile = first_written.tile;
  tag.rank = first_written.field->owner(first_written.tile);
  // With CUDA workers, on the device class of the tile it writes where the grid's placement
  // (a split, or the planner's for tiles a user gave) gives one, as that tile's own tasks: its
  // data stays in that part's memory. A team task on the CPU keeps its team (any CPU workers, no
  // single one); on a GPU it runs its CUDA body on the tile's worker: left to peager, a CPU team
  // took MG's one-task V-cycle whose levels the GPU held, and waited for their transfers.
  tasks::Placement place;
  if (engine.cuda_workers() > 0)
    place.device = placement_of(*first_written.field, first_written.tile).device;
  place.work = work;
  place.team = kind.team;
  for (const TileRef& r : fetch_early)
    place.fetch_early.push_back(r.field->impl().tile(r.tile).handle);
  engine.submitter().submit(codelet, read, write, block, args.size, true, tag, place);
  for (const TileRef& r : tiles)
    if (r.mode != Mode::Read) r.field->written();
}

void submit_user_task(const std::string& name, TaskKind kind, const std::vector<TileRef>& tiles,
                      const SlotBlock& args) {
  const bool all_write = std::all_of(tiles.begin(), tiles.end(),
                                     [](const TileRef& r) { return r.mode != Mode::Update; });
  // Write-only tasks have their own codelet: the modes are the codelet's.
  kind.kind = all_write ? "task-write" : "task";
  kind.rest = all_write ? Access::Write : Access::ReadWrite;
  submit_tiles(name, kind, tiles, args);
}

}  // namespace tessera::detail

namespace tessera {
Task::Task(std::string name) : name_(detail::check_name("task", name)) {}
}  // namespace tessera
