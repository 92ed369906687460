// Checkpoint and restart (include/tessera/checkpoint.hpp). Tiles are written by tasks on their
// owners into DIR.partial (core/io/tile_files.hpp); commit() gathers their checksums, rank 0
// writes the manifest and renames DIR.partial to DIR. A restart reads the manifest (itself
// checksummed) and, on each rank, the tile files that overlap the tiles it owns now, so the
// tiling and the rank count may differ from the run that wrote it. Ranks share the file
// system (every rank reads and writes the same directory).
#include "tessera/checkpoint.hpp"

#include <algorithm>
#include <cinttypes>
#include <deque>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/runtime/comm.hpp"
#include "core/runtime/context.hpp"
#include "core/grid/field_impl.hpp"
#include "core/runtime/files.hpp"
#include "core/io/tile_files.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "tessera-checkpoint 1";

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, v);
  return text;
}

// One field as the manifest records it.
struct TileRecord {
  Extent3 origin{}, extent{};
  std::uint64_t bytes = 0, checksum = 0;
  std::string file;
};
struct FieldRecord {
  std::string name, type;
  int dims = 0;
  Extent3 extent{};
  std::vector<TileRecord> tiles;
};

}  // namespace

struct CheckpointState {
  Context* context = nullptr;
  std::string dir, partial;
  long step = 0;
  std::string about;
  std::vector<FieldRecord> fields;
  std::deque<TileFile> files;  // in the order of fields[].tiles[]
  bool committed = false;
  int uncaught = 0;
};

struct RestartState {
  std::string dir;
  long step = 0;
  std::string about;
  std::vector<FieldRecord> fields;
};

void checkpoint_add(CheckpointState& s, FieldStorage& f, const std::string& name) {
  if (s.committed) throw Error("checkpoint " + s.dir + " is committed; add fields before commit()");
  if (&f.context() != s.context)
    throw Error("field '" + name + "' belongs to another Runtime than the checkpoint");
  check_file_name(name);
  for (const FieldRecord& r : s.fields)
    if (r.name == name)
      throw Error("checkpoint " + s.dir + " already has a field '" + name +
                  "'; give each field its own name");
  FieldRecord& r = s.fields.emplace_back();
  r.name = name;
  r.type = f.type_name();
  r.dims = f.grid().dims;
  r.extent = f.grid().extent;
  for (int t = 0; t < f.tiles(); ++t) {
    const TileGeometry g = f.geometry(t);
    TileRecord& tr = r.tiles.emplace_back();
    tr.origin = g.origin;
    tr.extent = g.extent;
    tr.file = name + "_" + std::to_string(t) + ".bin";
    TileFile& file = s.files.emplace_back();
    file.path = s.partial + "/" + tr.file;
    submit_tile_file(f, t, file, s.step, "checkpoint-tile");
  }
}

