#include "core/comm.hpp"

#include <cstdlib>
#include <cstring>

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

#ifdef TESSERA_WITH_MPI

namespace {
bool mpi_up() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}
}  // namespace

void start() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return;
  // Tessera started MPI, so Tessera ends it, once, at exit: a process may create several
  // Runtimes one after the other (the tests do) but may initialise MPI only once.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("MPI provides thread level " + std::to_string(provided) +
                " but StarPU-MPI needs MPI_THREAD_SERIALIZED; use an MPI built with threads");
  std::atexit([] {
    if (mpi_up()) MPI_Finalize();
  });
}

int rank() {
  if (!mpi_up()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int ranks() {
  if (!mpi_up()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void require_equal(std::uint64_t value, const std::string& what, const std::string& fix) {
  if (ranks() == 1) return;
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
  // Counts as MPI ints: a rank's share of a gathered field must stay below 2 GiB.
  const int count = static_cast<int>(bytes);
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  }
  std::vector<unsigned char> out(total);
  MPI_Allgatherv(mine, count, MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  return out;
}

void broadcast(void* data, std::size_t bytes, int root) {
  if (ranks() == 1) return;
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
}

std::int64_t sum(std::int64_t value) {
  if (ranks() == 1) return value;
  std::int64_t total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

#else

void start() {}
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

}  // namespace tessera::detail::comm
