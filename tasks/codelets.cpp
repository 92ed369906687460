// Codelets built from task-kind declarations, and task submission.
#include <starpu.h>
#ifdef TESSERA_WITH_MPI
#include <starpu_mpi.h>
#endif

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/runtime_state.hpp"
#include "tessera/detail/task.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace {
starpu_data_access_mode mode_of(Access a) {
  switch (a) {
    case Access::Read: return STARPU_R;
    case Access::Write: return STARPU_W;
    case Access::ReadWrite: return STARPU_RW;
  }
  return STARPU_R;
}
// Says once per run that a task will run without a calibrated model (StarPU predicts NaN for
// it on some architecture), with the command that calibrates the models. Each data footprint
// (tile shape) of a codelet is looked at once.
void report_if_uncalibrated(Runtime::State& rt, Codelet& c, starpu_task* task) {
  if (c.cl.model == nullptr) return;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    if (!starpu_worker_can_execute_task(w, task, 0)) continue;
    starpu_perfmodel_arch* arch =
        starpu_worker_get_perf_archtype(static_cast<int>(w), STARPU_NMAX_SCHED_CTXS);
    if (!std::isnan(starpu_task_expected_length(task, arch, 0))) continue;
    rt.uncalibrated_reported = true;
    if (rt.options.quiet) return;
    char arch_name[128];
    starpu_perfmodel_get_arch_name(arch, arch_name, sizeof(arch_name), 0);
    std::cerr << "tessera: the performance model of " << c.name << " on " << arch_name
              << " is not calibrated, so " << rt.scheduler
              << " places such tasks without a prediction; calibrate the models once with: "
              << rt.options.calibrate_command << " (docs/tracing.md)" << std::endl;
    return;
  }
}
}  // namespace

