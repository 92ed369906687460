#include "core/runtime/comm.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "core/runtime/watchdog.hpp"
#include "tasks/engine.hpp"
#include "tessera/error.hpp"

#ifdef TESSERA_WITH_MPI
#include <mpi.h>
#endif

namespace tessera::detail::comm {

std::uint64_t hash(const std::string& bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {
// Error adds "tessera: " to every message; re-raised messages must not get it twice.
std::string without_prefix(const std::string& what) {
  const std::string prefix = "tessera: ";
  return what.compare(0, prefix.size(), prefix) == 0 ? what.substr(prefix.size()) : what;
}

// Under SimGrid's SMPI (docs/simulation.md, "Many nodes") the program runs beside the rank's MPI
// process and may not call MPI: the rank comes from StarPU-MPI, and the collectives below do
// what a simulated run needs without MPI. The checks that compare ranks are skipped (every rank
// runs the simulation's one command line), host values do not exist (nothing to gather,
// broadcast or sum), and task data still moves through StarPU-MPI, simulated.
struct Smpi {
  bool on = false;
  int rank = 0, ranks = 1;
};
const Smpi& smpi() {
  static const Smpi s = [] {
    Smpi v;
    v.on = tasks::smpi_program(v.rank, v.ranks);
    return v;
  }();
  return s;
}
}  // namespace

bool smpi_simulated() { return smpi().on; }

void let_launcher_read_output() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  // A rank's last words sit in the pipe (or socket) to its launcher until the launcher reads
  // them, and MPI_Abort makes the launcher end the job: a launcher busy elsewhere (a loaded
  // machine) had not read them yet, and the message was lost. So the abort waits until both
  // are read, or kLastWordsSeconds at most (a launcher that never reads).
  constexpr double kLastWordsSeconds = 5;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kLastWordsSeconds);
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;
    // Bytes not yet read: in the pipe (FIONREAD) or the socket's send queue (SIOCOUTQ).
    const unsigned long request = S_ISFIFO(st.st_mode)   ? FIONREAD
                                  : S_ISSOCK(st.st_mode) ? SIOCOUTQ
                                                         : 0;
    if (request == 0) continue;
    int unread = 0;
    while (ioctl(fd, request, &unread) == 0 && unread > 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void agree(const std::function<void()>& local) {
  std::string mine;  // empty: this rank's part went well
  try {
    local();
  } catch (const std::bad_alloc&) {
    mine = "out of memory; use a smaller grid or more ranks";
  } catch (const std::exception& e) {
    mine = without_prefix(e.what());
    if (mine.empty()) mine = "unknown error";
  }
  if (ranks() == 1 || smpi().on) {
    if (!mine.empty()) throw Error(mine);
    return;
  }
  // Every rank's message, each ended by a NUL (messages hold none).
  const std::vector<unsigned char> all = all_gather(mine.c_str(), mine.size() + 1);
  std::vector<std::string> messages;
  for (std::size_t at = 0; at < all.size();) {
    messages.emplace_back(reinterpret_cast<const char*>(all.data() + at));
    at += messages.back().size() + 1;
  }
  int first = -1;
  bool alike = true;
  std::string others;
  for (int r = 0; r < static_cast<int>(messages.size()); ++r) {
    const std::string& m = messages[static_cast<std::size_t>(r)];
    alike = alike && m == messages[0];
    if (m.empty()) continue;
    if (first < 0)
      first = r;
    else
      others += (others.empty() ? "" : ", ") + std::to_string(r);
  }
  if (first < 0) return;
  if (alike) throw Error(messages[0]);  // every rank failed the same way: a shared cause
  throw Error("rank " + std::to_string(first) + ": " + messages[static_cast<std::size_t>(first)] +
              (others.empty() ? "" : " (ranks " + others + " failed too)"));
}

#ifdef TESSERA_WITH_MPI

namespace {
// The communicator of the failure protocol: its own, so that a rank leaving on an error never
// matches a collective the healthy ranks are in on MPI_COMM_WORLD.
MPI_Comm fault_comm = MPI_COMM_NULL;
enum class Failure { unknown, every_rank, not_every_rank };
Failure failure = Failure::unknown;
MPI_Request failure_barrier = MPI_REQUEST_NULL;

bool mpi_up() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}
// Tessera's collectives (start-up checks, gathers, sums) run on the program's thread while
// StarPU-MPI's progress thread calls MPI too: two threads in MPI at once, which MPI allows only
// at MPI_THREAD_MULTIPLE (Open MPI takes its internal locks only then; below it, both threads
// drive the same progress engine unlocked, as ThreadSanitizer showed in a field gather).
void require_multiple(int provided, const char* who) {
  if (provided >= MPI_THREAD_MULTIPLE) return;
  throw Error(std::string(who) + " thread level " + std::to_string(provided) +
              ", below MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) +
              "): Tessera calls MPI while StarPU-MPI's progress thread does; " +
              "initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...), or let the "
              "Runtime do it, with an MPI built with thread support");
}
// Whether an MPI launcher (mpirun, mpiexec, srun, a PMI/PMIx process manager) started this
// process: each sets one of these in its ranks' environment.
bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                          "MPI_LOCALNRANKS", "SLURM_PROCID", "HYDRA_CONTROL_FD"})
    if (std::getenv(var) != nullptr) return true;
  return false;
}
}  // namespace

