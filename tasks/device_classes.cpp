#include "tasks/device_classes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/starpu.hpp"

namespace tessera::tasks {

namespace {
// The split mode's stand-ins, by worker id: written by the Engine before StarPU runs a task and
// after the last one ended, read by the workers (task submission orders the two).
std::vector<char> stand_in;
}  // namespace

void set_cuda_stand_ins(std::vector<int> workers) {
  stand_in.clear();
  for (int w : workers) {
    if (w >= static_cast<int>(stand_in.size())) stand_in.resize(static_cast<std::size_t>(w) + 1, 0);
    stand_in[static_cast<std::size_t>(w)] = 1;
  }
}

bool is_cuda_stand_in(int id) {
  return id >= 0 && id < static_cast<int>(stand_in.size()) &&
         stand_in[static_cast<std::size_t>(id)];
}

bool is_cuda_worker(int id) {
  return is_cuda_stand_in(id) || starpu_worker_get_type(id) == STARPU_CUDA_WORKER;
}

std::vector<int> class_worker_ids(bool cuda) {
  std::vector<int> ids;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    const auto type = starpu_worker_get_type(static_cast<int>(w));
    if ((type == STARPU_CPU_WORKER || type == STARPU_CUDA_WORKER) &&
        is_cuda_worker(static_cast<int>(w)) == cuda)
      ids.push_back(static_cast<int>(w));
  }
  return ids;
}

namespace {

// StarPU's model directory: STARPU_PERF_MODEL_DIR (set from --perfmodel-dir), else
// $STARPU_HOME/.starpu/sampling, else ~/.starpu/sampling; its codelet models in codelets/45.
std::filesystem::path codelet_model_dir() {
  if (const char* dir = std::getenv("STARPU_PERF_MODEL_DIR"); dir != nullptr && *dir != '\0')
    return std::filesystem::path(dir) / "codelets" / "45";
  const char* home = std::getenv("STARPU_HOME");
  if (home == nullptr || *home == '\0') home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : ".") / ".starpu" / "sampling" / "codelets" /
         "45";
}

// The performance model architecture of the first worker of a class (CUDA: CUDA workers and
// the split mode's stand-ins).
starpu_perfmodel_arch* first_arch(starpu_worker_archtype type) {
  const std::vector<int> ids = class_worker_ids(type == STARPU_CUDA_WORKER);
  return ids.empty() ? nullptr
                     : starpu_worker_get_perf_archtype(ids.front(), STARPU_NMAX_SCHED_CTXS);
}

// Whether two architectures are one model (a stand-in's and a CPU worker's, unless StarPU keeps
// a model per CPU worker: STARPU_PERF_MODEL_HOMOGENEOUS_CPU=0).
bool same_arch(const starpu_perfmodel_arch* a, const starpu_perfmodel_arch* b) {
  if (a == b) return true;
  if (a->ndevices != b->ndevices) return false;
  for (int d = 0; d < a->ndevices; ++d)
    if (a->devices[d].type != b->devices[d].type || a->devices[d].devid != b->devices[d].devid ||
        a->devices[d].ncores != b->devices[d].ncores)
      return false;
  return true;
}

// The architecture to read a loaded model's CPU timings under: the first CPU worker's, or where
// a run has none (GPU-only), the one StarPU keeps one CPU worker's timings under in the models
// it has loaded (a run with cores wrote them; the combinations are known once a model is
// loaded): they still say how fast a GPU is against a core. Null where neither exists.
starpu_perfmodel_arch* models_cpu_arch() {
  if (starpu_perfmodel_arch* workers = first_arch(STARPU_CPU_WORKER)) return workers;
  for (int comb = 0; comb < starpu_perfmodel_get_narch_combs(); ++comb) {
    starpu_perfmodel_arch* a = starpu_perfmodel_arch_comb_fetch(comb);
    if (a != nullptr && a->ndevices == 1 && a->devices[0].type == STARPU_CPU_WORKER &&
        a->devices[0].ncores == 1)
      return a;
  }
  return nullptr;
}

