// One mesh loop's tasks (par_loop), as core/grid/tile_tasks.cpp is for grids: run_loop goes
// through named phases (read globals, import halos, increment plans, reductions, the loop
// tasks with their fused halo imports and packs, submission, the combine tasks, bookkeeping).
// The phases keep the order in which handles are registered and tasks submitted, which every
// rank repeats (StarPU-MPI tags are registration numbers).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/mesh/mesh_impl.hpp"
#include "kernels/cpu/mesh.hpp"
#include "tasks/halo.hpp"
#include "tasks/mesh_kinds.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// The buffers of one task, each handle once, its mode the union of the modes asked for.
struct TaskBuffers {
  std::vector<tasks::Handle> handles;
  std::vector<detail::Access> modes;
  std::int64_t add(tasks::Handle h, detail::Access mode) {
    for (std::size_t i = 0; i < handles.size(); ++i)
      if (handles[i] == h) {
        if (modes[i] != mode) modes[i] = detail::Access::ReadWrite;
        return static_cast<std::int64_t>(i);
      }
    handles.push_back(h);
    modes.push_back(mode);
    return static_cast<std::int64_t>(handles.size() - 1);
  }
};

tasks::TaskTag tag_of(const MeshStorage& mesh, int tile, long step, const char* field) {
  tasks::TaskTag tag;
  tag.field = field;
  tag.tile = tile;
  tag.step = step;
  tag.rank = mesh.owner[at(tile)];
  return tag;
}

kernels::MeshCopyArgs* copy_args(std::int64_t element_bytes, std::int64_t dim, std::size_t buffers,
                                 std::int64_t targets = 0) {
  auto* a = static_cast<kernels::MeshCopyArgs*>(std::malloc(sizeof(kernels::MeshCopyArgs)));
  *a = {element_bytes, dim, targets, static_cast<std::int32_t>(buffers)};
  return a;
}

// The handles of `d`'s import halo: each tile gathers what its consumers need into one export
// buffer per consumer, and each tile imports its halo from its sources' buffers. Only those
// elements move (between memory nodes and ranks).
void register_halo(MeshStorage& mesh, DatStorage& d) {
  tasks::Engine& engine = *mesh.context->engine;
  const partition::SetTiles& st = mesh.part.sets[at(d.set->number)];
  const int n = mesh.tiles();
  if (d.exports.empty()) {
    for (int t = 0; t < n; ++t) {
      const std::size_t size = st.halo[at(t)].size();
      d.halo.push_back(
          size == 0 ? nullptr
                    : engine.data().register_vector(nullptr, size, d.bytes(), mesh.owner[at(t)]));
      d.import_args.push_back({static_cast<std::int64_t>(d.bytes()), d.dim, 0,
                               static_cast<std::int32_t>(1 + st.sources[at(t)].size())});
    }
    for (int u = 0; u < n; ++u) {
      d.exports.emplace_back();
      for (const auto& list : st.exports[at(u)])
        d.exports.back().push_back(
            engine.data().register_vector(nullptr, list.size(), d.bytes(), mesh.owner[at(u)]));
      d.gather_args.push_back({static_cast<std::int64_t>(d.bytes()), d.dim, 0,
                               static_cast<std::int32_t>(2 + d.exports.back().size())});
    }
  }
}

// The export buffers tile t's halo is imported from, in the order the import concatenates them.
std::vector<tasks::Handle> import_sources(const MeshStorage& mesh, const DatStorage& d, int t) {
  const partition::SetTiles& st = mesh.part.sets[at(d.set->number)];
  std::vector<tasks::Handle> sources;
  for (std::int32_t u : st.sources[at(t)]) {
    const auto& consumers = st.consumers[at(u)];
    const auto k = std::lower_bound(consumers.begin(), consumers.end(), t) - consumers.begin();
    sources.push_back(d.exports[at(u)][static_cast<std::size_t>(k)]);
  }
  return sources;
}