namespace {

std::string manifest_text(const CheckpointState& s) {
  std::ostringstream m;
  m << kMagic << "\nstep " << s.step << "\nabout " << s.about << "\n";
  for (const FieldRecord& r : s.fields) {
    m << "field " << r.name << ' ' << r.type << ' ' << r.dims << ' ' << r.extent[0] << ' '
      << r.extent[1] << ' ' << r.extent[2] << ' ' << r.tiles.size() << "\n";
    for (std::size_t t = 0; t < r.tiles.size(); ++t) {
      const TileRecord& tr = r.tiles[t];
      m << "tile " << t;
      for (int a = 0; a < 3; ++a) m << ' ' << tr.origin[a];
      for (int a = 0; a < 3; ++a) m << ' ' << tr.extent[a];
      m << ' ' << tr.bytes << ' ' << hex(tr.checksum) << ' ' << tr.file << "\n";
    }
  }
  std::string text = m.str();
  return text + "end " + hex(fnv1a(text.data(), text.size())) + "\n";
}

std::string refused(const std::string& dir, const std::string& why) {
  return "checkpoint " + dir + " cannot be restarted from: " + why +
         "; restart from another checkpoint (or run from the start without --restart)";
}

RestartState read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest";
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(refused(dir, "it does not exist"));
  if (!fs::is_directory(dir, ec)) throw Error(refused(dir, "it is a file, not a directory"));
  if (!in)
    throw Error(refused(dir,
                        "it has no manifest (not a checkpoint, or one whose writing did not "
                        "finish)"));
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  const std::size_t end = text.rfind("end ");
  if (end == std::string::npos || (end > 0 && text[end - 1] != '\n') ||
      text.substr(end) != "end " + hex(fnv1a(text.data(), end)) + "\n")
    throw Error(refused(dir,
                        "its manifest is truncated or corrupted (its checksum does not "
                        "match)"));
  RestartState s;
  s.dir = dir;
  std::istringstream lines(text.substr(0, end));
  std::string line;
  std::getline(lines, line);
  if (line != kMagic)
    throw Error(refused(dir, "its manifest does not start with '" + std::string(kMagic) + "'"));
  const auto bad = [&](const std::string& l) {
    return Error(refused(dir, "manifest line '" + l + "' is malformed"));
  };
  while (std::getline(lines, line)) {
    std::istringstream w(line);
    std::string key;
    w >> key;
    if (key == "step") {
      if (!(w >> s.step) || s.step < 0) throw bad(line);
    } else if (key == "about") {
      s.about = line.size() > 6 ? line.substr(6) : "";
    } else if (key == "field") {
      FieldRecord r;
      std::size_t tiles = 0;
      if (!(w >> r.name >> r.type >> r.dims >> r.extent[0] >> r.extent[1] >> r.extent[2] >> tiles))
        throw bad(line);
      // Each tile has a line of its own below, so a count the manifest cannot hold is refused
      // before anything is allocated for it.
      if (tiles > text.size())
        throw Error(refused(dir, "its field '" + r.name + "' claims " + std::to_string(tiles) +
                                     " tiles, more than its manifest of " +
                                     std::to_string(text.size()) + " bytes can list"));
      r.tiles.resize(tiles);
      s.fields.push_back(r);
    } else if (key == "tile") {
      std::size_t t = 0;
      TileRecord tr;
      std::string sum;
      if (s.fields.empty() || !(w >> t) || t >= s.fields.back().tiles.size()) throw bad(line);
      for (int a = 0; a < 3; ++a) w >> tr.origin[a];
      for (int a = 0; a < 3; ++a) w >> tr.extent[a];
      if (!(w >> tr.bytes >> sum >> tr.file)) throw bad(line);
      tr.checksum = std::strtoull(sum.c_str(), nullptr, 16);
      s.fields.back().tiles[t] = tr;
    } else {
      throw bad(line);
    }
  }
  return s;
}

// The file that marks a directory as made by Checkpoint: written into DIR.partial before any
// tile, so the clean-up below removes only what a checkpoint writer made, never a user's own
// *.partial directory. It stays in the complete checkpoint (the restart ignores it).
constexpr const char* kMarker = "tessera-checkpoint";

bool made_by_checkpoint(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kMarker, ec);
}

// Refuses to rename or remove `path` (a complete checkpoint DIR, or DIR.old) unless a
// checkpoint writer made it: a user's own folder of that name is theirs, never ours to delete.
void refuse_unless_made_by_checkpoint(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)) || made_by_checkpoint(path)) return;
  throw Error("checkpoint " + path.string() + " is in the way: it exists and was not made by a " +
              "Tessera checkpoint (it has no file " + kMarker +
              "), so it is neither replaced nor removed; move it away, or give another "
              "--checkpoint-dir");
}

// The lock file that keeps a second run from checkpointing into a directory this run
// checkpoints into: the two would remove each other's partial checkpoints and rename over each
// other's steps. flock(2) locks are released by the kernel when the process ends however it
// ends, so a killed run leaves no stale lock behind, only the (empty) file.
constexpr const char* kLockFile = "tessera-checkpoint.lock";

// The folders this Runtime checkpoints into, cleared of stale partial checkpoints and locked
// for the Runtime's life (Context::state; the locks go when it ends).
struct ClearedFolders {
  std::set<std::string> parents;
  std::vector<int> locks;
  ClearedFolders() = default;
  ClearedFolders(const ClearedFolders&) = delete;
  ClearedFolders& operator=(const ClearedFolders&) = delete;
  ~ClearedFolders() {
    for (int fd : locks) ::close(fd);
  }
};

