// The Runtime: resolves the options against the STARPU_* environment, checks them, starts the
// engine (tasks/) and Kokkos, and holds the context every field and stencil works in.
#include "tessera/runtime.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <type_traits>
#include <vector>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "core/runtime/files.hpp"
#include "core/runtime/model_files.hpp"
#include "tasks/codelets.hpp"
#include "tasks/data.hpp"
#include "tasks/device_classes.hpp"
#include "tessera/detail/field_storage.hpp"
#include "tessera/error.hpp"
#include "tessera/options_fields.hpp"

namespace tessera {

namespace {

// The one process-wide pointer: the live runtime's context, for creating fields.
detail::Context* live = nullptr;

// The default scheduler, by the workers a run can have (docs/scheduling.md, "The default
// scheduler, run by run"). With CUDA workers: dmda, whose performance models and transfer costs
// place tasks between the classes. CPU workers only: nothing to place, and dmda's prediction at
// each push sits between a task's end and its successor's start (docs/scheduling.md has the
// figures). lws over eager, alike on 2 cores: a queue per worker (eager's one queue is shared by
// every worker) and a task pushed to the worker that released it (its tile's cache).
constexpr const char* kSchedulerWithCuda = "dmda";
constexpr const char* kSchedulerCpuOnly = "lws";

// How long a rank leaving on an error waits for the others to leave too (the same bad input
// fails on every rank within milliseconds) before it ends every rank (docs/reliability.md).
constexpr double kFailureWaitSeconds = 5.0;

// Set when a rank left StarPU running because the other ranks did not fail with it: nothing
// may wait for them any more, so report_error ends every rank.
bool abandoned = false;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// Where StarPU keeps its models and bus calibration when no directory is given: under the first
// of these variables that is set (StarPU 1.3 and 1.4 alike), then /tmp. StarPU aborts the
// program when it cannot create that directory (an unwritable HOME), so it is checked first.
const char* const kStarpuHomeVariables[] = {"XDG_CACHE_HOME", "STARPU_HOME", "HOME",
                                            "TMPDIR",         "TEMP",        "TMP"};

std::string model_home_source() {
  for (const char* name : kStarpuHomeVariables)
    if (env(name) != nullptr) return name;
  return "no HOME: /tmp";
}

std::string default_model_dir() {
  for (const char* name : kStarpuHomeVariables)
    if (env(name) != nullptr) return std::string(env(name)) + "/.starpu/sampling";
  return "/tmp/.starpu/sampling";
}

// StarPU reads these as integers and aborts the program on anything but a
// whole number >= 0 ("abc", "-1", "2x"): checked here first, with a message.
constexpr const char* kNumericStarpuVariables[] = {"STARPU_NCPU",
                                                   "STARPU_NCPUS",
                                                   "STARPU_NCUDA",
                                                   "STARPU_NOPENCL",
                                                   "STARPU_NMPI_MS",
                                                   "STARPU_RESERVE_NCPU",
                                                   "STARPU_CALIBRATE",
                                                   "STARPU_BUS_CALIBRATE",
                                                   "STARPU_SILENT",
                                                   "STARPU_LIMIT_MAX_SUBMITTED_TASKS",
                                                   "STARPU_LIMIT_MIN_SUBMITTED_TASKS",
                                                   "STARPU_STATS",
                                                   "STARPU_MEMORY_STATS",
                                                   "STARPU_WORKERS_NOBIND",
                                                   "STARPU_SINGLE_COMBINED_WORKER",
                                                   "STARPU_DISABLE_ASYNCHRONOUS_COPY",
                                                   "STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY",
                                                   "STARPU_FXT_TRACE",
                                                   "STARPU_GENERATE_TRACE",
                                                   "STARPU_COMM_STATS",
                                                   "STARPU_MPI_STATS",
                                                   "STARPU_LIMIT_CPU_MEM",
                                                   "STARPU_LIMIT_CUDA_MEM",
                                                   "STARPU_HISTORY_MAX_ERROR",
                                                   "STARPU_CALIBRATE_MINIMUM",
                                                   "STARPU_PROFILING",
                                                   "STARPU_WATCHDOG_TIMEOUT",
                                                   "STARPU_WATCHDOG_CRASH",
                                                   "STARPU_NWORKER_PER_CUDA",
                                                   "STARPU_CUDA_PIPELINE"};

// `text` as a whole number >= 0 (what StarPU accepts), or -1.
long whole_number(const char* text) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 1000000000L) return -1;
  return v;
}

// StarPU reads these as lists of device numbers and aborts the program on a list without one
// ("abc", " "), or crashes on a negative one ("-1"): checked here first, with a message.
constexpr const char* kDeviceListVariables[] = {"STARPU_WORKERS_CPUID", "STARPU_WORKERS_CUDAID",
                                                "STARPU_WORKERS_OPENCLID"};

// Whether `text` is what StarPU's lists hold: numbers >= 0 or ranges "2-5" and "2-", separated
// by spaces or commas, at least one.
bool is_device_list(const std::string& text) {
  int items = 0;
  std::size_t at = 0;
  const auto digits = [&] {
    const std::size_t from = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    return at > from;
  };
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == ',') {
      ++at;
      continue;
    }
    if (!digits()) return false;
    if (at < text.size() && text[at] == '-') {
      ++at;
      digits();  // "2-": from 2 on
    }
    if (at < text.size() && text[at] != ' ' && text[at] != ',') return false;
    ++items;
  }
  return items > 0;
}