// A model of the model directory, read for the time of a scope.
class LoadedModel {
 public:
  explicit LoadedModel(const std::string& symbol) {
    model_.type = STARPU_HISTORY_BASED;
    loaded_ = starpu_perfmodel_load_symbol(symbol.c_str(), &model_) == 0;
  }
  ~LoadedModel() {
    if (loaded_) starpu_perfmodel_unload_model(&model_);
  }
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;
  bool loaded() const { return loaded_; }
  // Its entries on `arch`; null where it has none.
  const starpu_perfmodel_per_arch* on(starpu_perfmodel_arch* arch) {
    return starpu_perfmodel_get_model_per_arch(&model_, arch, 0);
  }

 private:
  starpu_perfmodel model_{};
  bool loaded_ = false;
};

// Microseconds per byte of the largest task `per` knows: the regression at its largest size
// where it holds one, else the history entry of the largest tile. 0 when it knows nothing.
double us_per_byte(const starpu_perfmodel_per_arch* per, std::size_t* largest) {
  *largest = 0;
  if (per == nullptr) return 0;
  const starpu_perfmodel_regression_model& r = per->regression;
  if (r.nl_valid && r.maxx > 0) {
    *largest = r.maxx;
    const double x = static_cast<double>(r.maxx);
    return (r.a * std::pow(x, r.b) + r.c) / x;
  }
  double rate = 0;
  for (const starpu_perfmodel_history_list* l = per->list; l != nullptr; l = l->next) {
    const starpu_perfmodel_history_entry* h = l->entry;
    if (h->nsample == 0 || h->size == 0 || h->size < *largest) continue;
    *largest = h->size;
    rate = h->mean / static_cast<double>(h->size);
  }
  return rate;
}

// The models in the model directory whose symbol starts with `prefix` and whose kind starts
// with one of `kinds`: tessera.<stencil>.<kind>.<types>[.emulated-cuda], sorted so that every
// rank and every run makes the same choice.
std::vector<std::string> model_symbols(const std::string& prefix,
                                       std::initializer_list<std::string_view> kinds) {
  std::error_code error;
  std::vector<std::string> symbols;
  for (const auto& entry : std::filesystem::directory_iterator(codelet_model_dir(), error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t kind = name.find('.', name.find('.') + 1) + 1;
    // A damaged model moved aside before StarPU started (kDamagedSuffix) is no model: loading
    // it would make StarPU abort.
    if (name.rfind(prefix, 0) != 0 || kind == 0 || name.find(kDamagedSuffix) != std::string::npos)
      continue;
    for (std::string_view k : kinds)
      if (name.compare(kind, k.size(), k) == 0) {
        symbols.push_back(name);
        break;
      }
  }
  std::sort(symbols.begin(), symbols.end());
  return symbols;
}

// The tile tasks' models of the kinds interior, interior+halo, time-block and time-block+halo
// (not the exchanges, boundaries or reductions).
std::vector<std::string> tile_task_symbols(const std::string& prefix) {
  return model_symbols(prefix, {"interior", "time-block"});
}

// Microseconds per unit of size on the first CPU and the first CUDA worker from the model of
// `symbols` whose largest task both classes know is the largest (sizes: bytes, or what the
// kind's size_base counts). Zero where none has both.
ClassSpeeds largest_known(const std::vector<std::string>& symbols) {
  ClassSpeeds best;
  starpu_perfmodel_arch* cuda = first_arch(STARPU_CUDA_WORKER);
  if (cuda == nullptr) return best;
  std::size_t best_size = 0;
  for (const std::string& symbol : symbols) {
    LoadedModel model(symbol);
    if (!model.loaded()) continue;
    starpu_perfmodel_arch* cpu = models_cpu_arch();
    // Stand-ins that share the CPU workers' model have timings of both bodies in it: unknown.
    if (cpu == nullptr || same_arch(cpu, cuda)) continue;
    std::size_t cpu_size = 0, cuda_size = 0;
    const double c = us_per_byte(model.on(cpu), &cpu_size);
    const double g = us_per_byte(model.on(cuda), &cuda_size);
    if (c > 0 && g > 0 && std::min(cpu_size, cuda_size) > best_size) {
      best_size = std::min(cpu_size, cuda_size);
      best = {c, g, symbol};
    }
  }
  return best;
}
}  // namespace