// Takes the checkpoint lock of `parent` for this process, or throws naming the fix.
void lock_checkpoint_folder(ClearedFolders& folders, const std::string& parent) {
  const std::string path = parent + "/" + kLockFile;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("cannot create the checkpoint lock " + path + " (" + std::strerror(errno) +
                "); give a --checkpoint-dir this run can write to");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw Error("checkpoint directory " + parent +
                " is in use: another run is checkpointing into it (that run holds the lock " +
                path +
                "); two runs cannot share a checkpoint directory, give this run its own "
                "--checkpoint-dir");
  }
  folders.locks.push_back(fd);
}

// A checkpoint is complete once DIR.partial is renamed to DIR, so a DIR.partial (with the
// marker) left in the directory is one a killed run never committed, and never a complete
// checkpoint. The first checkpoint this run writes into a directory removes every such
// leftover there and says so once, after taking the directory's lock (a second run
// checkpointing into it at the same time is refused).
void remove_stale_partials(Context& c, const std::string& dir) {
  const std::string parent = files::directory_of(dir);
  ClearedFolders& folders = c.state<ClearedFolders>();
  if (folders.parents.count(parent) != 0) return;
  lock_checkpoint_folder(folders, parent);
  folders.parents.insert(parent);
  std::error_code ec;
  std::vector<std::string> removed;
  const std::string suffix = ".partial";
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
        !e.is_directory(ec) || !made_by_checkpoint(e.path()))
      continue;
    fs::remove_all(e.path(), ec);
    if (ec)
      throw Error("cannot remove the stale partial checkpoint " + e.path().string() + " (" +
                  ec.message() + "); remove it by hand");
    removed.push_back(name);
  }
  if (removed.empty()) return;
  std::sort(removed.begin(), removed.end());
  std::string names;
  for (const std::string& n : removed) names += (names.empty() ? "" : ", ") + n;
  std::cerr << "tessera: removed " << removed.size() << " partial checkpoint"
            << (removed.size() > 1 ? "s" : "") << " in " << parent
            << " that a stopped run never completed: " << names << std::endl;
}

}  // namespace