void start() {
  if (smpi().on) return;  // StarPU-MPI started MPI, on the rank's own process
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) {
    if (fault_comm == MPI_COMM_NULL && mpi_up()) {
      int provided = 0;
      MPI_Query_thread(&provided);
      if (ranks() > 1) require_multiple(provided, "the program initialised MPI at");
      MPI_Comm_dup(MPI_COMM_WORLD, &fault_comm);
    }
    return;
  }
  // A process not started by an MPI launcher is one rank: MPI is left alone. (Open MPI would
  // otherwise start a singleton daemon, orted, whose polling takes time from the workers beside
  // every single-process run; figures: docs/distributed.md.)
  if (!launched_by_mpi()) return;
  // Tessera started MPI, so Tessera ends it, once, at exit: a process may create several
  // Runtimes one after the other (the tests do) but may initialise MPI only once.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &fault_comm);
  std::atexit([] {
    if (mpi_up()) MPI_Finalize();
  });
  if (ranks() > 1) require_multiple(provided, "this MPI provides only");  // one rank: no StarPU-MPI
}

bool every_rank_failed(double seconds) {
  if (ranks() == 1 || smpi().on || fault_comm == MPI_COMM_NULL) return true;
  if (failure != Failure::unknown) return failure == Failure::every_rank;
  // A barrier that only ranks leaving on an error enter: it completes when all of them have.
  if (failure_barrier == MPI_REQUEST_NULL) MPI_Ibarrier(fault_comm, &failure_barrier);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int done = 0;
    MPI_Test(&failure_barrier, &done, MPI_STATUS_IGNORE);
    if (done != 0) {
      failure = Failure::every_rank;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      failure = Failure::not_every_rank;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool same_on_every_rank(const std::string& message) {
  if (ranks() == 1 || smpi().on || fault_comm == MPI_COMM_NULL) return true;
  std::uint64_t mine = hash(message);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(ranks()));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, fault_comm);
  for (std::uint64_t h : all)
    if (h != mine) return false;
  return true;
}