void check_runtime_environment() {
  for (const char* var : kNumericStarpuVariables) {
    const char* v = env(var);
    if (v != nullptr && whole_number(v) < 0)
      throw Error(std::string(var) + "=" + v +
                  " is not a whole number >= 0 (StarPU would abort on it); set it to a number "
                  "such as 2, or unset it");
  }
  for (const char* var : kDeviceListVariables) {
    const char* v = std::getenv(var);
    if (v != nullptr && !is_device_list(v))
      throw Error(std::string(var) + "='" + v +
                  "' is not a list of device numbers (StarPU would abort on it); give numbers "
                  ">= 0 or ranges separated by spaces or commas, such as '0 1' or '0-3', or unset "
                  "it");
  }
}

// A flag and its STARPU_* variable may agree, but a contradiction would be a silent override
// (StarPU lets the environment win), so it is an error.
void check_agrees(const char* flag, const std::string& value, const char* var) {
  const char* e = env(var);
  if (e != nullptr && value != e)
    throw Error(std::string(flag) + " " + value + " contradicts " + var + "=" + e + "; unset " +
                var + " or drop " + flag);
}

// The same for a count: compared as numbers, so STARPU_NCPU=02 agrees with --ncpu 2.
void check_agrees(const char* flag, int value, const char* var) {
  const char* e = env(var);
  if (e != nullptr && whole_number(e) != value)
    throw Error(std::string(flag) + " " + std::to_string(value) + " contradicts " + var + "=" + e +
                "; unset " + var + " or drop " + flag);
}

// A worker count from its flag, else its variable; -1: StarPU's choice.
int resolved_count(int flag, const char* var) {
  if (flag >= 0) return flag;
  const char* e = env(var);
  return e != nullptr ? static_cast<int>(whole_number(e)) : -1;
}

// Whether the run can only have CPU workers, known before StarPU starts: this StarPU has no CUDA
// or none is asked for (--ncuda 0, STARPU_NCUDA=0), it is not simulating a node (simulated CUDA
// workers), and no emulated device stands in for CUDA workers (TESSERA_EMULATED_CUDA).
bool cpu_only(const tasks::Capabilities& caps, int cuda_workers) {
  return (!caps.cuda || cuda_workers == 0) && !caps.simulated && !tasks::emulated_cuda_asked();
}

void check_scheduler(const std::string& name, const char* source, const tasks::Capabilities& caps) {
  std::string names;
  for (const std::string& s : caps.schedulers) {
    if (name == s) return;
    names += (names.empty() ? "" : ", ") + s;
  }
  throw Error(std::string("scheduler '") + name + "' (from " + source +
              ") is not a StarPU scheduler; choose one of: " + names);
}

// A hand-set split needs a worker of each kind it pins tiles to.
void check_gpu_fraction(double fraction, int cpu_workers, int cuda_workers) {
  if (std::isnan(fraction))
    throw Error(
        "--gpu-fraction nan is not a number; give the share of tiles for the GPU, "
        "between 0 and 1, or leave it unset");
  if (fraction < 0) return;
  std::ostringstream f;
  f << "--gpu-fraction " << fraction;
  if (fraction > 1)
    throw Error(f.str() + " is above 1; give the share of tiles for the GPU, between 0 and 1");
  if (fraction > 0 && cuda_workers == 0)
    throw Error(f.str() +
                " pins tiles to CUDA workers, but there are none (StarPU without CUDA, no "
                "GPU, or --ncuda 0); leave --gpu-fraction unset or run where a GPU is");
  if (fraction < 1 && cpu_workers == 0)
    throw Error(f.str() +
                " pins tiles to CPU workers, but there are none (--ncpu 0); use "
                "--gpu-fraction 1 or give CPU workers");
}

// What the ranks agree on for the planner, in one collective (the planner's hardware and the
// models' figures, so that every rank's planner decides alike): every rank's workers summed (a
// grid's tiles are distributed over the ranks in blocks); as many GPUs as the rank with the
// fewest has (a rank without their like could not place tiles on them), each GPU's memory, bus
// and link the least over the ranks (the plan must fit the smallest GPU: a mean let a 1 MiB
// stand-in beside a large one plan for neither); the models' figures their mean. A figure not
// known (> 0) on every rank is 0.
struct AgreedFigures {
  int cpu_workers = 0, cuda_workers = 0;
  std::vector<partition::Gpu> gpus;
  // The models': the GPU's time a point against a core's, an interaction's on a core and on a
  // GPU, the bus's latency, a core's time a point by the same model as the GPU's, and by the
  // models that record a core's work (tasks::model_core_point_seconds).
  double gpu_per_core = 0, cpu_pair = 0, gpu_pair = 0, bus_latency = 0, cpu_point = 0,
         core_point = 0;
};
// GPUs a rank's record holds (the record is of one size on every rank): more than any node has.
constexpr std::size_t kGpusAgreed = 64;