Codelet& codelet(const std::string& stencil, const std::string& type, const TaskKind& kind) {
  Runtime::State& rt = runtime_state("submitting a task");
  const std::string symbol = "tessera." + stencil + "." + kind.kind + "." + type;
  auto& slot = rt.codelets[symbol];
  if (slot) {
    // One name, one implementation: otherwise tasks would run the wrong kernel and the
    // perfmodel would mix the timings of two different stencils.
    if (slot->cl.cpu_funcs[0] != kind.cpu)
      throw Error("stencil name '" + stencil + "' is already used by another point functor (" +
                  kind.kind + " tasks on " + type + "); give each stencil its own name");
    return *slot;
  }
  slot = std::make_unique<Codelet>();
  Codelet& c = *slot;
  c.symbol = symbol;
  c.name = stencil + ":" + kind.kind;
  std::memset(&c.model, 0, sizeof(c.model));
  c.model.type = STARPU_HISTORY_BASED;
  c.model.symbol = c.symbol.c_str();
  starpu_codelet_init(&c.cl);
  c.cl.where = STARPU_CPU;
  c.cl.cpu_funcs[0] = kind.cpu;
  c.cl.cpu_funcs_name[0] = c.name.c_str();
#ifdef STARPU_USE_CUDA
  if (kind.cuda != nullptr) {
    c.cl.where |= STARPU_CUDA;
    c.cl.cuda_funcs[0] = kind.cuda;
    c.cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
#endif
  c.cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  c.cl.name = c.name.c_str();
  c.cl.model = kind.untimed ? nullptr : &c.model;
  c.modes[0] = mode_of(kind.first);
  c.modes[1] = mode_of(kind.rest);
  return c;
}

namespace {

// Names, trace callback and arguments of a task this rank runs.
void finish_task(Runtime::State& rt, starpu_task* task, void* arg, std::size_t arg_size,
                 bool owned, const std::string& name, const TaskPlace& place) {
  task->cl_arg = arg;
  task->cl_arg_size = arg_size;
  task->cl_arg_free = owned ? 1 : 0;
  rt.task_names.push_back(name);
  task->name = rt.task_names.back().c_str();
  task->priority = place.priority;
  // A hand-set split pins the first round(F x tiles) tiles to CUDA workers, the rest to CPU
  // workers; every task of a tile goes the same way, so tiles stay where they are.
  const double fraction = rt.options.gpu_fraction;
  if (fraction >= 0 && place.tile >= 0)
    task->where = place.tile < std::lround(fraction * place.tiles) ? STARPU_CUDA : STARPU_CPU;
  if (rt.trace) {
    task->callback_func = &TraceRecorder::task_done;
    task->callback_arg = task;
    // starpu_mpi_task_build marks the callback argument as StarPU's to free; the task is not.
    task->callback_arg_free = 0;
  }
}

// Submits a task this rank runs, and counts it (traces are checked against the counts).
void submit_here(Runtime::State& rt, Codelet& c, starpu_task* task, const std::string& name) {
  const bool new_footprint = c.footprints.insert(starpu_task_data_footprint(task)).second;
  // A calibrating run is the fix itself: nothing to say then.
  if (new_footprint && !rt.uncalibrated_reported && !rt.options.calibrate)
    report_if_uncalibrated(rt, c, task);
  const int ret = starpu_task_submit(task);
  if (ret != 0)
    throw Error("StarPU refused task " + name + " (error " + std::to_string(ret) +
                "): no worker can run it; check --ncpu/--ncuda");
  ++c.submitted;
  ++rt.tasks_submitted;
}

}  // namespace

void submit(Codelet& c, const std::vector<Handle>& first, const std::vector<Handle>& rest,
            void* arg, std::size_t arg_size, bool owned, const std::string& name, TaskPlace place) {
  Runtime::State& rt = runtime_state("submitting a task");
#ifdef TESSERA_WITH_MPI
  if (rt.distributed) {
    // Every rank submits every task: StarPU-MPI runs it on the owner of the data it writes and
    // posts the sends and receives of the data it reads from other ranks (the face buffers),
    // which keeps the graph identical on every rank and lets StarPU-MPI decide the transfers.
    std::vector<starpu_data_descr> descrs;
    for (Handle h : first) descrs.push_back({h, c.modes[0]});
    for (Handle h : rest) descrs.push_back({h, c.modes[1]});
    const int n = static_cast<int>(descrs.size());
    starpu_task* task = starpu_mpi_task_build(MPI_COMM_WORLD, &c.cl, STARPU_DATA_MODE_ARRAY,
                                              descrs.data(), n, STARPU_PRIORITY, place.priority, 0);
    if (task != nullptr) {
      finish_task(rt, task, arg, arg_size, owned, name, place);
      submit_here(rt, c, task, name);
    } else if (owned) {
      std::free(arg);  // another rank runs it
    }
    starpu_mpi_task_post_build(MPI_COMM_WORLD, &c.cl, STARPU_DATA_MODE_ARRAY, descrs.data(), n,
                               STARPU_PRIORITY, place.priority, 0);
    return;
  }
#endif
  starpu_task* task = starpu_task_create();
  task->cl = &c.cl;
  const int n = static_cast<int>(first.size() + rest.size());
  task->nbuffers = n;
  if (n > STARPU_NMAXBUFS) {
    task->dyn_handles = static_cast<starpu_data_handle_t*>(std::malloc(n * sizeof(starpu_data_handle_t)));
    task->dyn_modes = static_cast<starpu_data_access_mode*>(std::malloc(n * sizeof(starpu_data_access_mode)));
  }
  int i = 0;
  for (Handle h : first) {
    STARPU_TASK_SET_HANDLE(task, h, i);
    STARPU_TASK_SET_MODE(task, c.modes[0], i);
    ++i;
  }
  for (Handle h : rest) {
    STARPU_TASK_SET_HANDLE(task, h, i);
    STARPU_TASK_SET_MODE(task, c.modes[1], i);
    ++i;
  }
  finish_task(rt, task, arg, arg_size, owned, name, place);
  submit_here(rt, c, task, name);
}

void* buffer_data(void** buffers, int i) {
  return reinterpret_cast<void*>(STARPU_VECTOR_GET_PTR(buffers[i]));
}

std::size_t buffer_elements(void** buffers, int i) { return STARPU_VECTOR_GET_NX(buffers[i]); }

void* cuda_stream() {
#ifdef STARPU_USE_CUDA
  return static_cast<void*>(starpu_cuda_get_local_stream());
#else
  return nullptr;
#endif
}

long next_step() { return runtime_state("applying a stencil").steps++; }

Handle register_vector(void* data, std::size_t elements, std::size_t element_size, int owner) {
  Runtime::State& rt = runtime_state("registering data");
  starpu_data_handle_t h = nullptr;
  starpu_vector_data_register(&h, data != nullptr ? STARPU_MAIN_RAM : -1,
                              reinterpret_cast<uintptr_t>(data), static_cast<std::uint32_t>(elements),
                              element_size);
  const std::int64_t tag = rt.next_tag++;
#ifdef TESSERA_WITH_MPI
  if (rt.distributed) starpu_mpi_data_register(h, tag, owner);
#endif
  (void)tag;
  (void)owner;
  return h;
}

void unregister_buffer(Handle h) { starpu_data_unregister(h); }

}  // namespace tessera::detail
