#include "tasks/codelets.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "tasks/device_classes.hpp"
#include "tasks/halo.hpp"
#include "tasks/starpu.hpp"
#include "tessera/error.hpp"

namespace tessera::tasks {

#ifdef STARPU_SIMGRID
namespace {
// In simulation every task needs a predicted duration (StarPU stops the program otherwise).
// Untimed kinds have no history (they run once per halo plan or per reduction, outside the
// time loop): they are given 1 us.
double untimed_cost(starpu_task*, unsigned) { return 1.0; }
// The bytes a halo pack or a boundary task moves: its face buffers (all but the first, the
// tile), read and written; its tile only where the faces are.
std::size_t face_bytes_moved(starpu_task* task, unsigned) {
  std::size_t bytes = 0;
  for (unsigned i = 1; i < task->nbuffers; ++i)
    bytes += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
  return 2 * bytes;
}
// A time block's bytes streamed (tasks::Placement::streamed_bytes), which the submitter gives
// its tasks as their flops in simulation: a block of d steps reads and writes each step's window
// once, its ghost planes only as far as that step recomputes them, and its faces once, where its
// buffers' size would charge all of them d times.
std::size_t streamed_bytes(starpu_task* task, unsigned) {
  return static_cast<std::size_t>(task->flops);
}
}  // namespace
#endif

namespace {
// A tile task's work (its flops: points x steps, tasks::Placement) in its footprint: a
// temporal block of fewer steps (a run's last) gets a history entry of its own, and each
// entry's flops stay those of its tasks (StarPU drops an entry's flops when they differ).
std::uint32_t with_work(starpu_task* task, std::uint32_t footprint) {
  return task->flops > 0 ? starpu_hash_crc32c_be_n(&task->flops, sizeof(task->flops), footprint)
                         : footprint;
}

// An all-pairs task's size for its model: its interactions (its flops, core/tiles/pairs.cpp),
// not its bytes: tiles of different extents cost the product of their points, which the
// planner (partition::Planner::pairs) reads back per interaction.
std::size_t interactions(starpu_task* task, unsigned) {
  return static_cast<std::size_t>(task->flops);
}

std::uint32_t tile_footprint(starpu_task* task) {
  return with_work(task, starpu_task_data_footprint(task));
}

// The footprint (the history entry) of a task that also does exchange copies: the sizes of
// its kernel's buffers only, which come first. Whether a task copies ghost layers in or packs
// faces (the first steps of a run do not) then does not split its samples, so the entries a
// run uses are the ones its calibration rounds fill.
std::uint32_t halo_work_footprint(starpu_task* task) {
  const auto& work = *static_cast<const HaloWork*>(task->cl_arg);
  int kernel_buffers = STARPU_TASK_GET_NBUFFERS(task);
  for (int k = 0; k < work.fills; ++k)
    kernel_buffers = std::min(kernel_buffers, work.fill[k].first);
  for (int k = 0; k < work.packs; ++k)
    kernel_buffers = std::min(kernel_buffers, work.pack[k].first);
  std::uint32_t footprint = 0;
  for (int i = 0; i < kernel_buffers; ++i) {
    const std::size_t size = starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
    footprint = starpu_hash_crc32c_be_n(&size, sizeof(size), footprint);
  }
  return with_work(task, footprint);
}
}  // namespace

bool sized_by_streamed_bytes(const Codelet& c) { return c.sized_by_streamed_bytes; }

bool emulated_cuda_asked() {
  const char* v = std::getenv("TESSERA_EMULATED_CUDA");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

namespace {
// The emulated device (builds with TESSERA_EMULATE_CUDA, docs/gpu.md): with
// TESSERA_EMULATED_CUDA=1 in the environment when the run starts, a kind with a CUDA body runs
// it on CPU workers, its launches run by the emulated launcher. The perfmodels get their own
// symbols, so emulated timings never mix with the CPU bodies'. With TESSERA_EMULATED_CUDA=strict
// the CPU workers stand for GPU workers only: a kind without a CUDA body is an error, as StarPU
// refuses such a task in a run with CUDA workers only (--ncpu 0), but named before it is
// submitted. With TESSERA_EMULATED_CUDA=split[:K] the first K CPU workers (1 unless given) stand
// in for CUDA workers and the others stay CPU workers: a mixed machine, whose stand-ins run the
// CUDA bodies and only the kinds that have one, the others the CPU bodies (split_entry).
enum class Emulation { Off, On, Strict, Split };
// The most stand-ins split:K may ask for: one CPU worker must stay a CPU worker, and StarPU
// starts at most STARPU_MAXCPUS of them.
constexpr long kMaxStandIns = STARPU_MAXCPUS - 1;
struct EmulationMode {
  Emulation mode = Emulation::Off;
  int stand_ins = 0;  // Split: the CPU workers that stand in for CUDA workers
};
// TESSERA_EMULATED_CUDA as documented (docs/gpu.md): unset, empty or 0 (off), 1, strict,
// split or split:K; anything else is refused, so that "off", "false" or a typo never turns the
// device on, and a build without the device says so rather than run the CPU bodies silently.
EmulationMode emulation_mode() {
  if (!emulated_cuda_asked()) return {};
  const char* v = std::getenv("TESSERA_EMULATED_CUDA");
  const std::string setting = std::string("TESSERA_EMULATED_CUDA=") + v;
#if TESSERA_EMULATED_DEVICE
  if (std::strcmp(v, "1") == 0) return {Emulation::On, 0};
  if (std::strcmp(v, "strict") == 0) return {Emulation::Strict, 0};
  if (std::strcmp(v, "split") == 0) return {Emulation::Split, 1};
  char* end = nullptr;
  const long k = std::strncmp(v, "split:", 6) == 0 ? std::strtol(v + 6, &end, 10) : 0;
  if (end == nullptr || end == v + 6 || *end != '\0' || k < 1 || k > kMaxStandIns)
    throw Error(setting +
                " is not a mode of the emulated device; give 0 (off, as unset), 1, strict, "
                "split (one CPU worker stands in for a CUDA worker) or split:K (K of them, 1 to " +
                std::to_string(kMaxStandIns) + "), docs/gpu.md");
  return {Emulation::Split, static_cast<int>(k)};
#else
  throw Error(setting +
              " asks for the emulated CUDA device, and this build has none (configured with "
              "TESSERA_EMULATE_CUDA=OFF); unset it (or set it to 0), or configure with "
              "-DTESSERA_EMULATE_CUDA=ON (docs/gpu.md)");
#endif
}

// The split mode's bodies: the CPU body of each codelet whose CPU entry is split_entry (its CUDA
// body is its cuda_funcs[0]), by codelet. Written by get(), read by the workers.
std::shared_mutex split_mutex;
std::unordered_map<const starpu_codelet*, detail::KernelFn> split_cpu_bodies;

// The CPU entry of a kind with a CUDA body in the split mode: its CUDA body on a stand-in (the
// emulated launcher runs its launches), its CPU body on any other CPU worker (a member of a
// team included).
void split_entry(void** buffers, void* arg) {
  const starpu_codelet* cl = starpu_task_get_current()->cl;
  if (is_cuda_stand_in(starpu_worker_get_id())) {
    cl->cuda_funcs[0](buffers, arg);
    return;
  }
  detail::KernelFn cpu = nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(split_mutex);
    cpu = split_cpu_bodies.at(cl);
  }
  cpu(buffers, arg);
}

// Whether `worker`, or a member of it where it is a team (a combined worker), stands in for a
// CUDA worker.
bool has_stand_in(unsigned worker) {
  if (worker < starpu_worker_get_count()) return is_cuda_stand_in(static_cast<int>(worker));
  int size = 0;
  int* members = nullptr;
  if (starpu_combined_worker_get_description(static_cast<int>(worker), &size, &members) != 0)
    return false;
  for (int i = 0; i < size; ++i)
    if (is_cuda_stand_in(members[i])) return true;
  return false;
}
// In the split mode a stand-in runs only the kinds a CUDA worker could run (a CUDA body), and
// alone: a team of CPU workers never counts one.
int cpu_workers_only(unsigned worker, starpu_task*, unsigned) { return !has_stand_in(worker); }
int no_team_with_stand_in(unsigned worker, starpu_task*, unsigned) {
  return worker < starpu_worker_get_count() || !has_stand_in(worker);
}
}  // namespace

CodeletRegistry::CodeletRegistry() {
  const EmulationMode m = emulation_mode();
  emulate_ = m.mode == Emulation::On || m.mode == Emulation::Strict;
  strict_ = m.mode == Emulation::Strict;
  stand_ins_ = m.stand_ins;
}

CodeletRegistry::~CodeletRegistry() {
  std::unique_lock<std::shared_mutex> lock(split_mutex);
  for (const auto& [key, c] : codelets_) split_cpu_bodies.erase(&c->cl);
}

detail::KernelFn CodeletRegistry::cpu_entry(const detail::TaskKind& kind) const {
  return emulate_ && kind.cuda != nullptr ? kind.cuda : kind.cpu;
}

Codelet& CodeletRegistry::get(const std::string& stencil, const std::string& types,
                              const detail::TaskKind& kind) {
  if (strict_ && kind.cuda == nullptr)
    throw Error("TESSERA_EMULATED_CUDA=strict: '" + stencil + "' (its " + kind.kind + " tasks on " +
                types +
                ") has no CUDA body, so a run with GPU workers only cannot run it; give it one "
                "(a user task: a cuda(stream, views...) member, docs/gpu.md)");
  const bool split = stand_ins_ > 0 && kind.cuda != nullptr;  // both bodies, by worker
  const std::string symbol = "tessera." + stencil + "." + kind.kind + "." + types +
                             (emulate_ && kind.cuda != nullptr ? ".emulated-cuda"
                              : split                          ? ".emulated-split"
                                                               : "");
  // An untimed kind has no model file to share, so each implementation gets its own codelet
  // (e.g. sums of two different point functions).
  std::string key = symbol;
  if (kind.untimed) {
    char entry[32];
    std::snprintf(entry, sizeof(entry), "@%p", reinterpret_cast<void*>(kind.cpu));
    key += entry;
  }
  auto& slot = codelets_[key];
  if (slot) {
    // One name, one implementation: otherwise tasks would run the wrong kernel and the
    // perfmodel would mix the timings of two different stencils.
    if (slot->entry != cpu_entry(kind))
      throw Error("name '" + stencil + "' is already used by another functor (" + kind.kind +
                  " tasks on " + types +
                  "); give each stencil, loop, task and boundary function "
                  "its own name");
    return *slot;
  }
  slot = std::make_unique<Codelet>();
  Codelet& c = *slot;
  c.symbol = symbol;
  c.stencil = stencil;
  c.kind = kind.kind;
  c.name = stencil + ":" + kind.kind;
  std::memset(&c.model, 0, sizeof(c.model));
  c.model.type = STARPU_HISTORY_BASED;
  c.model.symbol = c.symbol.c_str();
  c.model.footprint = is_halo_work(kind) ? &halo_work_footprint : &tile_footprint;
  if (c.kind == "pairs") c.model.size_base = &interactions;
  starpu_codelet_init(&c.cl);
  c.entry = cpu_entry(kind);
  c.cl.where = STARPU_CPU;
  c.cl.cpu_funcs[0] = split ? &split_entry : c.entry;
  c.cl.cpu_funcs_name[0] = c.name.c_str();
  // In simulation the implementation is never called: that the kind has one (it was compiled
  // by nvcc) is what lets the scheduler place it on a simulated GPU, timed by its model.
  // With the emulated device the CUDA entries are host code: never on a CUDA worker.
#if (defined(STARPU_USE_CUDA) || defined(STARPU_SIMGRID)) && !TESSERA_EMULATED_DEVICE
  if (kind.cuda != nullptr) {
    c.cl.where |= STARPU_CUDA;
    c.cl.cuda_funcs[0] = kind.cuda;
    c.cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
#endif
  // Every worker of a team (a combined worker) calls the entry; a CUDA body run on the emulated
  // device is one GPU worker's, never a team's (each member would run all of it).
  if (kind.team && c.entry == kind.cpu) {
    c.cl.type = STARPU_SPMD;
    c.cl.max_parallelism = INT_MAX;
  }
  // The split mode (TESSERA_EMULATED_CUDA=split): the CUDA body is the codelet's CUDA
  // implementation, run by split_entry on the stand-ins, which StarPU knows as CPU workers
  // (where stays STARPU_CPU: a StarPU without CUDA has no other class); a kind without one never
  // runs on a stand-in.
  if (stand_ins_ > 0) {
    if (split) {
      c.cl.cuda_funcs[0] = kind.cuda;
      std::unique_lock<std::shared_mutex> lock(split_mutex);
      split_cpu_bodies[&c.cl] = kind.cpu;
    }
    c.cl.can_execute = split ? (kind.team ? &no_team_with_stand_in : nullptr) : &cpu_workers_only;
  }
  c.cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  c.cl.name = c.name.c_str();
  c.cl.model = kind.untimed ? nullptr : &c.model;
#ifdef STARPU_SIMGRID
  // Simulated models give a time for every data size (a x size^b + c, scripts/sim/simmodel.py):
  // automatic tiles and a moved split make tile sizes no calibration has seen.
  c.model.type = STARPU_NL_REGRESSION_BASED;
  // Sized by what they move (simmodel.py's time for these kinds): priced on every buffer, a
  // pack task of a 1 GB GPU tile took a third of a millisecond to copy two faces.
  if (c.kind == "halo-pack" || c.kind == "boundary") c.model.size_base = &face_bytes_moved;
  if (c.kind.rfind("time-block", 0) == 0) {
    c.model.size_base = &streamed_bytes;
    c.sized_by_streamed_bytes = true;
  }
  if (kind.untimed) {
    c.model.type = STARPU_COMMON;
    c.model.cost_function = &untimed_cost;
    c.cl.model = &c.model;
  }
#endif
  c.modes[0] = mode_of(kind.first);
  c.modes[1] = mode_of(kind.rest);
  by_entry_[kind.cpu].push_back(&c);
  return c;
}

Codelet* CodeletRegistry::find(const std::string& stencil, const detail::TaskKind& kind) const {
  const auto at = by_entry_.find(kind.cpu);
  if (at == by_entry_.end()) return nullptr;
  for (Codelet* c : at->second)
    if (c->stencil == stencil && c->kind == kind.kind) return c;
  return nullptr;
}

}  // namespace tessera::tasks
