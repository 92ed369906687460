// The few MPI collectives Tessera itself calls (start-up checks, gathers, reductions), with a
// one-process fallback when Tessera is built without MPI. Task data never goes through here:
// StarPU-MPI moves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::detail::comm {

/// Initialises MPI (thread level MPI_THREAD_MULTIPLE: Tessera's collectives run while
/// StarPU-MPI's progress thread calls MPI) unless the program already did (then it must have
/// asked for that level too when there are several ranks); MPI is then finalized at exit.
/// Without MPI: nothing.
void start();
/// This process's rank and the number of ranks (0 and 1 without MPI or before start()).
int rank();
int ranks();
/// Whether the ranks are simulated under SimGrid's SMPI (docs/simulation.md), where the program
/// may not call MPI: the start-up checks between ranks are skipped, sum and broadcast see this
/// rank only, and all_gather throws (no host values exist to gather).
bool smpi_simulated();
/// Throws the same tessera::Error on every rank unless `value` is equal on all of them;
/// `what` names the value in the message.
void require_equal(std::uint64_t value, const std::string& what, const std::string& fix);
/// Every rank's `text`, in rank order, on every rank (this rank's alone with one rank or under
/// SMPI). Collective.
std::vector<std::string> all_gather_text(const std::string& text);
/// Every rank's bytes, concatenated in rank order, on every rank.
std::vector<unsigned char> all_gather(const void* mine, std::size_t bytes);
/// Per-tile data made by the tiles' owners, on every rank: every rank packs the tiles it owns
/// (pack(tile, bytes)), all_gather concatenates the ranks in rank order, then every rank walks
/// that concatenation with unpack(tile, from), which returns where the next tile starts.
/// owner(tile) gives a tile's rank. Collective.
template <class Owner, class Pack, class Unpack>
void share_owned(int tiles, Owner owner, Pack pack, Unpack unpack) {
  std::vector<unsigned char> packed;
  for (int t = 0; t < tiles; ++t)
    if (owner(t) == rank()) pack(t, packed);
  const std::vector<unsigned char> all = all_gather(packed.data(), packed.size());
  const unsigned char* next = all.data();
  for (int r = 0; r < ranks(); ++r)
    for (int t = 0; t < tiles; ++t)
      if (owner(t) == r) next = unpack(t, next);
}
/// `bytes` at `data` on rank `root` copied to every rank.
void broadcast(void* data, std::size_t bytes, int root);
/// Sum of `value` over the ranks, on every rank.
std::int64_t sum(std::int64_t value);
/// Figures every rank agrees on, in one collective: for each of `mine`, the mean of that figure
/// over the ranks, added in rank order so that every rank gets the same bits (a GPU's memory in
/// bytes, a time per point in seconds: any magnitude, no fixed-point scale). With
/// `known_everywhere`, a figure is known (> 0) on every rank or it is 0 for all: the ranks would
/// otherwise decide on figures some of them do not have. Under SMPI, this rank's own figures.
std::vector<double> mean_over_ranks(const std::vector<double>& mine, bool known_everywhere);
/// Every rank's `mine` (of one size on every rank), in rank order: what each rank combines alike
/// (the same bits on every rank). Under SMPI, this rank's own alone. Collective.
std::vector<std::vector<double>> records_over_ranks(const std::vector<double>& mine);
/// Runs `local` on every rank: checks whose outcome may differ between ranks (paths, memory,
/// the environment, starting StarPU). Collective. When it throws tessera::Error on any rank,
/// every rank throws the same Error: the message itself when every rank failed alike, else the
/// first failing rank's message as "rank R: ..." (and which other ranks failed), so that rank 0
/// can print it and every rank can exit, instead of the healthy ranks waiting forever in their
/// next collective for a rank that left.
void agree(const std::function<void()>& local);
/// For a rank leaving on an error: whether every rank is leaving on an error too, within
/// `seconds` (then they all reached the same failure and may exit together). Non-blocking for
/// the other ranks: it runs on a communicator of its own. The answer is kept: later calls
/// return it at once. Without MPI or with one rank: true.
bool every_rank_failed(double seconds);
/// Whether the ranks' `message`s are all equal (collective; call only once every_rank_failed).
bool same_on_every_rank(const std::string& message);
/// Ends every rank of the job with `status` (MPI_Abort); without MPI, this process. What this
/// rank printed is read by its launcher first (let_launcher_read_output).
[[noreturn]] void abort_every_rank(int status);
/// Flushes stdout and stderr and waits (5 s at most) until whatever reads them, a pipe or
/// socket to the MPI launcher, has read every byte: a rank's last words before an abort.
void let_launcher_read_output();
/// FNV-1a hash of bytes, for comparing option sets across ranks.
std::uint64_t hash(const std::string& bytes, std::uint64_t seed = 1469598103934665603ull);

}  // namespace tessera::detail::comm