// Brings the import halo of `d` up to date: the gathers, then an import task per tile with a
// halo, but those of the tiles in `imported_by_loop` (their loop task imports it itself).
void exchange(MeshStorage& mesh, DatStorage& d, const std::string& loop, long step,
              const std::vector<bool>& imported_by_loop = {}) {
  if (d.halo_version == d.version) return;
  tasks::Engine& engine = *mesh.context->engine;
  const int n = mesh.tiles();
  register_halo(mesh, d);
  tasks::Codelet& gather = engine.codelets().get(loop, d.type, tasks::halo_gather_kind());
  tasks::Codelet& import = engine.codelets().get(loop, d.type, tasks::halo_import_kind());
  // The copies' argument blocks are the dat's own (register_halo), as inside the loop tasks.
  for (int u = 0; u < n; ++u) {
    if (d.exports[at(u)].empty() || d.exports_version == d.version)
      continue;  // its writer gathered them
    engine.submitter().submit(
        gather, {d.owned[at(u)], mesh.export_handles[at(d.set->number)][at(u)]}, d.exports[at(u)],
        &d.gather_args[at(u)], sizeof(kernels::MeshCopyArgs), false,
        tag_of(mesh, u, step, d.tag_name), {mesh.rank_edge[at(u)], mesh.device(u)});
  }
  for (int t = 0; t < n; ++t) {
    if (d.halo[at(t)] == nullptr || (!imported_by_loop.empty() && imported_by_loop[at(t)]))
      continue;
    const std::vector<tasks::Handle> sources = import_sources(mesh, d, t);
    engine.submitter().submit(import, {d.halo[at(t)]}, sources, &d.import_args[at(t)],
                              sizeof(kernels::MeshCopyArgs), false,
                              tag_of(mesh, t, step, d.tag_name), {0, mesh.device(t)});
  }
  d.halo_version = d.version;
}

bool writes(tessera::Access a) {
  return a == tessera::Access::Write || a == tessera::Access::ReadWrite ||
         a == tessera::Access::Inc;
}

detail::Access task_mode(tessera::Access a) {
  if (a == tessera::Access::Read) return detail::Access::Read;
  if (a == tessera::Access::Write) return detail::Access::Write;
  return detail::Access::ReadWrite;
}

ArgAccess arg_access(tessera::Access a) { return static_cast<ArgAccess>(static_cast<int>(a)); }

// The indices at which a loop writes `d` through `m`.
unsigned written_mask(const std::vector<LoopArg>& args, const DatStorage* d, const MapStorage* m) {
  unsigned mask = 0;
  for (const LoopArg& a : args)
    if (a.dat == d && a.map == m && writes(a.access)) mask |= 1u << a.index;
  return mask;
}

// Increments and writes through maps: the plan and slot buffers of each (dat, map).
struct Written {
  DatStorage* dat;
  MapStorage* map;
  unsigned mask;
  IncrementState* plan;
  std::vector<std::vector<tasks::Handle>>* slots;
  std::vector<tasks::Handle>* local_slots;  // CUDA implementations only
  bool assign;
};

// One loop task: its tile, its buffers, the frame its kernel reads, and the halo copies around
// the kernel (imports before it, gathers into export buffers after it).
struct TileTask {
  int tile;
  TaskBuffers buffers;
  std::vector<std::int64_t> frame;
  std::vector<tasks::HaloWork::Copies> fills, packs;
};

std::string types_of(const std::vector<LoopArg>& args) {
  std::string types;
  for (const LoopArg& a : args) types += (types.empty() ? "" : "-") + std::string(a.type_name);
  return types;
}

// One call of run_loop: what its phases share, each phase a member called in order.
class LoopTasks {
 public:
  LoopTasks(const std::string& name, SetStorage& set, const std::vector<LoopArg>& args,
            const TaskKind& kind, const LoopBlock& block)
      : name_(name),
        set_(set),
        args_(args),
        kind_(kind),
        block_(block),
        mesh_(*set.mesh),
        rt_(mesh_.live("loop '" + name + "' over set '" + set.name + "'")),
        engine_(*rt_.engine),
        tiles_(mesh_.tiles()),
        step_(rt_.steps++),
        types_(types_of(args)),
        codelet_(engine_.codelets().get(name, types_, kind)),
        device_(kind.cuda != nullptr),
        loop_set_(mesh_.part.sets[at(set.number)]) {
    if (rt_.recording.maps_tiles())
      rt_.recording.map_loop(&mesh_, name);  // the partition map's loops
  }

