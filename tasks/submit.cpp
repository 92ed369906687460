#include "tasks/submit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <starpu_profiling.h>

#include "tasks/device_classes.hpp"
#include "tasks/idle.hpp"
#include "tasks/recorder.hpp"
#include "tasks/starpu.hpp"
#include "tessera/error.hpp"

namespace tessera::tasks {

namespace {
// StarPU's schedulers that place tasks by their performance models' predictions: the dm family
// (dm, dmda, dmdar, dmdas, dmdasd) and the HEFT ones (pheft, modular-heft...).
bool places_by_models(const std::string& scheduler) {
  return scheduler.rfind("dm", 0) == 0 || scheduler.find("heft") != std::string::npos;
}
}  // namespace

// Says once per run that a task will run without a calibrated model (StarPU predicts NaN for
// it on some architecture), with the command that calibrates the models, where the scheduler
// places by them. Each data footprint (tile shape) of a codelet is looked at once.
void Submitter::report_if_uncalibrated(Codelet& c, starpu_task* task) {
  if (c.cl.model == nullptr || !places_by_models(policy_.scheduler)) return;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
    if (!starpu_worker_can_execute_task(w, task, 0)) continue;
    starpu_perfmodel_arch* arch =
        starpu_worker_get_perf_archtype(static_cast<int>(w), STARPU_NMAX_SCHED_CTXS);
    if (!std::isnan(starpu_task_expected_length(task, arch, 0))) continue;
    uncalibrated_reported_ = true;
    if (policy_.quiet || !policy_.says_uncalibrated) return;
    char arch_name[128];
    starpu_perfmodel_get_arch_name(arch, arch_name, sizeof(arch_name), 0);
    std::cerr << "tessera: the performance model of " << c.name << " on " << arch_name
              << " is not calibrated, so " << policy_.scheduler
              << " places such tasks without a prediction; calibrate the models once with: "
              << policy_.calibrate_command << " (docs/tracing.md)" << std::endl;
    return;
  }
}

namespace {
// What a timed task's callback receives: the step it counts to, and the callback it replaced
// (the recorder's), which it calls after.
struct StepMark {
  Submitter* submitter;
  starpu_task* task;
  long step;
  void (*next)(void*);
  void* next_arg;
};
// What every task's callback receives where the workers pause as a wait drains
// (IdleWorkers::pause_when_drained): the callback it replaced, which it calls first.
struct DrainMark {
  IdleWorkers* idle;
  void (*next)(void*);
  void* next_arg;
};
void drain_mark_done(void* arg) {
  const std::unique_ptr<DrainMark> m(static_cast<DrainMark*>(arg));
  if (m->next != nullptr) m->next(m->next_arg);
  m->idle->task_ended();
}
double seconds_of(const timespec& t) { return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9; }
}  // namespace

void Submitter::mark_step(long step) {
  if (step >= 0 && starpu_profiling_status_get() != STARPU_PROFILING_ENABLE)
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  step_mark_ = step;
}

std::map<long, ClassBusy> Submitter::take_step_busy() {
  std::lock_guard<std::mutex> lock(step_mutex_);
  std::map<long, ClassBusy> taken;
  taken.swap(step_busy_);
  return taken;
}

void Submitter::timed_task_done(void* arg) {
  std::unique_ptr<StepMark> m(static_cast<StepMark*>(arg));
  if (const starpu_profiling_task_info* info = m->task->profiling_info) {
    const double s = seconds_of(info->end_time) - seconds_of(info->start_time);
    std::lock_guard<std::mutex> lock(m->submitter->step_mutex_);
    ClassBusy& busy = m->submitter->step_busy_[m->step];
    (is_cuda_worker(info->workerid) ? busy.cuda_seconds : busy.cpu_seconds) += s;
  }
  if (m->next != nullptr) m->next(m->next_arg);
}

void Submitter::forget_visits() {
  for (std::uint64_t tag : visit_tags_) starpu_tag_remove(static_cast<starpu_tag_t>(tag));
  visit_tags_.clear();
  visits_.clear();
}

namespace {
struct Prefetch {
  std::vector<starpu_data_handle_t> handles;
  unsigned node;
};
// A control task's callback (no codelet): asks StarPU to bring the handles into the node's memory,
// without waiting (the copies are StarPU's own, read-only replicas: the visit that reads them
// still waits for what its accesses order before it).
void prefetch_now(void* arg) {
  std::unique_ptr<Prefetch> p(static_cast<Prefetch*>(arg));
  for (starpu_data_handle_t h : p->handles) starpu_data_prefetch_on_node(h, p->node, 1);
}
}  // namespace