AgreedFigures agree_figures(const detail::Context& c, const tasks::ClassSpeeds& s,
                            const tasks::PairSeconds& p, const tasks::CorePointSeconds& core) {
  const std::vector<tasks::GpuFigures> gpus = tasks::cuda_devices();
  const bool ratio_known = s.cpu_us_per_byte > 0 && s.cuda_us_per_byte > 0;
  constexpr std::size_t kCounts = 3, kModels = 6, kPerGpu = 3;
  std::vector<double> mine{static_cast<double>(c.engine->cpu_workers()),
                           static_cast<double>(c.engine->cuda_workers()),
                           static_cast<double>(std::min(gpus.size(), kGpusAgreed)),
                           ratio_known ? s.cuda_us_per_byte / s.cpu_us_per_byte : 0,
                           p.cpu,
                           p.cuda,
                           tasks::bus_latency_seconds(),
                           ratio_known ? tasks::model_cpu_point_seconds(s.source) : 0,
                           core.seconds};
  mine.resize(kCounts + kModels + kPerGpu * kGpusAgreed, 0.0);
  for (std::size_t g = 0; g < gpus.size() && g < kGpusAgreed; ++g) {
    mine[kCounts + kModels + kPerGpu * g] = gpus[g].memory_bytes;
    mine[kCounts + kModels + kPerGpu * g + 1] = gpus[g].bus_bytes_per_second;
    mine[kCounts + kModels + kPerGpu * g + 2] = gpus[g].peer_bytes_per_second;
  }
  const std::vector<std::vector<double>> records = detail::comm::records_over_ranks(mine);
  std::vector<double> agreed(mine.size());
  for (std::size_t k = 0; k < mine.size(); ++k) {
    double total = 0, least = records.front()[k];
    bool known = true;
    for (const std::vector<double>& r : records) {
      total += r[k];
      least = std::min(least, r[k]);
      known = known && r[k] > 0;
    }
    if (k < 2)
      agreed[k] = total;  // workers
    else if (k == 2)
      agreed[k] = least;  // GPUs
    else if (!known)
      agreed[k] = 0;  // a figure not known on every rank
    else
      agreed[k] = k >= kCounts + kModels ? least : total / static_cast<double>(records.size());
  }
  AgreedFigures f;
  f.cpu_workers = static_cast<int>(agreed[0]);
  f.cuda_workers = static_cast<int>(agreed[1]);
  for (std::size_t g = 0; g < static_cast<std::size_t>(agreed[2]); ++g) {
    const double* gpu = &agreed[kCounts + kModels + kPerGpu * g];
    f.gpus.push_back({gpu[0], gpu[1], gpu[2]});
  }
  f.gpu_per_core = agreed[3];
  f.cpu_pair = agreed[4];
  f.gpu_pair = agreed[5];
  f.bus_latency = agreed[6];
  f.cpu_point = agreed[7];
  f.core_point = agreed[8];
  return f;
}

// A run without CUDA workers: a core's time a point from the calibrated models where they
// record a core's work (tasks::model_core_point_seconds, its mean over the ranks, known on
// every rank or assumed on all), else kCpuPointSeconds; `speeds` says which (the tile line
// ends with it).
partition::Planner cpu_only_planner(partition::Machine m, const AgreedFigures& f,
                                    const std::string& source, std::string* speeds) {
  if (f.core_point > 0) {
    m.cpu_point_seconds = f.core_point;
    m.cpu_point_assumed = false;
    char b[240];
    std::snprintf(b, sizeof(b), "; a core %.3g ns a point by the model of %s", f.core_point * 1e9,
                  source.c_str());
    *speeds = b;
  } else {
    *speeds =
        "; no model records a core's time a point yet (a run records its tasks' times in "
        "the model directory, --perfmodel-dir)";
  }
  return partition::Planner(m, false);
}

// The placement planner of this run (partition/planner.hpp): every rank's workers, with CUDA
// workers the GPU's speed against a core's from the calibrated models where they hold both
// (said on the planner's lines: `speeds`; all-pairs work's per interaction: `pair_speeds`), the
// split's fixed cost from StarPU's bus model, each GPU's memory and bus, and a hand-set
// --gpu-fraction, as the ranks agree on them (agree_figures). Collective: one all-gather.
partition::Planner make_planner(detail::Context& c, std::string* speeds, std::string* pair_speeds) {
  const tasks::ClassSpeeds s = tasks::model_class_speeds();
  const tasks::PairSeconds p = tasks::model_pair_seconds();
  const tasks::CorePointSeconds core = tasks::model_core_point_seconds();
  const AgreedFigures f = agree_figures(c, s, p, core);
  partition::Machine m;
  m.ranks = c.ranks;
  m.cpu_workers = f.cpu_workers;
  m.cuda_workers = f.cuda_workers;
  if (m.cuda_workers == 0) return cpu_only_planner(m, f, core.source, speeds);  // CPU tiles only
  const bool known = f.gpu_per_core > 0;
  if (known) {
    // A core's time a point by the same model where its history records the work (a real
    // calibrated run's), else assumed (and said so on the placement line).
    m.cpu_point_assumed = !(f.cpu_point > 0);
    m.cpu_point_seconds = m.cpu_point_assumed ? partition::kCpuPointSeconds : f.cpu_point;
    m.gpu_point_seconds = m.cpu_point_seconds * f.gpu_per_core;
    char b[200];
    std::snprintf(b, sizeof(b), "; a GPU %.0f times a core by the models of %s%s",
                  1 / f.gpu_per_core, s.source.c_str(),
                  m.cpu_point_assumed ? "" : " (a core's time a point too)");
    *speeds = b;
  }
  m.cpu_pair_seconds = f.cpu_pair;
  m.gpu_pair_seconds = f.gpu_pair;
  if (m.gpu_pair_seconds > 0) {
    char core_text[64] = "";
    if (m.cpu_pair_seconds > 0)
      std::snprintf(core_text, sizeof(core_text), " %.3g ns on a core,", m.cpu_pair_seconds * 1e9);
    char b[240];
    std::snprintf(b, sizeof(b), "; an interaction%s %.3g ns on a GPU by the models of %s",
                  core_text, m.gpu_pair_seconds * 1e9, p.source.c_str());
    *pair_speeds = b;
  }
  m.split_seconds = partition::split_seconds_for_bus(f.bus_latency);
  m.gpus = f.gpus;
  m.gpu_share = c.options.gpu_fraction;
  m.ghost_planes_stay = tasks::DataRegistry::moves_planes_only() && c.options.fused_exchange;
  m.faces_packed_ahead = m.faces_read_from_next_slab = c.options.fused_exchange;
  m.visits_prefetched = m.faces_read_from_next_slab;
  return partition::Planner(m, known);
}

