// Pointwise loops: checks, then one task per tile the loop's box meets; no ghost layers are
// read, so nothing is exchanged.
#include <algorithm>

#include "core/grid/checks.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "core/grid/slab_pipeline.hpp"
#include "core/grid/reduce.hpp"
#include "core/grid/tile_tasks.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {

void check_loop(const std::string& name, const std::vector<FieldStorage*>& reads,
                const std::vector<FieldStorage*>& writes, const LoopBox& box) {
  if (reads.empty() && writes.empty())
    throw Error("loop '" + name + "' has no field; give it tessera::in, out or inout fields");
  const FieldStorage& first = reads.empty() ? *writes.front() : *reads.front();
  const GridSpec& grid = first.grid();
  for (const auto* list : {&reads, &writes})
    for (const FieldStorage* f : *list)
      if (!(f->grid() == grid))
        throw Error("loop '" + name + "': field '" + f->name() +
                    "' is on a different grid (extent, tile or periodicity) than field '" +
                    first.name() + "'; create all fields of one loop on one Grid");
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (std::find(reads.begin(), reads.end(), writes[i]) != reads.end())
      throw Error("loop '" + name + "': field '" + writes[i]->name() +
                  "' is both read (in) and written (out or inout); pass it once, as "
                  "tessera::inout(" +
                  writes[i]->name() + "), to update it in place");
    for (std::size_t j = 0; j < i; ++j)
      if (writes[j] == writes[i])
        throw Error("loop '" + name + "': field '" + writes[i]->name() +
                    "' is written twice; give each written field once");
  }
  if (box.whole) return;
  for (int a = 0; a < grid.dims; ++a)
    if (box.lo[a] < 0 || box.hi[a] > grid.extent[a] || box.lo[a] >= box.hi[a])
      throw Error("loop '" + name + "': its box is [" + std::to_string(box.lo[a]) + ", " +
                  std::to_string(box.hi[a]) + ") along " + axis_name(a) +
                  " but the grid has points [0, " + std::to_string(grid.extent[a]) +
                  "); give a non-empty box inside the grid (lo inclusive, hi exclusive)");
}

}  // namespace

std::shared_ptr<PendingReduction> apply_loop(const std::string& name, const TaskKind& kind,
                                             const std::vector<FieldStorage*>& reads,
                                             const std::vector<FieldStorage*>& writes,
                                             const std::vector<FieldStorage*>& in_place,
                                             const LoopBox& box, const ArgBlock& args,
                                             const std::vector<ReduceOp>& ops, bool untimed) {
  check_loop(name, reads, writes, box);
  // A streamed time block's dropped scratch (slabs::after_visit) holds no values: refused
  // where they would be read (an input, an in-out, a box's output, whose other points stay), else
  // made StarPU's again, unread, before its tile's task writes every point.
  for (const FieldStorage* f : reads)
    slabs::check_holds_values(*f, untimed ? "a reduction" : "an input of a loop");
  for (const FieldStorage* f : in_place) slabs::check_holds_values(*f, "an in-out of a loop");
  if (!box.whole)
    for (const FieldStorage* f : writes)
      slabs::check_holds_values(*f, "an output of a loop over a box");
  FieldStorage& first = reads.empty() ? *writes.front() : *reads.front();
  Context& rt = first.context();
  std::vector<FieldStorage*> all = reads;
  all.insert(all.end(), writes.begin(), writes.end());
  TileTaskCall call{&rt.engine->codelets().get(name, type_names(all), kind), reads, writes, args};
  if (!box.whole) {
    call.lo = box.lo;
    call.hi = box.hi;
  }
  if (first.grid().stream_depth > 0)
    call.before_tile = [&writes, &name](int t) {
      for (FieldStorage* f : writes) slabs::restore_dropped(*f, name, t);
    };
  std::shared_ptr<PendingReduction> pending;
  if (!ops.empty()) pending = start_reduction(call, first, ops);
  // A loop over every point packs the written fields' faces for the stencil that reads them
  // next (a loop over a box leaves some tiles without a task, so their faces to halo-pack
  // tasks).
  const std::vector<HaloSet*> packed = add_packs(call, writes, reads.size(), box.whole);
  add_halo_work(call, name, type_names(all), kind);
  if (untimed)
    call.field = first.impl().tag_name;  // a reduction outside the time loop: no step
  else
    call.step = rt.steps++;
  submit_tile_tasks(call);
  for (std::size_t j = 0; j < writes.size(); ++j) writes[j]->written(packed[j]);
  return pending;
}

}  // namespace tessera::detail