void Submitter::chain_visit(starpu_task* task, int worker, bool runs,
                            const std::vector<Handle>& prefetch) {
  std::deque<std::uint64_t>& last = visits_[worker];
  const auto tag = static_cast<starpu_tag_t>(next_visit_tag_++);
  task->use_tag = 1;
  task->tag_id = tag;
  visit_tags_.push_back(tag);
  const std::size_t ahead = kVisitsAhead;
  if (last.size() >= ahead) starpu_tag_declare_deps(tag, 1, last[last.size() - ahead]);
  if (!runs) return;  // opens the next visit: waits as it will, is not one
  const std::size_t before = kVisitsPrefetched;
  if (!prefetch.empty() && last.size() >= before) {
    // A task of no codelet that waits for the visit `before` this one and then prefetches.
    starpu_task* control = starpu_task_create();
    control->cl = nullptr;
    control->use_tag = 1;
    control->tag_id = static_cast<starpu_tag_t>(next_visit_tag_++);
    visit_tags_.push_back(control->tag_id);
    starpu_tag_declare_deps(control->tag_id, 1, last[last.size() - before]);
    auto* p = new Prefetch{{}, starpu_worker_get_memory_node(static_cast<unsigned>(worker))};
    for (Handle h : prefetch) p->handles.push_back(raw(h));
    control->callback_func = &prefetch_now;
    control->callback_arg = p;
    if (starpu_task_submit(control) != 0) {
      delete p;
      throw Error("StarPU refused a streamed visit's prefetch");
    }
  }
  last.push_back(tag);
  while (last.size() > std::max(ahead, before)) last.pop_front();
}

namespace {
// The memory node of the CUDA worker a task is pinned to; -1 for any other task.
int gpu_memory_node(const starpu_task* task) {
  if (task->execute_on_a_specific_worker == 0) return -1;
  const unsigned node = starpu_worker_get_memory_node(task->workerid);
  return starpu_node_get_kind(node) == STARPU_CUDA_RAM ? static_cast<int>(node) : -1;
}

struct Fetched {
  starpu_data_handle_t handle;
  int node;
};
void release_fetched(void* arg) {
  std::unique_ptr<Fetched> f(static_cast<Fetched*>(arg));
  starpu_data_release_on_node(f->handle, f->node);
}

// Copies `handle` to memory `node` once the tasks submitted before that write it have ended:
// an acquisition in StarPU's order of the handle's accesses (it waits for the last writer, the
// next writer waits for it), released as soon as the copy is there. Without it, a task whose
// start waits on something else gets its inputs only when it becomes ready.
void fetch_when_written(starpu_data_handle_t handle, int node) {
  starpu_data_acquire_on_node_cb_sequential_consistency(handle, node, STARPU_R, &release_fetched,
                                                        new Fetched{handle, node}, 1);
}
}  // namespace

void Submitter::submit(Codelet& c, Handles first, Handles rest, void* arg, std::size_t arg_size,
                       bool owned, TaskTag tag, Placement place) {
  const std::size_t n = first.size + rest.size;
  Handle inline_handles[kInlineBuffers];
  int inline_modes[kInlineBuffers];
  std::vector<Handle> more_handles;  // only for tasks with many buffers
  std::vector<int> more_modes;
  Handle* handles = inline_handles;
  int* modes = inline_modes;
  if (n > kInlineBuffers) {
    more_handles.resize(n);
    more_modes.resize(n);
    handles = more_handles.data();
    modes = more_modes.data();
  }
  for (std::size_t i = 0; i < first.size; ++i) {
    handles[i] = first.data[i];
    modes[i] = c.modes[0];
  }
  for (std::size_t i = 0; i < rest.size; ++i) {
    handles[first.size + i] = rest.data[i];
    modes[first.size + i] = c.modes[1];
  }
  submit_any(c, handles, modes, n, arg, arg_size, owned, tag, place);
}

Submitter::Submitter(SubmitPolicy policy, Recorder* recorder, IdleWorkers& idle)
    : policy_(std::move(policy)), recorder_(recorder), idle_(idle) {
  // CUDA: the CUDA workers, or the emulated device's stand-ins for them (tasks/device_classes).
  for (int k = 0; k < 2; ++k) class_workers_[k] = class_worker_ids(k == 1);
}