// StarPU starts a CUDA worker for each GPU it finds (STARPU_NWORKER_PER_CUDA more) and no more,
// whatever --ncuda asks, without a word: a run asked for 8 on a 4-GPU node would run on 4 as if
// that were what it asked. The configuration line says it (a build with CUDA on a machine
// without a GPU still runs, on its cores). `asked` < 0: not asked (every GPU).
std::string cuda_count_note(int asked, int started, bool by_flag) {
  if (asked <= started) return "";
  const std::string what =
      by_flag ? "--ncuda " + std::to_string(asked) : "STARPU_NCUDA=" + std::to_string(asked);
  return " (" + what + " asked for more: StarPU found " +
         (started == 0 ? std::string("no GPU") : std::to_string(started) + " GPU(s)") + ")";
}

// STARPU_LIMIT_CUDA_MEM is the MiB StarPU may use of each GPU. StarPU reads 0, a negative number
// or a word as no limit, without a word, and the planner would size the grid for the whole GPU.
void check_cuda_memory_limit() {
  const char* text = env("STARPU_LIMIT_CUDA_MEM");
  if (text == nullptr || *text == '\0' || whole_number(text) > 0) return;
  throw Error(
      std::string("STARPU_LIMIT_CUDA_MEM=") + text +
      " is not a whole number of MiB > 0: StarPU would not read it as the limit, and use the whole "
      "of each GPU's memory; unset it for no limit, or give the MiB StarPU may use of "
      "each GPU (e.g. STARPU_LIMIT_CUDA_MEM=4096)");
}

void check_watchdog(double seconds) {
  if (seconds == detail::kWatchdogAutomatic) return;
  if (!(seconds >= 0) || std::isinf(seconds)) {
    std::ostringstream s;
    s << seconds;
    throw Error("--watchdog " + s.str() +
                " is not a number of seconds >= 0; give the time "
                "without progress after which every rank ends, 0 for none, or leave it unset "
                "(automatic)");
  }
}

// The automatic watchdog's floor: TESSERA_WATCHDOG_MIN_SECONDS, else kAutomaticFloorSeconds.
double watchdog_floor() {
  const char* text = env("TESSERA_WATCHDOG_MIN_SECONDS");
  if (text == nullptr) return detail::kAutomaticFloorSeconds;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || std::isinf(v))
    throw Error(std::string("TESSERA_WATCHDOG_MIN_SECONDS=") + text +
                " is not a number of seconds above 0; give the least time without progress "
                "after which the automatic watchdog ends the run (default 600), or unset it");
  return v;
}

// A command line's arguments (/proc/self/cmdline: each ends in a NUL).
std::vector<std::string> arguments(const std::string& command_line) {
  std::vector<std::string> args;
  std::string::size_type at = 0;
  while (at < command_line.size()) {
    const std::string::size_type end = command_line.find('\0', at);
    args.push_back(command_line.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

bool is_flag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) &&
         arg[1] != '.';
}

// Where rank `r`'s command line first differs from rank 0's, as a person would say it: the
// option and both values ("--steps is given '3' on rank 1 and '2' on rank 0").
std::string first_difference(const std::string& line0, const std::string& line_r, int r) {
  const std::vector<std::string> a = arguments(line0), b = arguments(line_r);
  std::size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  const auto at = [](const std::vector<std::string>& args, std::size_t k) {
    return k < args.size() ? "'" + args[k] + "'" : std::string("nothing");
  };
  const std::string both =
      at(b, k) + " on rank " + std::to_string(r) + " and " + at(a, k) + " on rank 0";
  if (k == 0) return "the program is " + both;
  std::size_t flag = k;
  while (flag > 0 && !is_flag(a[flag - 1])) --flag;
  const bool value = (k >= a.size() || !is_flag(a[k])) && (k >= b.size() || !is_flag(b[k]));
  if (flag > 0 && value) return a[flag - 1] + " is given " + both;
  return "argument " + std::to_string(k) + " is " + both;
}

// Throws on every rank unless every rank's `text` equals rank 0's, naming the first rank that
// differs and both values; `describe(rank0, other, r)` says how they differ.
template <class Describe>
void require_same_text(const std::string& text, const std::string& what, const std::string& fix,
                       Describe describe) {
  const std::vector<std::string> all = detail::comm::all_gather_text(text);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw Error(what + " differ between ranks: " + describe(all[0], all[r], static_cast<int>(r)) +
                  "; " + fix);
}

// How a value differs between rank 0 and rank `r`, for require_same_text.
std::string values_on_ranks(const std::string& v0, const std::string& v, int r) {
  return v + " on rank " + std::to_string(r) + ", " + v0 + " on rank 0";
}

// An Options field's value as text: every bit of a double (%.17g reads back to the same one).
template <class T>
std::string option_text(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "'" + value + "'";
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    std::string text;
    for (int v : value) text += (text.empty() ? "" : " ") + std::to_string(v);
    return "{" + text + "}";
  } else if constexpr (std::is_floating_point_v<T>) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", value);
    return text;
  } else {
    static_assert(std::is_integral_v<T>, "a new kind of Options field: say how to compare it");
    return std::to_string(value);
  }
}