ClassSpeeds model_class_speeds() { return largest_known(tile_task_symbols("tessera.")); }

namespace {
// A core's time a point of one step by the largest history entry of `per` that records its work
// (its flops: points x steps, tasks::Placement), and that entry's size; 0 where none does.
struct WorkedEntry {
  double seconds = 0;
  std::size_t size = 0;
};
WorkedEntry largest_worked_entry(const starpu_perfmodel_per_arch* per) {
  WorkedEntry largest;
  for (const starpu_perfmodel_history_list* l = per != nullptr ? per->list : nullptr; l != nullptr;
       l = l->next) {
    const starpu_perfmodel_history_entry* h = l->entry;
    if (h->nsample == 0 || !(h->flops > 0) || !(h->mean > 0) || h->size < largest.size) continue;
    largest = {h->mean * 1e-6 / h->flops, h->size};
  }
  return largest;
}
}  // namespace

double model_cpu_point_seconds(const std::string& symbol) {
  if (symbol.empty()) return 0;
  LoadedModel model(symbol);
  starpu_perfmodel_arch* cpu = models_cpu_arch();
  if (!model.loaded() || cpu == nullptr) return 0;
  return largest_worked_entry(model.on(cpu)).seconds;
}

CorePointSeconds model_core_point_seconds() {
  CorePointSeconds best;
  std::size_t best_size = 0;
  for (const std::string& symbol : tile_task_symbols("tessera.")) {
    // The emulated device's models time CUDA bodies (or both bodies, in the split mode).
    if (symbol.find(".emulated-") != std::string::npos) continue;
    LoadedModel model(symbol);
    starpu_perfmodel_arch* cpu = models_cpu_arch();
    if (!model.loaded() || cpu == nullptr) continue;
    const WorkedEntry e = largest_worked_entry(model.on(cpu));
    if (e.seconds > 0 && e.size > best_size) {
      best_size = e.size;
      best = {e.seconds, symbol};
    }
  }
  return best;
}

PairSeconds model_pair_seconds() {
  // Per unit of size: an interaction (the pairs kind's size_base, tasks/codelets.cpp).
  const ClassSpeeds s = largest_known(model_symbols("tessera.", {"pairs"}));
  return {s.cpu_us_per_byte * 1e-6, s.cuda_us_per_byte * 1e-6, s.source};
}

namespace {
// Bytes of one point of the element types a symbol names ("double-float-double"), 0 if one is
// not an element type (tessera::detail::element_name).
double point_bytes(const std::string& types) {
  double bytes = 0;
  std::size_t from = 0;
  while (from <= types.size()) {
    const std::size_t to = std::min(types.find('-', from), types.size());
    const std::string t = types.substr(from, to - from);
    if (t == "double")
      bytes += 8;
    else if (t == "float" || t == "int32")
      bytes += 4;
    else if (t == "uint8")
      bytes += 1;
    else
      return 0;
    from = to + 1;
  }
  return bytes;
}
}  // namespace