void restart_restore(const RestartState& s, FieldStorage& f, const std::string& name) {
  comm::agree([&] {
    const FieldRecord* r = nullptr;
    std::string names;
    for (const FieldRecord& c : s.fields) {
      if (c.name == name) r = &c;
      names += (names.empty() ? "" : ", ") + c.name;
    }
    if (r == nullptr)
      throw Error("checkpoint " + s.dir + " has no field '" + name + "' (it has: " + names +
                  "); restart with the program that wrote it");
    const GridSpec& grid = f.grid();
    if (r->type != f.type_name() || r->dims != grid.dims || r->extent != grid.extent)
      throw Error("checkpoint " + s.dir + ": field '" + name + "' is " + r->type + " on " +
                  std::to_string(r->extent[0]) + "x" + std::to_string(r->extent[1]) + "x" +
                  std::to_string(r->extent[2]) + ", this run's is " + f.type_name() + " on " +
                  std::to_string(grid.extent[0]) + "x" + std::to_string(grid.extent[1]) + "x" +
                  std::to_string(grid.extent[2]) +
                  "; restart with the same --size (the tiling "
                  "and rank count may differ)");
    const std::size_t element = f.element_size();
    std::map<std::size_t, std::string> loaded;  // checked contents of the old tiles read
    const auto old_tile = [&](std::size_t k) -> const std::string& {
      auto at = loaded.find(k);
      if (at != loaded.end()) return at->second;
      const TileRecord& tr = r->tiles[k];
      const std::string path = s.dir + "/" + tr.file;
      std::ifstream in(path, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      std::string data = bytes.str();
      const std::uint64_t expected =
          static_cast<std::uint64_t>(tr.extent[0] * tr.extent[1] * tr.extent[2]) * element;
      if (!in || data.size() != tr.bytes || tr.bytes != expected)
        throw Error(refused(s.dir, "tile file " + tr.file + " is missing or truncated (" +
                                       std::to_string(data.size()) + " bytes, the manifest says " +
                                       std::to_string(tr.bytes) + ")"));
      if (fnv1a(data.data(), data.size()) != tr.checksum)
        throw Error(refused(s.dir, "tile file " + tr.file +
                                       " is corrupted (its checksum does not "
                                       "match the manifest)"));
      return loaded.emplace(k, std::move(data)).first->second;
    };
    for (int t = 0; t < f.tiles(); ++t) {
      if (!f.mine(t)) continue;
      const TileGeometry g = f.geometry(t);
      auto* tile = static_cast<unsigned char*>(f.acquire(t, true));
      try {
        for (std::size_t k = 0; k < r->tiles.size(); ++k) {
          const TileRecord& o = r->tiles[k];
          Extent3 lo{}, hi{};
          bool overlap = true;
          for (int a = 0; a < 3; ++a) {
            lo[a] = std::max(g.origin[a], o.origin[a]);
            hi[a] = std::min(g.origin[a] + g.extent[a], o.origin[a] + o.extent[a]);
            overlap = overlap && lo[a] < hi[a];
          }
          if (!overlap) continue;
          const std::string& data = old_tile(k);
          const std::size_t row = static_cast<std::size_t>(hi[0] - lo[0]) * element;
          for (std::int64_t z = lo[2]; z < hi[2]; ++z)
            for (std::int64_t y = lo[1]; y < hi[1]; ++y) {
              const std::int64_t from =
                  (lo[0] - o.origin[0]) +
                  o.extent[0] * ((y - o.origin[1]) + o.extent[1] * (z - o.origin[2]));
              const std::int64_t to = g.offset0 + (lo[0] - g.origin[0]) +
                                      (y - g.origin[1]) * g.stride_y +
                                      (z - g.origin[2]) * g.stride_z;
              std::memcpy(tile + to * static_cast<std::int64_t>(element),
                          data.data() + from * static_cast<std::int64_t>(element), row);
            }
        }
      } catch (...) {
        f.release(t);
        throw;
      }
      f.release(t);
    }
  });
  f.written();
}

}  // namespace tessera::detail