// Every rank must run the same program with the same options, or they would build different
// task graphs (and StarPU-MPI tags) and hang: compare the command lines, then every field of
// the parsed options (also those a program sets in code, which the command line does not
// show), each by name, and say which option differs and its values on both ranks. The
// recording options count too: ranks that record gather their traces at shutdown.
void check_same_options_on_all_ranks(const Options& o) {
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  const std::string command_line{std::istreambuf_iterator<char>(cmdline),
                                 std::istreambuf_iterator<char>()};
  require_same_text(command_line, "the command lines", "start every rank with the same arguments",
                    first_difference);
  // The emulated device's mode decides each rank's worker classes (split: CUDA stand-ins), so
  // ranks that differ would cut their fields differently: named here rather than by the fields.
  const char* emulated = std::getenv("TESSERA_EMULATED_CUDA");
  require_same_text(emulated != nullptr ? "'" + std::string(emulated) + "'" : "unset",
                    "the values of TESSERA_EMULATED_CUDA",
                    "set it alike on every rank (mpirun -x TESSERA_EMULATED_CUDA=...), or on none",
                    values_on_ranks);
  detail::for_each_option(o, [](const char* name, const auto& value) {
    require_same_text(option_text(value), std::string("the values of tessera::Options::") + name,
                      "start every rank with the same arguments, and set the same Options in "
                      "the program on every rank",
                      values_on_ranks);
  });
}

// StarPU aborts on a model or bus file it cannot parse: such files are moved aside first, and
// said (on each rank that moved one: ranks may share the directory or not). StarPU 1.4 also
// reads the models of its home, which Tessera keeps inside a named directory (tasks/engine.cpp).
void quarantine_damaged_models(const detail::Context& c, const std::string& dir) {
  for (const std::string& d : {dir, dir + "/.starpu-home/.starpu/sampling"})
    for (const std::string& line : detail::model_files::quarantine_damaged(d))
      std::cerr << "tessera: " << (c.ranks > 1 ? "rank " + std::to_string(c.rank) + ": " : "")
                << line << std::endl;
}

// The engine's settings: every option resolved against its STARPU_* variable and checked
// against what this StarPU can do. Sets `sched_source` to where the scheduler came from.
// The scheduler a run uses and where the choice came from (`source`, for the configuration
// line): --sched, STARPU_SCHED, the program's default, else the default for its workers.
std::string chosen_scheduler(const Options& o, const tasks::Capabilities& caps,
                             std::string& source) {
  if (!o.scheduler.empty()) {
    check_agrees("--sched", o.scheduler, "STARPU_SCHED");
    source = "--sched";
    return o.scheduler;
  }
  if (env("STARPU_SCHED") != nullptr) {
    source = "STARPU_SCHED";
    return env("STARPU_SCHED");
  }
  if (!o.default_scheduler.empty()) {
    source = "the program's default";
    return o.default_scheduler;
  }
  if (cpu_only(caps, resolved_count(o.cuda_workers, "STARPU_NCUDA"))) {
    source = "default for CPU workers only";
    return kSchedulerCpuOnly;
  }
  source = "default with CUDA workers";
  return kSchedulerWithCuda;
}

// The models' directory, created and checked: StarPU creates it when it first saves a model
// and aborts the program when it cannot (a file in the way, no permission).
std::string checked_model_dir(const Options& o) {
  std::string model_dir;
  if (!o.perfmodel_dir.empty()) {
    model_dir = o.perfmodel_dir;
    detail::files::check_directory(model_dir, "--perfmodel-dir");
  } else if (env("STARPU_PERF_MODEL_DIR") != nullptr) {
    model_dir = env("STARPU_PERF_MODEL_DIR");
    detail::files::check_directory(model_dir, "STARPU_PERF_MODEL_DIR");
  } else {
    model_dir = default_model_dir();
    detail::files::check_directory(
        model_dir, "StarPU's default model directory (from " + model_home_source() +
                       "; --perfmodel-dir or STARPU_PERF_MODEL_DIR choose another)");
  }
  return model_dir;
}