int Submitter::worker_of_tile(bool cuda, int tile, const std::vector<int>& ids) {
  // Round-robin over this rank's tiles of the class, in the order their first task comes, not
  // over global tile numbers: on several ranks a rank's tiles need not be consecutive numbers
  // (cardiac2d's 2 x 4 tiles on 2 ranks: rank 0 has tiles 0, 2, 4, 6), and tile % workers put
  // all of them on one of its two GPUs (issue 48, item 3: emulated.mpi.app.cardiac2d.gpus2).
  // On one rank a part's tiles are consecutive and come in order: the same as tile % workers
  // but for a rotation. A tile number keeps its worker, as under tile % workers (grids that
  // number their tiles alike, MG's levels, have tile t of each on one worker).
  std::map<int, int>& workers = tile_workers_[cuda ? 1 : 0];
  return workers.try_emplace(tile, ids[workers.size() % ids.size()]).first->second;
}

void Submitter::submit_with_modes(Codelet& c, const std::vector<Handle>& handles,
                                  const std::vector<detail::Access>& access, void* arg,
                                  std::size_t arg_size, bool owned, TaskTag tag, Placement place) {
  int inline_modes[kInlineBuffers];
  std::vector<int> more_modes;  // only for tasks with many buffers
  int* modes = inline_modes;
  if (access.size() > kInlineBuffers) {
    more_modes.resize(access.size());
    modes = more_modes.data();
  }
  for (std::size_t i = 0; i < access.size(); ++i) modes[i] = mode_of(access[i]);
  submit_any(c, handles.data(), modes, handles.size(), arg, arg_size, owned, tag, place);
}