PointCost model_point_cost(const std::string& stencil, double tile_points) {
  PointCost best;
  starpu_perfmodel_arch* cpu = first_arch(STARPU_CPU_WORKER);
  if (cpu == nullptr || tile_points <= 0) return best;
  const std::string prefix = "tessera." + stencil + ".";
  double nearest = std::log(2.0);  // no further than a factor of 2
  for (const std::string& symbol : tile_task_symbols(prefix)) {
    const std::string rest = symbol.substr(prefix.size());  // <kind>.<types>, no .emulated-cuda
    const std::size_t dot = rest.find('.');
    if (dot == std::string::npos || rest.find('.', dot + 1) != std::string::npos) continue;
    const double bytes = point_bytes(rest.substr(dot + 1));
    if (bytes <= 0) continue;
    LoadedModel model(symbol);
    if (!model.loaded()) continue;
    const starpu_perfmodel_per_arch* per = model.on(cpu);
    for (const starpu_perfmodel_history_list* l = per != nullptr ? per->list : nullptr;
         l != nullptr; l = l->next) {
      const starpu_perfmodel_history_entry* h = l->entry;
      if (h->nsample == 0 || h->size == 0 || !(h->mean > 0)) continue;
      // The work: the entry's flops (points x steps, tasks::Placement), or for the one-step
      // kinds of models recorded before tasks carried it, its points.
      const double points = static_cast<double>(h->size) / bytes;
      const bool one_step = rest.rfind("interior", 0) == 0;
      const double work = h->flops > 0 ? h->flops : one_step ? points : 0;
      const double distance = std::abs(std::log(points / tile_points));
      if (!(work > 0) || distance > nearest) continue;
      nearest = distance;
      best = {h->mean * 1e-6 / work, symbol};
    }
  }
  return best;
}

namespace {
// The memory node of the first CUDA worker (a real one: the stand-ins have no bus); -1: none.
int first_cuda_node() {
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER)
      return static_cast<int>(starpu_worker_get_memory_node(w));
  return -1;
}
}  // namespace

double bus_latency_seconds() {
  const int node = first_cuda_node();
  return node < 0 ? 0
                  : starpu_transfer_latency(STARPU_MAIN_RAM, static_cast<unsigned>(node)) * 1e-6;
}

namespace {
// STARPU_LIMIT_CUDA_MEM (MiB) in bytes, 0 where unset or not a positive number.
double limit_cuda_mem_bytes() {
  const char* text = std::getenv("STARPU_LIMIT_CUDA_MEM");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const double mib = std::strtod(text, &end);
  return end != text && *end == '\0' && mib > 0 ? mib * 1024 * 1024 : 0;
}
}  // namespace

std::vector<GpuFigures> cuda_devices() {
  std::vector<GpuFigures> gpus;
  const std::vector<int> ids = class_worker_ids(true);
  for (int w : ids) {
    GpuFigures g;
    if (is_cuda_stand_in(w)) {
      g.memory_bytes = limit_cuda_mem_bytes();
    } else {
      const unsigned node = starpu_worker_get_memory_node(static_cast<unsigned>(w));
      const starpu_ssize_t total = starpu_memory_get_total(node);
      g.memory_bytes = total > 0 ? static_cast<double>(total) : 0;
      const double mb_per_s = starpu_transfer_bandwidth(STARPU_MAIN_RAM, node);  // MB/s
      g.bus_bytes_per_second = mb_per_s > 0 ? mb_per_s * 1e6 : 0;
    }
    gpus.push_back(g);
  }
  // Each GPU's link to its neighbour in StarPU's order (the planner's blocks of GPU tiles
  // follow that order: partition::assign_gpu_units).
  for (std::size_t k = 0; ids.size() > 1 && k < ids.size(); ++k) {
    const int other = ids[k + 1 < ids.size() ? k + 1 : k - 1];
    if (is_cuda_stand_in(ids[k]) || is_cuda_stand_in(other)) continue;
    const double mb_per_s =
        starpu_transfer_bandwidth(starpu_worker_get_memory_node(static_cast<unsigned>(ids[k])),
                                  starpu_worker_get_memory_node(static_cast<unsigned>(other)));
    gpus[k].peer_bytes_per_second = mb_per_s > 0 ? mb_per_s * 1e6 : 0;
  }
  return gpus;
}

double bus_round_trip_seconds(std::size_t bytes) {
  const int node = first_cuda_node();
  if (node < 0) return 0;
  const auto gpu = static_cast<unsigned>(node);
  return (starpu_transfer_predict(STARPU_MAIN_RAM, gpu, bytes) +
          starpu_transfer_predict(gpu, STARPU_MAIN_RAM, bytes)) *
         1e-6;
}

}  // namespace tessera::tasks