tasks::EngineConfig engine_config(const detail::Context& c, std::string& sched_source) {
  const Options& o = c.options;
  const tasks::Capabilities caps = tasks::capabilities();
  tasks::EngineConfig e;
  check_runtime_environment();
  e.scheduler = chosen_scheduler(o, caps, sched_source);
  check_scheduler(e.scheduler, sched_source.c_str(), caps);
  check_watchdog(o.watchdog);
  check_cuda_memory_limit();
  watchdog_floor();  // checked before StarPU starts
  if (o.cpu_workers >= 0) {
    check_agrees("--ncpu", o.cpu_workers, "STARPU_NCPU");
    if (o.cpu_workers > caps.max_cpus)
      throw Error("--ncpu " + std::to_string(o.cpu_workers) + " exceeds the " +
                  std::to_string(caps.max_cpus) +
                  " CPU workers this StarPU was built for; rebuild StarPU with "
                  "--enable-maxcpus (docs/building.md) or ask for fewer");
    e.cpu_workers = o.cpu_workers;
  }
  if (o.cuda_workers >= 0) {
    check_agrees("--ncuda", o.cuda_workers, "STARPU_NCUDA");
    if (o.cuda_workers > 0 && !caps.cuda)
      throw Error("--ncuda " + std::to_string(o.cuda_workers) +
                  " but this StarPU has no CUDA support; build StarPU with CUDA (see README)");
    e.cuda_workers = o.cuda_workers;
  }
  // StarPU without CUDA starts no CUDA worker whatever STARPU_NCUDA says, without a word: the
  // flag is refused above, the variable likewise.
  if (o.cuda_workers < 0 && !caps.cuda && env("STARPU_NCUDA") != nullptr &&
      whole_number(env("STARPU_NCUDA")) > 0)
    throw Error(std::string("STARPU_NCUDA=") + env("STARPU_NCUDA") +
                " asks for CUDA workers, but this StarPU has no CUDA support and would run "
                "without them; unset it (or set it to 0), or build StarPU with CUDA (see README)");
  // StarPU fails to start without a worker ("returned -19"): say which setting left none.
  const int cpus =
      resolved_count(o.cpu_workers, env("STARPU_NCPU") ? "STARPU_NCPU" : "STARPU_NCPUS");
  const int cudas = resolved_count(o.cuda_workers, "STARPU_NCUDA");
  if (cpus == 0 && (cudas == 0 || !caps.cuda))
    throw Error(std::string(o.cpu_workers == 0 ? "--ncpu 0" : "STARPU_NCPU=0") +
                " leaves no worker to run tasks (" +
                (caps.cuda ? "and no CUDA worker either" : "this StarPU has no CUDA") +
                "); give at least 1 CPU worker");
  // A core for the program's thread where CUDA workers may run on a real node and the user chose
  // no CPU worker count (tasks::EngineConfig::core_for_program).
  e.core_for_program = o.cpu_workers < 0 && env("STARPU_NCPU") == nullptr &&
                       env("STARPU_NCPUS") == nullptr && env("STARPU_RESERVE_NCPU") == nullptr &&
                       caps.cuda && cudas != 0 && !caps.simulated && !tasks::emulated_cuda_asked();
  if (o.calibrate) {
    check_agrees("--calibrate", "1", "STARPU_CALIBRATE");
    e.calibrate = true;
  }
  if (!o.perfmodel_dir.empty()) {
    check_agrees("--perfmodel-dir", o.perfmodel_dir, "STARPU_PERF_MODEL_DIR");
    if (caps.simulated && env("STARPU_PERF_MODEL_DIR") == nullptr)
      throw Error("--perfmodel-dir " + o.perfmodel_dir +
                  " comes too late in a simulated run: SimGrid "
                  "loads the platform file (bus/<host>.platform.v4.xml) before main(); set "
                  "STARPU_PERF_MODEL_DIR=" +
                  o.perfmodel_dir + " instead (docs/simulation.md)");
    e.perfmodel_dir = o.perfmodel_dir;
  }
  quarantine_damaged_models(c, checked_model_dir(o));
  if (!o.fxt.empty()) {
    if (!caps.fxt)
      throw Error("--fxt " + o.fxt + " needs a StarPU built with FxT, and this StarPU " +
                  caps.version +
                  " has none; build StarPU with --with-fxt (docs/building.md), or use --trace "
                  "and --report, which need no FxT");
    e.fxt_dir = o.fxt;
  }
  e.quiet = o.quiet;
  e.max_submitted = o.max_submitted_tasks;
  e.record = !o.trace.empty() || !o.report.empty() || o.summary;
  // A trace or report shows every task, so it keeps every one (memory grows with the task
  // count); the summary only needs running totals (docs/reliability.md).
  e.keep_events = !o.trace.empty() || !o.report.empty();
  e.rank = c.rank;
  e.policy.scheduler = e.scheduler;
  // Calibrating, asked for by flag or by STARPU_CALIBRATE: no uncalibrated-model message.
  const char* calibrate_env = env("STARPU_CALIBRATE");
  e.policy.calibrating =
      o.calibrate || (calibrate_env != nullptr && std::strcmp(calibrate_env, "0") != 0);
  e.policy.quiet = o.quiet;
  e.policy.says_uncalibrated = c.rank == 0;
  e.policy.calibrate_command = o.calibrate_command;
#ifdef TESSERA_WITH_MPI
  e.policy.distributed = c.ranks > 1;  // one rank has nothing to exchange: plain StarPU
#endif
  return e;
}

}  // namespace

