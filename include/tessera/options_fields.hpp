// Every field of tessera::Options in one list that the compiler keeps complete: what the
// cross-rank check compares (ranks whose options differ build different task graphs and hang).
#pragma once

#include <tessera/runtime.hpp>

namespace tessera::detail {

/// Calls `f(name, value)` for every field of `o`, in declaration order. The structured binding
/// must name exactly as many fields as Options has, so adding a field to Options stops this
/// compiling until the field is named here (and its call below added next to it).
///   for_each_option(o, [](const char* name, const auto& value) { ... });
template <class F>
void for_each_option(const Options& o, F&& f) {
  const auto& [scheduler, cpu_workers, cuda_workers, calibrate, trace, report, summary,
               perfmodel_dir, fxt, quiet, gpu_fraction, rank_grid, max_submitted_tasks, watchdog,
               fused_exchange, merge_gpu_tiles, calibrate_command, default_scheduler] = o;
  f("scheduler", scheduler);
  f("cpu_workers", cpu_workers);
  f("cuda_workers", cuda_workers);
  f("calibrate", calibrate);
  f("trace", trace);
  f("report", report);
  f("summary", summary);
  f("perfmodel_dir", perfmodel_dir);
  f("fxt", fxt);
  f("quiet", quiet);
  f("gpu_fraction", gpu_fraction);
  f("rank_grid", rank_grid);
  f("max_submitted_tasks", max_submitted_tasks);
  f("watchdog", watchdog);
  f("fused_exchange", fused_exchange);
  f("merge_gpu_tiles", merge_gpu_tiles);
  f("calibrate_command", calibrate_command);
  f("default_scheduler", default_scheduler);
}

}  // namespace tessera::detail