void Submitter::submit_any(Codelet& c, const Handle* handles, const int* modes, std::size_t count,
                           void* arg, std::size_t arg_size, bool owned, TaskTag tag,
                           Placement place) {
  // The one way into StarPU for tasks: paused workers would never run it, and the submission
  // itself waits for running tasks when the submitted-task limit is reached.
  const IdleWorkers::Awake awake(idle_);
  tag.seq = submissions_++;
  tag.stencil = c.stencil.c_str();
  tag.kind = c.kind.c_str();
  fit_nodes(c, count);
  starpu_task* task = nullptr;
  const auto mode = [&](std::size_t i) { return static_cast<starpu_data_access_mode>(modes[i]); };
#ifdef TESSERA_WITH_MPI
  std::vector<starpu_data_descr> descrs;
  if (policy_.distributed) {
    // Every rank submits every task: StarPU-MPI runs it on the owner of the data it writes and
    // posts the sends and receives of the data it reads from other ranks (the face buffers),
    // which keeps the graph identical on every rank and lets StarPU-MPI decide the transfers.
    for (std::size_t i = 0; i < count; ++i) descrs.push_back({raw(handles[i]), mode(i)});
    task =
        starpu_mpi_task_build(MPI_COMM_WORLD, &c.cl, STARPU_DATA_MODE_ARRAY, descrs.data(),
                              static_cast<int>(descrs.size()), STARPU_PRIORITY, place.priority, 0);
    if (task == nullptr && owned) std::free(arg);  // another rank runs it
  }
#endif
  if (!policy_.distributed) {
    task = starpu_task_create();
    task->cl = &c.cl;
    const int n = static_cast<int>(count);
    task->nbuffers = n;
    if (n > STARPU_NMAXBUFS) {
      task->dyn_handles =
          static_cast<starpu_data_handle_t*>(std::malloc(n * sizeof(starpu_data_handle_t)));
      task->dyn_modes =
          static_cast<starpu_data_access_mode*>(std::malloc(n * sizeof(starpu_data_access_mode)));
    }
    for (int i = 0; i < n; ++i) {
      STARPU_TASK_SET_HANDLE(task, raw(handles[static_cast<std::size_t>(i)]), i);
      STARPU_TASK_SET_MODE(task, mode(static_cast<std::size_t>(i)), i);
    }
  }
  if (task != nullptr) {  // this rank runs it
    task->cl_arg = arg;
    task->cl_arg_size = arg_size;
    task->cl_arg_free = owned ? 1 : 0;
    task->priority = place.priority;
    if (place.work > 0) task->flops = place.work;
    if (c.sized_by_streamed_bytes && place.streamed_bytes > 0) task->flops = place.streamed_bytes;
    // The planner's placement of the tile (partition::Planner: a grid's split, a hand-set
    // --gpu-fraction, a mesh's tiles): every task of a tile runs on its part's
    // workers, so the tile stays in that part's memory and only face buffers cross the bus. A
    // kind without a CUDA implementation stays on CPU workers.
    if (place.device.kind != detail::DeviceClass::Any) {
      const bool cuda =
          place.device.kind == detail::DeviceClass::Cuda && c.cl.cuda_funcs[0] != nullptr;
      // (On the emulated device's stand-ins for CUDA workers, CPU workers to StarPU, the codelet
      // has no STARPU_CUDA: the worker id below pins it.)
      task->where = cuda && (c.cl.where & STARPU_CUDA) ? STARPU_CUDA : STARPU_CPU;
      // And on one worker of that class, the same for every task of the tile (round-robin
      // over the tiles): the chooser sized the part's tiles in whole rounds of its workers,
      // and dmda, left to place a one-round CPU part, put two or three tiles of a step on one
      // worker while others idled, a far longer step than eager's, lws's or ws's (figures:
      // docs/scheduling.md, "Placement that sticks").
      const std::vector<int>& ids = class_workers_[cuda ? 1 : 0];
      if (tag.tile >= 0 && !ids.empty() && (cuda || !place.team)) {
        task->execute_on_a_specific_worker = 1;
        // The plan's GPU for the tile where it names one (a grid's GPU tiles: contiguous
        // blocks of planes per GPU), else round-robin over the rank's tiles.
        const int gpu = place.device.gpu;
        task->workerid =
            static_cast<unsigned>(gpu >= 0 ? ids[static_cast<std::size_t>(gpu) % ids.size()]
                                           : worker_of_tile(cuda, tag.tile, ids));
        if (place.visit != Placement::Visit::None && cuda)
          chain_visit(task, static_cast<int>(task->workerid), place.visit == Placement::Visit::Runs,
                      place.prefetch);
      }
    }
    if (policy_.name_tasks) {
      names_.push_back(name_of(tag));
      task->name = names_.back().c_str();
    }
    tag.early_copies = static_cast<int>(place.fetch_early.size());
    if (recorder_ != nullptr) recorder_->watch(task, tag, policy_.distributed);
    if (step_mark_ >= 0) {
      task->callback_arg =
          new StepMark{this, task, step_mark_, task->callback_func, task->callback_arg};
      task->callback_func = &Submitter::timed_task_done;
      task->callback_arg_free = 0;  // ours (starpu_mpi_task_build would have StarPU free it)
    }
    if (idle_.pauses_when_drained()) {  // the outermost callback: after the others
      task->callback_arg = new DrainMark{&idle_, task->callback_func, task->callback_arg};
      task->callback_func = &drain_mark_done;
      task->callback_arg_free = 0;
      idle_.task_submitted();
    }
    // Every footprint is kept (perfmodels::coverage lists the ones this run used).
    const std::uint32_t footprint =
        c.model.footprint != nullptr ? c.model.footprint(task) : starpu_task_data_footprint(task);
    const bool new_footprint = c.footprints.insert(footprint).second;
    // A calibrating run is the fix itself: nothing to say then.
    if (new_footprint && !uncalibrated_reported_ && !policy_.calibrating)
      report_if_uncalibrated(c, task);
    const int early_node = place.fetch_early.empty() ? -1 : gpu_memory_node(task);
    const int ret = starpu_task_submit(task);
    if (ret != 0)
      throw Error("StarPU refused task " + name_of(tag) + " (error " + std::to_string(ret) +
                  "): no worker can run it; check --ncpu/--ncuda");
    ++c.submitted;
    ++submitted_;
    if (early_node >= 0)
      for (Handle h : place.fetch_early) fetch_when_written(raw(h), early_node);
  }
#ifdef TESSERA_WITH_MPI
  if (policy_.distributed)
    starpu_mpi_task_post_build(MPI_COMM_WORLD, &c.cl, STARPU_DATA_MODE_ARRAY, descrs.data(),
                               static_cast<int>(descrs.size()), STARPU_PRIORITY, place.priority, 0);
#endif
}

}  // namespace tessera::tasks

// The accessors the header templates' kernels call (include/tessera/detail/task.hpp).
namespace tessera::detail {

void* buffer_data(void** buffers, int i) {
  return reinterpret_cast<void*>(STARPU_VECTOR_GET_PTR(buffers[i]));
}

std::size_t buffer_elements(void** buffers, int i) { return STARPU_VECTOR_GET_NX(buffers[i]); }

int team_rank() { return starpu_combined_worker_get_rank(); }

int team_size() { return starpu_combined_worker_get_size(); }

void* cuda_stream() {
#ifdef STARPU_USE_CUDA
  return static_cast<void*>(starpu_cuda_get_local_stream());
#else
  return nullptr;
#endif
}

}  // namespace tessera::detail