int process_rank() { return detail::comm::rank(); }

int report_error(const std::exception& error, int status) {
  const std::string message = error.what();
  // Error's messages start with "tessera: "; others get it, and a rank-local one the rank.
  const std::string prefix = "tessera: ";
  const std::string text =
      message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
  const int rank = detail::comm::rank();
  if (detail::comm::ranks() == 1) {
    std::cerr << prefix << text << std::endl;
    return status;
  }
  if (detail::comm::every_rank_failed(kFailureWaitSeconds)) {
    if (detail::comm::same_on_every_rank(message)) {
      if (rank == 0) std::cerr << prefix << text << std::endl;  // one cause, said once
    } else {
      std::cerr << prefix << "rank " << rank << ": " << text << std::endl;
    }
    if (!abandoned) return status;
  } else {
    std::cerr << prefix << "rank " << rank << ": " << text << "\n"
              << prefix << "rank " << rank
              << " ends every rank: the others did not fail and would wait for it forever"
              << std::endl;
  }
  detail::comm::abort_every_rank(status);
}

namespace detail {
Context& live_context(const char* what) {
  if (live == nullptr)
    throw Error(std::string(what) + " needs a live tessera::Runtime; create one first in main()");
  return *live;
}

Context* live_context_or_null() { return live; }

void announce(Context& c, const std::string& line) {
  if (c.configuration.find(line) != std::string::npos) return;
  c.configuration += "\n" + line;
  if (!c.options.quiet && c.rank == 0) std::cout << line << std::endl;
}

void refuse_in_simulation(const Context& c, const char* what) {
  if (c.simulated)
    throw Error(std::string(what) +
                " writes or reads field values, and this run is simulated "
                "(StarPU in SimGrid mode: tasks do not run, fields hold no values); drop the "
                "option, or build against a StarPU without SimGrid (docs/simulation.md)");
}
}  // namespace detail

Runtime::Runtime(const Options& options) : context_(std::make_unique<detail::Context>()) {
  if (live != nullptr)
    throw Error("a tessera::Runtime is already alive; create one Runtime per process at a time");
  detail::Context& c = *context_;
  c.options = options;
  c.uncaught = std::uncaught_exceptions();
  detail::comm::start();
  c.rank = detail::comm::rank();
  c.ranks = detail::comm::ranks();
  check_same_options_on_all_ranks(options);

  // What may differ between ranks (each one's environment, working directory, file system,
  // StarPU's start) is agreed on: a failure on one rank fails every rank with its message,
  // rather than leaving the others waiting for it in their next collective.
  std::string sched_source;
  tasks::EngineConfig config;
  detail::comm::agree([&] {
    config = engine_config(c, sched_source);
    // Every rank records; at shutdown rank 0 merges the ranks' records into one trace and
    // report (each rank checks here that it could write them).
    c.recording = detail::Recording(options.trace, options.report);
  });
  c.scheduler = config.scheduler;
  c.simulated = tasks::capabilities().simulated;
  detail::comm::agree([&] {
    c.engine = std::make_unique<tasks::Engine>(config);
    // Needs the worker counts StarPU actually started with.
    check_gpu_fraction(options.gpu_fraction, c.engine->cpu_workers(), c.engine->cuda_workers());
  });
  const std::string cuda_note =
      cuda_count_note(resolved_count(options.cuda_workers, "STARPU_NCUDA"),
                      c.engine->cuda_workers(), options.cuda_workers >= 0);
  c.planner = make_planner(c, &c.planner_speeds, &c.planner_pair_speeds);
  // The automatic watchdog measures real time: a simulated run (SimGrid's time) has none.
  const double watchdog = options.watchdog < 0 && c.simulated ? 0 : options.watchdog;
  const double floor_seconds = watchdog_floor();
  if (watchdog != 0) {
    tasks::Engine* engine = c.engine.get();
    c.watchdog =
        std::make_unique<detail::Watchdog>(watchdog, floor_seconds, c.rank, c.ranks, [engine] {
          return detail::TaskProgress{engine->submitter().submissions(), engine->pending()};
        });
  }
  if (tasks::Recorder* recorder = c.engine->recorder()) {
    // Ranks' times are merged unaligned: start their clocks together.
    if (c.ranks > 1) detail::comm::sum(0);
    recorder->start_clock();
  }
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    std::atexit([] {
      if (Kokkos::is_initialized()) Kokkos::finalize();
    });
  }
  const char* calibrate = env("STARPU_CALIBRATE");
  c.configuration = "tessera: StarPU " + tasks::capabilities().version + ", Tessera " + version() +
                    ", scheduler " + c.scheduler + " (" + sched_source + "), " +
                    std::to_string(c.engine->cpu_workers()) + " CPU " +
                    (c.engine->left_core_for_program() ? "(a core left for the program) " : "") +
                    "+ " + std::to_string(c.engine->cuda_workers()) + " CUDA workers" + cuda_note +
                    ", calibration " +
                    (options.calibrate || (calibrate && std::strcmp(calibrate, "0") != 0) ? "on"
                     : c.engine->calibrates_always() ? "recording"
                                                     : "off") +
                    (c.simulated ? ", SIMULATED (SimGrid)" : "") +
                    (options.trace.empty() ? "" : ", trace " + options.trace) +
                    (c.ranks > 1 ? ", " + std::to_string(c.ranks) + " ranks" : "") +
                    (options.report.empty() ? "" : ", report " + options.report) + ", " +
                    detail::Watchdog::describe(watchdog, floor_seconds);
  if (!options.quiet && c.rank == 0) std::cout << c.configuration << std::endl;
  live = &c;
}