namespace tessera {

Checkpoint::Checkpoint(std::string dir, long step, std::string about)
    : state_(std::make_unique<detail::CheckpointState>()) {
  detail::CheckpointState& s = *state_;
  s.context = &detail::live_context("tessera::Checkpoint");
  detail::refuse_in_simulation(*s.context, "tessera::Checkpoint (--checkpoint-every)");
  s.uncaught = std::uncaught_exceptions();
  if (dir.empty()) throw Error("a checkpoint needs a directory name");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (step < 0) throw Error("checkpoint step " + std::to_string(step) + " is negative");
  for (char& c : about)
    if (c == '\n' || c == '\r') c = ' ';  // the manifest keeps it on one line
  s.dir = dir;
  s.partial = dir + ".partial";
  s.step = step;
  s.about = about;
  detail::comm::agree([&] {
    if (s.context->rank != 0) return;
    if (detail::fs::exists(s.dir) && !detail::fs::is_directory(s.dir))
      throw Error("checkpoint " + s.dir + " is in the way: it is a file, not a checkpoint " +
                  "directory, so it is neither replaced nor removed; move it away, or give " +
                  "another --checkpoint-dir");
    detail::files::check_directory(detail::files::directory_of(s.dir),
                                   "the directory that holds checkpoint " + s.dir + ",");
    detail::remove_stale_partials(*s.context, s.dir);
    detail::refuse_unless_made_by_checkpoint(s.dir);
    detail::refuse_unless_made_by_checkpoint(s.dir + ".old");
    std::error_code ec;
    if (detail::fs::exists(s.partial, ec) && !detail::made_by_checkpoint(s.partial))
      throw Error(s.partial + " exists and was not made by a Tessera checkpoint (it has no file " +
                  detail::kMarker + "); move it away, or checkpoint into another directory");
    detail::fs::remove_all(s.partial, ec);  // a checkpoint that was never committed
    if (!detail::fs::create_directory(s.partial, ec) || ec)
      throw Error("cannot create " + s.partial + " (" + ec.message() +
                  "); check the checkpoint directory");
    std::ofstream(s.partial + "/" + detail::kMarker)
        << "a checkpoint written by Tessera: its clean-up may remove this directory\n";
  });
  // Every rank writes its tiles into the folder rank 0 made: a rank that cannot see it (another
  // file system, or another working directory for a relative path) would fail each tile file.
  detail::comm::agree([&] {
    std::error_code ec;
    if (s.context->rank != 0 && !detail::fs::exists(s.partial + "/" + detail::kMarker, ec))
      throw Error("cannot see " + s.partial +
                  ", which rank 0 has just created: every rank "
                  "writes its tiles there, so the ranks must share the checkpoint directory's "
                  "file system (and, for a relative --checkpoint-dir, start in the same working "
                  "directory); give a --checkpoint-dir on a file system every rank shares");
  });
}

Checkpoint::~Checkpoint() {
  detail::CheckpointState& s = *state_;
  if (s.committed || std::uncaught_exceptions() > s.uncaught) return;
  try {
    // Not committed: wait for the tile tasks (they write into DIR.partial), then drop it.
    if (&detail::live_context("tessera::Checkpoint") != s.context) return;
    detail::wait_tile_files(s.files, *s.context);
    if (s.context->rank == 0) detail::fs::remove_all(s.partial);
  } catch (const std::exception& e) { std::cerr << e.what() << std::endl; }
}

void Checkpoint::commit() {
  detail::CheckpointState& s = *state_;
  if (s.committed) return;
  detail::wait_tile_files(s.files, *s.context);
  // Every rank's checksums of the tiles it wrote, to rank 0: (index, bytes, checksum).
  std::vector<std::uint64_t> mine;
  for (std::size_t i = 0; i < s.files.size(); ++i)
    if (s.files[i].mine) mine.insert(mine.end(), {i, s.files[i].bytes, s.files[i].checksum});
  const std::vector<unsigned char> all =
      detail::comm::all_gather(mine.data(), mine.size() * sizeof(std::uint64_t));
  std::vector<std::uint64_t> records(all.size() / sizeof(std::uint64_t));
  std::memcpy(records.data(), all.data(), records.size() * sizeof(std::uint64_t));
  std::vector<detail::TileRecord*> tiles;
  for (detail::FieldRecord& r : s.fields)
    for (detail::TileRecord& t : r.tiles) tiles.push_back(&t);
  for (std::size_t k = 0; k + 2 < records.size(); k += 3) {
    tiles[records[k]]->bytes = records[k + 1];
    tiles[records[k]]->checksum = records[k + 2];
  }
  detail::comm::agree([&] {
    if (s.context->rank != 0) return;
    detail::files::write_atomically(s.partial + "/manifest", detail::manifest_text(s),
                                    "checkpoint manifest", "--checkpoint-dir");
    // DIR appears whole: an older checkpoint of that name is moved aside first, then removed;
    // both checked again here, since the user may have made either while the tiles were written.
    std::error_code ec;
    const std::string old = s.dir + ".old";
    detail::refuse_unless_made_by_checkpoint(s.dir);
    detail::refuse_unless_made_by_checkpoint(old);
    detail::fs::remove_all(old, ec);
    if (detail::fs::exists(s.dir)) detail::fs::rename(s.dir, old, ec);
    if (!ec) detail::fs::rename(s.partial, s.dir, ec);
    if (ec) throw Error("cannot rename " + s.partial + " to " + s.dir + " (" + ec.message() + ")");
    detail::fs::remove_all(old, ec);
  });
  s.committed = true;
}

const std::string& Checkpoint::directory() const { return state_->dir; }

Restart::Restart(std::string dir) : state_(std::make_unique<detail::RestartState>()) {
  detail::refuse_in_simulation(detail::live_context("tessera::Restart"),
                               "tessera::Restart (--restart)");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  detail::comm::agree([&] { *state_ = detail::read_manifest(dir); });
}

Restart::~Restart() = default;
long Restart::step() const { return state_->step; }
const std::string& Restart::about() const { return state_->about; }

}  // namespace tessera
