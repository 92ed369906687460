// Reads StarPU's history-based models of the codelets a runtime created (its engine's
// codelet registry) to tell which codelet x architecture x footprint entries are calibrated.
#include "tessera/perfmodels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "core/runtime/context.hpp"
#include "tasks/starpu.hpp"

namespace tessera::perfmodels {

bool Coverage::complete() const { return short_entries() == 0; }

std::size_t Coverage::short_entries() const {
  std::size_t n = missing.size();
  for (const Entry& e : entries) n += e.samples < minimum ? 1 : 0;
  return n;
}

unsigned calibration_minimum() {
  const char* v = std::getenv("STARPU_CALIBRATE_MINIMUM");
  const long n = v != nullptr ? std::atol(v) : 0;
  return n > 0 ? static_cast<unsigned>(n) : 10;
}

Coverage coverage(const Runtime& rt) {
  const tasks::CodeletRegistry& codelets = rt.context().engine->codelets();
  Coverage c;
  c.minimum = calibration_minimum();
  // One model per architecture name: CPU workers share one, each GPU has its own.
  std::map<std::string, starpu_perfmodel_arch*> archs;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    starpu_perfmodel_arch* arch =
        starpu_worker_get_perf_archtype(static_cast<int>(w), STARPU_NMAX_SCHED_CTXS);
    char arch_name[128];
    starpu_perfmodel_get_arch_name(arch, arch_name, sizeof(arch_name), 0);
    archs.emplace(arch_name, arch);
  }
  for (const auto& [key, cl] : codelets.all()) {
    if (cl->submitted == 0 || cl->cl.model == nullptr) continue;  // unused, or untimed kind
    for (const auto& [arch_name, arch] : archs) {
      const bool cuda = arch->devices[0].type == STARPU_CUDA_WORKER;
      if (cuda && (cl->cl.where & STARPU_CUDA) == 0) continue;  // no CUDA implementation
      starpu_perfmodel_per_arch* per =
          cl->model.is_init ? starpu_perfmodel_get_model_per_arch(&cl->model, arch, 0) : nullptr;
      // Only the footprints (tile shapes) this run's tasks have: entries that other
      // configurations left in the model directory are none of this run's business.
      std::set<std::uint32_t> unseen = cl->footprints;
      for (starpu_perfmodel_history_list* l = per ? per->list : nullptr; l; l = l->next) {
        const starpu_perfmodel_history_entry* h = l->entry;
        if (unseen.erase(h->footprint) == 0) continue;
        const double var = h->nsample > 1 ? h->sum2 / h->nsample - h->mean * h->mean : 0;
        c.entries.push_back({cl->name, arch_name, h->footprint, h->size, h->nsample, h->mean,
                             std::sqrt(std::max(0.0, var))});
      }
      for (std::uint32_t footprint : unseen) {
        char hex[16];
        std::snprintf(hex, sizeof(hex), "%x", footprint);
        c.missing.push_back(cl->name + " footprint " + hex + " on " + arch_name);
      }
    }
  }
  return c;
}

std::string table(const Coverage& c) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "  %-28s %-20s %10s %10s %7s %11s %11s  %s\n", "codelet",
                "arch", "footprint", "bytes", "samples", "mean us", "stddev us", "status");
  out += line;
  for (const Entry& e : c.entries) {
    std::snprintf(line, sizeof(line), "  %-28s %-20s %10x %10zu %7u %11.1f %11.1f  %s\n",
                  e.codelet.c_str(), e.arch.c_str(), e.footprint, e.bytes, e.samples, e.mean_us,
                  e.stddev_us, e.samples >= c.minimum ? "calibrated" : "needs samples");
    out += line;
  }
  for (const std::string& m : c.missing) out += "  " + m + ": no samples (MISSING)\n";
  return out;
}

}  // namespace tessera::perfmodels