Runtime::~Runtime() {
  detail::Context& c = *context_;
  const bool failing = std::uncaught_exceptions() > c.uncaught;
  if (failing && c.ranks > 1 &&
      !(detail::comm::every_rank_failed(kFailureWaitSeconds) &&
        detail::comm::same_on_every_rank(std::to_string(c.steps) + "/" +
                                         std::to_string(c.engine->data().registered())))) {
    // This rank leaves on an error that the other ranks did not raise at the same point:
    // waiting for its tasks (they need data the others will never send) or shutting
    // StarPU-MPI down would block forever. StarPU is left as it is (and the context leaked
    // with it, for fields still holding it); report_error ends every rank.
    abandoned = true;
    live = nullptr;
    c.watchdog.reset();  // report_error ends every rank, with this rank's message
    (void)context_.release();
    return;
  }
  std::string failure;
  if (failing) {
    wait();  // an incomplete run: no trace, report or summary
  } else {
    try {
      finish();
    } catch (const std::exception& e) { failure = e.what(); }
  }
  // Fields outliving the runtime give their handles back now, while StarPU is up.
  for (detail::FieldStorage* f :
       std::vector<detail::FieldStorage*>(c.fields.begin(), c.fields.end()))
    f->release_handles();
  for (detail::HandleOwner* h :
       std::vector<detail::HandleOwner*>(c.handle_owners.begin(), c.handle_owners.end()))
    h->release_handles();
  live = nullptr;
  if (c.watchdog) c.watchdog->stop_probing();
  {
    detail::Waiting shutdown("StarPU's shutdown (StarPU-MPI waits for every rank there)");
    c.engine.reset();  // shuts StarPU down
  }
  c.watchdog.reset();
  if (!failure.empty()) {
    // A destructor must not throw, and a run whose outputs are missing must not end as a
    // success: the message (every rank has it; rank 0 prints) and exit status 1.
    if (c.rank == 0) std::cerr << failure << std::endl;
    std::exit(EXIT_FAILURE);
  }
}

void Runtime::finish() {
  detail::Context& c = *context_;
  wait();
  if (c.finished) return;
  c.finished = true;
  tasks::Recorder* recorder = c.engine->recorder();
  if (recorder == nullptr) return;
  trace::RankTrace mine = recorder->rank_trace();
  if (c.ranks > 1)  // StarPU-MPI's face-buffer traffic into this rank
    mine.transfers.push_back({"other ranks", "rank " + std::to_string(c.rank),
                              static_cast<std::uint64_t>(c.received.bytes),
                              static_cast<std::uint64_t>(c.received.messages), true});
  const std::vector<trace::RankTrace> ranks = detail::Recording::gather(mine);  // collective
  // Only rank 0 writes; every rank learns whether it could.
  detail::comm::agree([&] {
    if (c.rank == 0) c.recording.write(ranks, c.configuration);
  });
  long tasks = 0;
  for (const trace::RankTrace& r : ranks) tasks += r.task_count();
  if (c.rank == 0 && c.options.summary && !c.options.quiet && tasks > 0)
    std::cout << "tessera summary:\n" << trace::summary_table(ranks);
}

void Runtime::wait() {
  detail::Waiting waiting(context_->ranks > 1 ? "every rank's tasks to finish (Runtime::wait)"
                                              : "every task to finish (Runtime::wait)");
  context_->engine->wait_all();
}

int Runtime::rank() const { return context_->rank; }
int Runtime::ranks() const { return context_->ranks; }

Traffic Runtime::traffic() const {
  Traffic t;
  t.messages = detail::comm::sum(context_->received.messages);
  t.bytes = detail::comm::sum(context_->received.bytes);
  const std::int64_t sent = context_->engine->mpi_bytes_sent(context_->ranks);
  if (sent >= 0) t.sent_bytes = detail::comm::sum(sent);
  return t;
}

const std::string& Runtime::configuration() const { return context_->configuration; }
const std::string& Runtime::scheduler() const { return context_->scheduler; }
int Runtime::cpu_workers() const { return context_->engine->cpu_workers(); }
int Runtime::cuda_workers() const { return context_->engine->cuda_workers(); }
std::string Runtime::rebalancing_off() const { return context_->planner.rebalancing_off(); }
bool Runtime::simulated() const { return context_->simulated; }
double Runtime::seconds() const { return tasks::clock_seconds(); }
std::size_t Runtime::tasks_submitted() const { return context_->engine->submitter().submitted(); }
std::size_t Runtime::tasks_pending() const { return context_->engine->pending(); }

trace::RankTrace Runtime::recorded() const {
  tasks::Recorder* recorder = context_->engine->recorder();
  return recorder ? recorder->rank_trace() : trace::RankTrace{};
}

void Runtime::clear_recorded() {
  if (tasks::Recorder* recorder = context_->engine->recorder()) recorder->clear();
}

// TESSERA_VERSION_STRING: the CMake project version, a compile definition of the library.
const char* version() { return TESSERA_VERSION_STRING; }

}  // namespace tessera