  // Globals read: their value now, after the loops already reducing into them.
  void read_globals() {
    global_value_.resize(args_.size());
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].global != nullptr && args_[i].access == tessera::Access::Read) {
        global_value_[i].resize(args_[i].global->value.size());
        global_values(*args_[i].global, global_value_[i].data());
      }
  }

  // Import halos of the dats read (or written in part) through maps: their handles now, their
  // tasks once every task of the loop is known to be valid.
  void register_import_halos() {
    for (const LoopArg& a : args_)
      if (a.map != nullptr && a.access != tessera::Access::Inc) register_halo(mesh_, *a.dat);
  }

  // Increments and writes through maps: the plan and slot buffers of each (dat, map).
  void plan_increments() {
    for (const LoopArg& a : args_) {
      if (a.map == nullptr || !writes(a.access)) continue;
      if (std::any_of(written_.begin(), written_.end(),
                      [&](const Written& w) { return w.dat == a.dat && w.map == a.map; }))
        continue;
      const unsigned mask = written_mask(args_, a.dat, a.map);
      IncrementState& plan = mesh_.increments_of(*a.map, mask);
      auto& slots = a.dat->slots[{a.map->number, mask}];
      if (slots.empty())
        for (int t = 0; t < tiles_; ++t) {
          slots.emplace_back();
          for (std::int64_t count : plan.plan.slot_counts[at(t)])
            slots.back().push_back(engine_.data().register_vector(
                nullptr, static_cast<std::size_t>(count), a.dat->bytes(), mesh_.owner[at(t)]));
        }
      std::vector<tasks::Handle>* local = nullptr;
      if (device_ && a.access == tessera::Access::Inc) {
        local = &a.dat->local_slots[{a.map->number, mask}];
        if (local->empty())
          for (int t = 0; t < tiles_; ++t)
            local->push_back(engine_.data().register_vector(
                nullptr,
                static_cast<std::size_t>(std::max<std::int64_t>(1, plan.plan.local_slots[at(t)])),
                a.dat->bytes(), mesh_.owner[at(t)]));
      }
      written_.push_back(
          {a.dat, a.map, mask, &plan, &slots, local, a.access != tessera::Access::Inc});
    }
  }

  // Global reductions: one contribution per element, per tile.
  void register_reductions() {
    reductions_.resize(args_.size());
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const LoopArg& a = args_[i];
      if (a.global == nullptr || a.access == tessera::Access::Read) continue;
      reductions_[i].access = a.access;
      reductions_[i].set = mesh_.sets[at(set_.number)];
      for (int t = 0; t < tiles_; ++t) {
        const std::size_t n = loop_set_.owned[at(t)].size();
        reductions_[i].contributions.push_back(
            n == 0 ? nullptr
                   : engine_.data().register_vector(
                         nullptr, n, a.global->element_size * static_cast<std::size_t>(a.dim),
                         mesh_.owner[at(t)]));
      }
    }
  }

  // The dats read through maps whose halos are not current. With the exchange inside the tasks
  // (the default), each loop task imports its tile's halos before its kernel (a HaloWork fill
  // per dat), instead of an import task per tile and dat before the loop: one link less in the
  // chain from the writer's gathers to this loop. That takes a loop task on every tile with a
  // halo (a tile without one would keep a stale halo) and few enough dats and sources per task;
  // else the import tasks of their own.
  void choose_imports() {
    for (const LoopArg& a : args_)
      if (a.map != nullptr && a.access != tessera::Access::Inc &&
          a.dat->halo_version != a.dat->version &&
          std::find(imported_.begin(), imported_.end(), a.dat) == imported_.end())
        imported_.push_back(a.dat);
    import_in_tasks_ = rt_.options.fused_exchange && !imported_.empty() &&
                       imported_.size() <= tasks::HaloWork::kMax;
    for (DatStorage* d : imported_)
      for (int t = 0; t < tiles_ && import_in_tasks_; ++t)
        if (d->halo[at(t)] != nullptr &&
            (loop_set_.owned[at(t)].empty() ||
             mesh_.part.sets[at(d->set->number)].sources[at(t)].size() >
                 static_cast<std::size_t>(partition::RegionCopyList::kMax)))
          import_in_tasks_ = false;
  }

  // One loop task per tile with elements: its buffers, its frame and its halo imports.
  void build_tile_tasks() {
    for (int t = 0; t < tiles_; ++t) {
      const auto n = static_cast<std::int64_t>(loop_set_.owned[at(t)].size());
      if (n == 0) continue;
      TileTask& task = tasks_.emplace_back();
      task.tile = t;
      task.frame.assign(2 + args_.size() * ArgWords::kCount, 0);
      task.frame[0] = n;
      for (std::size_t i = 0; i < args_.size(); ++i)
        arg_words(i, task, task.frame.data() + 2 + i * ArgWords::kCount);
      task.frame[1] = static_cast<std::int64_t>(task.buffers.handles.size());
      add_imports(task);
      if (device_ &&
          task.buffers.handles.size() > static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers))
        fail("loop '" + name_ + "': the task of tile " + std::to_string(t) + " has " +
             std::to_string(task.buffers.handles.size()) +
             " buffers but a CUDA implementation takes at most " +
             std::to_string(mesh_codes::kMaxDeviceBuffers) +
             "; use fewer tiles (fewer neighbours per tile)");
    }
  }

  // The dats this loop writes directly whose export buffers exist (a later loop read them
  // through a map before): with the exchange inside the tasks, each loop task gathers its
  // tile's export buffers after its kernel (a HaloWork pack), instead of a gather task per tile
  // before the next loop that reads them: one task and one link of the chain less per tile.
  // Not for a dat the loop also reads or writes through a map (a neighbour's task could gather
  // before this one imports, or the combine tasks finish the values after the loop), nor where
  // a tile with exports has no loop task, nor beyond the copies' or a CUDA task's limits.
  void fuse_packs() {
    if (!rt_.options.fused_exchange) return;
    for (const LoopArg& a : args_) {
      DatStorage* d = a.dat;
      if (d == nullptr || a.map != nullptr || !writes(a.access) || d->exports.empty() ||
          std::find(packed_.begin(), packed_.end(), d) != packed_.end() ||
          std::any_of(args_.begin(), args_.end(),
                      [&](const LoopArg& b) { return b.dat == d && b.map != nullptr; }))
        continue;
      if (!packs_fit(*d)) continue;
      packed_.push_back(d);
      add_packs(*d, a.access);
    }
  }

  // A limit found before anything is submitted: the combine tasks' buffers on CUDA.
  void check_combines() {
    for (const Written& wr : written_)
      for (int u = 0; u < tiles_; ++u)
        if (tasks::combine_kind(wr.dat->type, wr.assign).cuda != nullptr &&
            wr.plan->plan.sources[at(u)].size() + 2 >
                static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers))
          fail("loop '" + name_ + "': tile " + std::to_string(u) + " of dat '" + wr.dat->name +
               "' takes increments from " + std::to_string(wr.plan->plan.sources[at(u)].size()) +
               " tiles, more than CUDA combine tasks take; "
               "use fewer tiles");
  }

  // The halo exchanges left to tasks of their own, then the loop tasks.
  void submit_loop_tasks() {
    const std::vector<bool> imported_by_loop(
        import_in_tasks_ ? static_cast<std::size_t>(tiles_) : 0, true);
    for (const LoopArg& a : args_)
      if (a.map != nullptr && a.access != tessera::Access::Inc)
        exchange(mesh_, *a.dat, name_, step_, imported_by_loop);
    tasks::Codelet* with_copies =
        import_in_tasks_ || !packed_.empty()
            ? &engine_.codelets().get(name_, types_, tasks::with_halo_work(kind_))
            : nullptr;
    for (TileTask& task : tasks_) {
      const bool copies = !task.fills.empty() || !task.packs.empty();
      tasks::HaloWork* work = nullptr;
      std::size_t bytes = 0;
      unsigned char* arg = tasks::new_task_arg(block_.prototype, block_.size, copies, kind_.cpu,
                                               kind_.cuda, &work, &bytes);
      std::memcpy(arg + (bytes - block_.size) + block_.frame_offset, task.frame.data(),
                  task.frame.size() * sizeof(std::int64_t));
      for (const tasks::HaloWork::Copies& c : task.fills) work->fill[work->fills++] = c;
      for (const tasks::HaloWork::Copies& c : task.packs) work->pack[work->packs++] = c;
      engine_.submitter().submit_with_modes(
          copies ? *with_copies : codelet_, task.buffers.handles, task.buffers.modes, arg, bytes,
          true, tag_of(mesh_, task.tile, step_, nullptr),
          {mesh_.rank_edge[at(task.tile)], mesh_.device(task.tile)});
    }
  }

  // The owners add (or copy) the slots of shared targets, in the plan's fixed order.
  void submit_combines() {
    for (const Written& wr : written_) {
      tasks::Codelet& combine =
          engine_.codelets().get(name_, wr.dat->type, tasks::combine_kind(wr.dat->type, wr.assign));
      const partition::IncrementPlan& plan = wr.plan->plan;
      for (int u = 0; u < tiles_; ++u) {
        if (plan.sources[at(u)].empty()) continue;
        std::vector<tasks::Handle> rest{wr.plan->combine[at(u)]};
        for (std::size_t j = 0; j < plan.sources[at(u)].size(); ++j)
          rest.push_back((*wr.slots)[at(plan.sources[at(u)][j])][at(plan.source_buffer[at(u)][j])]);
        engine_.submitter().submit(
            combine, {wr.dat->owned[at(u)]}, rest,
            copy_args(0, wr.dat->dim, 1 + rest.size(), plan.combine[at(u)][0]),
            sizeof(kernels::MeshCopyArgs), true, tag_of(mesh_, u, step_, wr.dat->tag_name),
            {0, mesh_.device(u)});
      }
    }
  }

  // The dats' versions, and the globals' pending reductions.
  void finish() {
    // Loops writing a dat twice (through two arguments) bump it twice: harmless.
    for (const LoopArg& a : args_)
      if (a.dat != nullptr && writes(a.access)) ++a.dat->version;
    for (DatStorage* d : packed_) d->exports_version = d->version;
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (!reductions_[i].contributions.empty()) {
        GlobalStorage& g = *args_[i].global;
        if (g.context == nullptr) {
          g.context = &rt_;
          rt_.handle_owners.insert(&g);
        }
        g.pending.push_back(std::move(reductions_[i]));
      }
  }

 private:
  // A limit found while the tasks are prepared: nothing submitted yet, nothing left registered.
  [[noreturn]] void fail(const std::string& message) {
    for (PendingReduction& r : reductions_)
      for (tasks::Handle h : r.contributions)
        if (h != nullptr) engine_.data().unregister_scratch(h);
    throw Error(message);
  }

  // Argument i's words of the frame of `task`, its buffers added to the task's.
  void arg_words(std::size_t i, TileTask& task, std::int64_t* w) {
    const LoopArg& a = args_[i];
    const int t = task.tile;
    TaskBuffers& b = task.buffers;
    w[ArgWords::kDim] = a.dim;
    w[ArgWords::kAccess] = static_cast<std::int64_t>(arg_access(a.access));
    if (a.global != nullptr) {
      if (a.access == tessera::Access::Read) {
        w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::GlobalRead);
        std::memcpy(w + ArgWords::kValue, global_value_[i].data(), global_value_[i].size());
      } else {
        w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::GlobalReduce);
        w[ArgWords::kOwned] = b.add(reductions_[i].contributions[at(t)], detail::Access::Write);
      }
      return;
    }
    DatStorage& d = *a.dat;
    if (a.map == nullptr) {
      w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::Direct);
      w[ArgWords::kOwned] = b.add(d.owned[at(t)], task_mode(a.access));
      return;
    }
    const partition::SetTiles& target = mesh_.part.sets[at(d.set->number)];
    w[ArgWords::kArity] = a.map->arity;
    w[ArgWords::kIndex] = a.index;
    w[ArgWords::kOwnedCount] = static_cast<std::int64_t>(target.owned[at(t)].size());
    w[ArgWords::kMap] = b.add(mesh_.map_handles[at(a.map->number)][at(t)], detail::Access::Read);
    if (a.access != tessera::Access::Inc && d.halo[at(t)] != nullptr)
      w[ArgWords::kHalo] = b.add(d.halo[at(t)], detail::Access::Read);
    if (!writes(a.access)) {
      w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::IndirectRead);
      w[ArgWords::kOwned] = b.add(d.owned[at(t)], detail::Access::Read);
      return;
    }
    written_words(a, t, b, w);
  }

  // The words of an argument written through a map: the tile, its increment plan's codes and
  // its slot buffers.
  void written_words(const LoopArg& a, int t, TaskBuffers& b, std::int64_t* w) {
    DatStorage& d = *a.dat;
    const Written& wr = *std::find_if(written_.begin(), written_.end(), [&](const Written& x) {
      return x.dat == &d && x.map == a.map;
    });
    w[ArgWords::kPath] = static_cast<std::int64_t>(ArgPath::IndirectWritten);
    // In-place updates touch some of the tile's elements only: the rest must stay.
    w[ArgWords::kOwned] = b.add(d.owned[at(t)], detail::Access::ReadWrite);
    w[ArgWords::kCodes] = b.add(wr.plan->codes[at(t)], detail::Access::Read);
    if (wr.local_slots != nullptr) {
      w[ArgWords::kDeviceCodes] = b.add(wr.plan->device_codes[at(t)], detail::Access::Read);
      w[ArgWords::kLocalSlots] = b.add((*wr.local_slots)[at(t)], detail::Access::Write);
      w[ArgWords::kLocalGather] = b.add(wr.plan->local_gather[at(t)], detail::Access::Read);
      w[ArgWords::kLocalTargets] = wr.plan->plan.local_gather[at(t)][0];
    }
    const auto& slots = (*wr.slots)[at(t)];
    w[ArgWords::kSlotFirst] = static_cast<std::int64_t>(b.handles.size());
    w[ArgWords::kSlotCount] = static_cast<std::int64_t>(slots.size());
    for (std::size_t k = 0; k < slots.size(); ++k) {
      // Appended in order, so that slot buffer k is buffer kSlotFirst + k.
      b.handles.push_back(slots[k]);
      b.modes.push_back(detail::Access::Write);
    }
  }

  // The halo imports of `task`, their source export buffers after the kernel's buffers.
  void add_imports(TileTask& task) {
    const TaskKind import = tasks::halo_import_kind();
    const int t = task.tile;
    TaskBuffers& b = task.buffers;
    for (DatStorage* d : imported_) {
      if (!import_in_tasks_ || d->halo[at(t)] == nullptr) continue;
      const std::vector<tasks::Handle> sources = import_sources(mesh_, *d, t);
      tasks::HaloWork::Copies c{};
      c.args = &d->import_args[at(t)];
      c.empty = sources.empty();
      // Write only, though the kernel reads it: the import writes every element first (so
      // StarPU need not bring the old values, and a halo never written before may be used).
      c.tile = static_cast<int>(b.add(d->halo[at(t)], detail::Access::Write));
      b.modes[static_cast<std::size_t>(c.tile)] = detail::Access::Write;
      c.first = static_cast<int>(b.handles.size());
      c.count = static_cast<int>(sources.size());
      c.cpu = import.cpu;
      c.cuda = import.cuda;  // the halo-import kind's kernels
      b.handles.insert(b.handles.end(), sources.begin(), sources.end());
      b.modes.resize(b.handles.size(), detail::Access::Read);
      task.fills.push_back(c);
    }
  }

  // Whether every tile task can gather `d`'s export buffers: one with exports on each tile,
  // within the copies' and a CUDA task's limits (the packs of the dats before it included).
  bool packs_fit(const DatStorage& d) const {
    bool fits = packed_.size() < static_cast<std::size_t>(tasks::HaloWork::kMax);
    std::vector<bool> has_task(static_cast<std::size_t>(tiles_), false);
    for (const TileTask& task : tasks_) {
      has_task[at(task.tile)] = true;
      const std::size_t copies = 1 + d.exports[at(task.tile)].size();
      if (copies > static_cast<std::size_t>(partition::RegionCopyList::kMax) ||
          (device_ && task.buffers.handles.size() + copies >
                          static_cast<std::size_t>(mesh_codes::kMaxDeviceBuffers)))
        fits = false;
    }
    for (int u = 0; u < tiles_; ++u)
      if (!d.exports[at(u)].empty() && !has_task[at(u)]) fits = false;
    return fits;
  }

  // Each tile task gathers `d`'s export buffers after its kernel.
  void add_packs(DatStorage& d, tessera::Access access) {
    const TaskKind gather = tasks::halo_gather_kind();
    for (TileTask& task : tasks_) {
      const auto& exports = d.exports[at(task.tile)];
      if (exports.empty()) continue;
      TaskBuffers& b = task.buffers;
      tasks::HaloWork::Copies c{};
      c.args = &d.gather_args[at(task.tile)];
      c.empty = false;
      c.tile = static_cast<int>(b.add(d.owned[at(task.tile)], task_mode(access)));
      // The export index, then the buffers: appended as they are (add merges equal handles).
      c.first = static_cast<int>(b.handles.size());
      c.count = static_cast<int>(1 + exports.size());
      c.cpu = gather.cpu;
      c.cuda = gather.cuda;
      b.handles.push_back(mesh_.export_handles[at(d.set->number)][at(task.tile)]);
      b.modes.push_back(detail::Access::Read);
      b.handles.insert(b.handles.end(), exports.begin(), exports.end());
      b.modes.resize(b.handles.size(), detail::Access::Write);
      task.packs.push_back(c);
    }
  }

  const std::string& name_;
  SetStorage& set_;
  const std::vector<LoopArg>& args_;
  const TaskKind& kind_;
  const LoopBlock& block_;
  MeshStorage& mesh_;
  Context& rt_;
  tasks::Engine& engine_;
  const int tiles_;
  const long step_;
  const std::string types_;
  tasks::Codelet& codelet_;
  const bool device_;  // the kind has a CUDA implementation
  const partition::SetTiles& loop_set_;
  std::vector<std::vector<unsigned char>> global_value_;  // [arg]: globals read
  std::vector<Written> written_;
  std::vector<PendingReduction> reductions_;  // [arg]: globals reduced into
  std::vector<DatStorage*> imported_;         // dats whose halos are out of date
  bool import_in_tasks_ = false;              // the loop tasks import them (HaloWork fills)
  std::vector<TileTask> tasks_;
  std::vector<DatStorage*> packed_;  // dats the loop tasks gather exports of (HaloWork packs)
};

}  // namespace

void run_loop(const std::string& name, SetStorage& set, const std::vector<LoopArg>& args,
              const TaskKind& kind, const LoopBlock& block) {
  check_loop(name, set, args);
  LoopTasks loop(name, set, args, kind, block);
  loop.read_globals();
  loop.register_import_halos();
  loop.plan_increments();
  loop.register_reductions();
  loop.choose_imports();
  loop.build_tile_tasks();
  loop.fuse_packs();
  loop.check_combines();
  loop.submit_loop_tasks();
  loop.submit_combines();
  loop.finish();
}

}  // namespace tessera::detail