void abort_every_rank(int status) {
  let_launcher_read_output();
  if (!smpi().on && mpi_up()) MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

int rank() {
  if (smpi().on) return smpi().rank;
  if (!mpi_up()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int ranks() {
  if (smpi().on) return smpi().ranks;
  if (!mpi_up()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void require_equal(std::uint64_t value, const std::string& what, const std::string& fix) {
  if (ranks() == 1 || smpi().on) return;
  Waiting waiting("the other ranks in a collective (a start-up check)");
  std::vector<std::uint64_t> all(static_cast<std::size_t>(ranks()));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw Error(what + " differ between ranks (rank " + std::to_string(r) +
                  " disagrees with rank 0); " + fix);
}

std::vector<unsigned char> all_gather(const void* mine, std::size_t bytes) {
  const int n = ranks();
  if (n == 1) {
    const auto* p = static_cast<const unsigned char*>(mine);
    return std::vector<unsigned char>(p, p + bytes);
  }
  if (smpi().on)
    throw Error(
        "a simulated multi-rank run (SMPI) has no host values to gather between ranks; "
        "gather only in real runs (docs/simulation.md)");
  Waiting waiting("the other ranks in a collective (a gather)");
  // MPI counts are ints: every rank sees every share, so all refuse a share above 2 GiB alike.
  const std::int64_t mine_bytes = static_cast<std::int64_t>(bytes);
  std::vector<std::int64_t> shares(static_cast<std::size_t>(n));
  MPI_Allgather(&mine_bytes, 1, MPI_INT64_T, shares.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < n; ++r)
    if (shares[static_cast<std::size_t>(r)] > INT_MAX)
      throw Error("rank " + std::to_string(r) + " would send " +
                  std::to_string(shares[static_cast<std::size_t>(r)]) +
                  " bytes in one gather, more than MPI's 2^31 - 1; gather smaller fields (or "
                  "use more ranks)");
  const int count = static_cast<int>(bytes);
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<int>(shares[static_cast<std::size_t>(r)]);
    if (total > static_cast<std::size_t>(INT_MAX))
      throw Error("a gather of " + std::to_string(total) +
                  " bytes or more exceeds MPI's 2^31 - 1 displacement; gather smaller fields");
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  }
  std::vector<unsigned char> out(total);
  MPI_Allgatherv(mine, count, MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  return out;
}

void broadcast(void* data, std::size_t bytes, int root) {
  if (ranks() == 1 || smpi().on) return;
  Waiting waiting("the other ranks in a collective (a broadcast)");
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
}

std::int64_t sum(std::int64_t value) {
  if (ranks() == 1 || smpi().on) return value;  // SMPI: this rank's share only
  Waiting waiting("the other ranks in a collective (a sum)");
  std::int64_t total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

#else

void start() {}
bool every_rank_failed(double) { return true; }
bool same_on_every_rank(const std::string&) { return true; }
void abort_every_rank(int status) {
  let_launcher_read_output();
  std::_Exit(status);
}
int rank() { return 0; }
int ranks() { return 1; }
void require_equal(std::uint64_t, const std::string&, const std::string&) {}
std::vector<unsigned char> all_gather(const void* mine, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(mine);
  return std::vector<unsigned char>(p, p + bytes);
}
void broadcast(void*, std::size_t, int) {}
std::int64_t sum(std::int64_t value) { return value; }

#endif

std::vector<std::vector<double>> records_over_ranks(const std::vector<double>& mine) {
  const int n = ranks();
  if (n == 1 || smpi_simulated()) return {mine};
  const std::vector<unsigned char> all = all_gather(mine.data(), mine.size() * sizeof(double));
  std::vector<std::vector<double>> records(static_cast<std::size_t>(n), mine);
  for (std::size_t r = 0; r < records.size(); ++r)
    std::memcpy(records[r].data(), all.data() + r * mine.size() * sizeof(double),
                mine.size() * sizeof(double));
  return records;
}

std::vector<double> mean_over_ranks(const std::vector<double>& mine, bool known_everywhere) {
  const std::vector<std::vector<double>> records = records_over_ranks(mine);
  std::vector<double> out(mine.size(), 0.0);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    double total = 0;
    bool known = true;
    for (const std::vector<double>& r : records) {
      known = known && r[k] > 0;
      total += r[k];
    }
    out[k] = known || !known_everywhere ? total / static_cast<double>(records.size()) : 0.0;
  }
  return out;
}

std::vector<std::string> all_gather_text(const std::string& text) {
  if (ranks() == 1 || smpi().on) return {text};
  const std::uint64_t mine = text.size();
  const std::vector<unsigned char> sizes = all_gather(&mine, sizeof(mine));
  const std::vector<unsigned char> all = all_gather(text.data(), text.size());
  std::vector<std::string> texts;
  std::size_t at = 0;
  for (std::size_t r = 0; r * sizeof(mine) < sizes.size(); ++r) {
    std::uint64_t size = 0;
    std::memcpy(&size, sizes.data() + r * sizeof(mine), sizeof(mine));
    texts.emplace_back(reinterpret_cast<const char*>(all.data()) + at, size);
    at += size;
  }
  return texts;
}

}  // namespace tessera::detail::comm
