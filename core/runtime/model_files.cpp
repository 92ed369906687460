#include "core/runtime/model_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>
#include <sstream>

#include "tasks/device_classes.hpp"

namespace tessera::detail::model_files {

namespace {

// StarPU's model format version (_STARPU_PERFMODEL_VERSION, 1.3 and 1.4 alike): the folder
// codelets/45 and the first number of every model file.
constexpr int kModelVersion = 45;
// Bounds no model StarPU writes comes near; beyond them StarPU allocates per the count read (a
// stack array of devices, arrays of combinations) before it finds the file short.
constexpr int kMaxCombinations = 4096, kMaxDevices = 256, kMaxImplementations = 64;
constexpr unsigned kMaxCoefficients = 4096;
// STARPU_NARCH: CPU, CUDA, OpenCL, MIC, SCC (1.3), MPI/TCP master-slave...: below 8 on both.
constexpr int kArchTypes = 8;
// A history line is read with fgets into 256 bytes (STR_LONG_LENGTH) and must end there.
constexpr int kLineBytes = 256;

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

// StarPU's _starpu_drop_comments: skips empty lines and lines starting with '#'.
void drop_comments(FILE* f) {
  for (;;) {
    const int c = getc(f);
    if (c == '#') {
      char s[128];
      char* got;
      do got = std::fgets(s, sizeof(s), f);
      while (got != nullptr && std::strchr(s, '\n') == nullptr);
    } else if (c != '\n') {
      ungetc(c, f);
      return;
    }
  }
}

// Reads a model file as perfmodel_history.c's parse_model_file does; the first failure, where
// StarPU asserts, sets `why`.
class ModelParser {
 public:
  explicit ModelParser(FILE* f) : f_(f) {}
  std::string parse();

 private:
  bool fail(const std::string& what) {
    if (why_.empty()) why_ = what;
    return false;
  }
  bool count(const char* format, int& v, int low, int high, const char* what);
  bool comb();
  bool per_arch();
  bool regression();
  bool history_entry();

  FILE* f_;
  std::string why_;
};

bool ModelParser::count(const char* format, int& v, int low, int high, const char* what) {
  drop_comments(f_);
  if (std::fscanf(f_, format, &v) != 1) return fail(std::string("no ") + what + " where expected");
  if (v < low || v > high)
    return fail(std::string(what) + " " + std::to_string(v) + " is not between " +
                std::to_string(low) + " and " + std::to_string(high));
  return true;
}

std::string ModelParser::parse() {
  std::fseek(f_, 0, SEEK_END);
  if (std::ftell(f_) <= 0) {
    // StarPU ignores an empty file (with a line of its own), and a directory's size reads 0 or
    // fails: told apart by the first read.
    std::rewind(f_);
    if (getc(f_) == EOF && std::ferror(f_)) return "it cannot be read as a file";
    return "";
  }
  std::rewind(f_);
  int version = 0, combs = 0;
  if (!count("%d\n", version, kModelVersion, kModelVersion, "model version")) return why_;
  if (!count("%d\n", combs, 0, kMaxCombinations, "count of device combinations")) return why_;
  for (int k = 0; k < combs; ++k)
    if (!comb()) return why_;
  return "";
}

bool ModelParser::comb() {
  int devices = 0;
  if (!count("%d\n", devices, 1, kMaxDevices, "count of devices")) return false;
  for (int d = 0; d < devices; ++d) {
    int type = 0, id = 0, cores = 0;
    if (!count("%d\n", type, 0, kArchTypes - 1, "device type") ||
        !count("%d\n", id, 0, 1 << 20, "device number") ||
        !count("%d\n", cores, 0, 1 << 20, "count of cores"))
      return false;
  }
  int implementations = 0;
  if (!count("%u\n", implementations, 1, kMaxImplementations, "count of implementations"))
    return false;
  for (int i = 0; i < implementations; ++i)
    if (!per_arch()) return false;
  return true;
}

bool ModelParser::per_arch() {
  drop_comments(f_);
  unsigned entries = 0;
  if (std::fscanf(f_, "%u\n", &entries) != 1) return fail("no count of history entries");
  if (!regression()) return false;
  for (unsigned e = 0; e < entries; ++e)
    if (!history_entry()) return false;
  return true;
}

// scan_reg_model: the linear, non-linear and multiple regressions' figures.
bool ModelParser::regression() {
  double d[4];
  unsigned u = 0;
  unsigned long lu[2];
  drop_comments(f_);
  if (std::fscanf(f_, "%le\t%le\t%le\t%le\t", &d[0], &d[1], &d[2], &d[3]) != 4 ||
      std::fscanf(f_, "%le", &d[0]) != 1 || std::fscanf(f_, "\t%le", &d[1]) != 1 ||
      std::fscanf(f_, "\t%u\t%lu\t%lu\n", &u, &lu[0], &lu[1]) != 3)
    return fail("its linear regression line is not 6 numbers and 3 counts");
  drop_comments(f_);
  if (std::fscanf(f_, "%le", &d[0]) != 1 || std::fscanf(f_, "\t%le", &d[1]) != 1 ||
      std::fscanf(f_, "%le", &d[2]) != 1 || std::fscanf(f_, "\n") != 0)
    return fail("its non-linear regression line is not 3 numbers");
  drop_comments(f_);
  unsigned coefficients = 0;
  if (std::fscanf(f_, "%u", &coefficients) != 1 || coefficients > kMaxCoefficients)
    return fail("no count of regression coefficients");
  for (unsigned c = 0; c < coefficients; ++c)
    if (std::fscanf(f_, "%le", &d[0]) != 1) return fail("a regression coefficient is missing");
  if (std::fscanf(f_, "\n") != 0) return fail("it ends inside a regression");
  return true;
}

// scan_history_entry: one line of footprint, size, [flops,] mean, deviation, sum, sum2, count.
bool ModelParser::history_entry() {
  drop_comments(f_);
  char line[kLineBytes];
  if (std::fgets(line, sizeof(line), f_) == nullptr) return fail("it ends before its entries");
  if (std::strchr(line, '\n') == nullptr) return fail("a history line is cut or too long");
  unsigned footprint = 0, samples = 0;
  unsigned long size = 0;
  double flops = 0, v[4];
  if (std::sscanf(line, "%x\t%lu\t%le\t%le\t%le\t%le\t%le\t%u", &footprint, &size, &flops, &v[0],
                  &v[1], &v[2], &v[3], &samples) != 8) {
    flops = 0;
    if (std::sscanf(line, "%x\t%lu\t%le\t%le\t%le\t%le\t%u", &footprint, &size, &v[0], &v[1], &v[2],
                    &v[3], &samples) != 7)
      return fail("a history line is not 7 or 8 numbers");
  }
  const char* names[] = {"mean", "deviation", "sum", "sum of squares"};
  std::ostringstream bad;
  if (!(std::isnan(flops) || flops >= 0)) bad << "flops " << flops;
  for (int k = 0; k < 4 && bad.tellp() == 0; ++k)
    if (!(v[k] >= 0)) bad << names[k] << " " << v[k];
  if (bad.tellp() != 0) return fail("a history entry's " + bad.str() + " is not a time >= 0");
  return true;
}

// `text` with the bytes that do not print as \xNN, for a message.
std::string visible(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "\\x%02X", c);
    out += c >= 0x20 && c < 0x7F ? std::string(1, static_cast<char>(c)) : std::string(hex);
  }
  return out;
}

// Rows of tab-separated numbers between '#' comment lines; `whole`: unsigned integers only.
// `counted`: each row's first number counts rows from 0 (after a comment, again from 0).
std::string table_damage(FILE* f, bool whole, bool counted) {
  char line[4096];
  long expected_first = 0, fields_per_row = -1, rows = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (line[0] == '#') {
      expected_first = 0;
      continue;
    }
    long fields = 0;
    for (char* at = line; *at != '\0' && *at != '\n' && *at != '#';) {  // '#': a comment
      if (*at == '\t' || *at == ' ') {
        ++at;
        continue;
      }
      char* end = nullptr;
      const double v =
          whole ? static_cast<double>(std::strtoul(at, &end, 10)) : std::strtod(at, &end);
      if (end == at || *at == '-' || !(std::isnan(v) || v >= 0))
        return "row " + std::to_string(rows + 1) + " holds '" +
               visible(std::string(at, std::min<std::size_t>(std::strcspn(at, "\t\n"), 16))) +
               "', not a number >= 0";
      // Each kind of device (CUDA, then OpenCL) numbers its rows from 0 again, with or without
      // a comment between (StarPU's load_bus_affinity_file_content).
      if (counted && fields == 0 && v == 0) expected_first = 0;
      if (counted && fields == 0 && v != static_cast<double>(expected_first++))
        return "row " + std::to_string(rows + 1) + " is numbered out of order";
      at = end;
      ++fields;
    }
    if (fields == 0) continue;
    if (fields_per_row >= 0 && fields != fields_per_row && counted)
      return "its rows have different lengths";
    fields_per_row = fields;
    ++rows;
  }
  if (std::ferror(f)) return "it cannot be read as a file";
  return rows == 0 ? "it holds no figures" : "";
}

bool is_directory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// StarPU's _starpu_gethostname: STARPU_HOSTNAME, else the host's name up to its first dot.
std::string host_name() {
  if (const char* forced = std::getenv("STARPU_HOSTNAME"); forced != nullptr && *forced != '\0')
    return forced;
  char name[65] = "";
  gethostname(name, sizeof(name) - 1);
  if (char* dot = std::strchr(name, '.')) *dot = '\0';
  return name;
}

// Moves `path` to the first free PATH.damaged-N without replacing anything; the new name, or
// empty when it is gone already (another rank moved it) or cannot be moved.
std::string move_aside(const std::string& path) {
  for (int n = 1; n < 1000; ++n) {
    std::string to = path + tasks::kDamagedSuffix + std::to_string(n);
    if (renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return to;
    if (errno == EEXIST) continue;
    if (errno != EINVAL || exists(to)) return "";
    // A file system without RENAME_NOREPLACE: the name is free, checked just above.
    return std::rename(path.c_str(), to.c_str()) == 0 ? to : "";
  }
  return "";
}

// One line a move: `problem` (what is wrong, and what StarPU would do), where the file went,
// and `effect` (what happens now).
void say_moved(std::vector<std::string>& lines, const std::string& path, const std::string& problem,
               const std::string& effect) {
  const std::string to = move_aside(path);
  if (to.empty()) return;
  lines.push_back(problem + ": moved aside to " + to + "; " + effect +
                  ". Delete the moved file once you no longer need it (docs/reliability.md)");
}

// A folder StarPU creates (codelets, codelets/45, bus): in the way when something else holds
// its name. Returns whether it is a directory now (or absent).
bool folder_usable(std::vector<std::string>& lines, const std::string& path) {
  if (!exists(path) || is_directory(path)) return true;
  say_moved(lines, path,
            "StarPU's model folder " + path +
                " is a file, and StarPU would abort creating the folder there",
            "StarPU creates the folder afresh");
  return !exists(path);
}

void check_models(const std::string& dir, std::vector<std::string>& lines) {
  const std::string codelets = dir + "/codelets";
  const std::string models = codelets + "/" + std::to_string(kModelVersion);
  if (!folder_usable(lines, codelets) || !folder_usable(lines, models)) return;
  DIR* d = opendir(models.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("tessera.", 0) == 0 && name.find(tasks::kDamagedSuffix) == std::string::npos &&
        name.find(".tmp") == std::string::npos)
      names.push_back(name);
  }
  closedir(d);
  for (const std::string& name : names) {
    const std::string path = models + "/" + name, why = model_damage(path);
    if (!why.empty())
      say_moved(lines, path,
                "the performance model " + path + " is damaged (" + why +
                    "), and StarPU would abort reading it",
                "StarPU calibrates this model again over the next runs");
  }
}

void check_bus(const std::string& dir, std::vector<std::string>& lines) {
  const std::string bus = dir + "/bus";
  if (!folder_usable(lines, bus)) return;
  const std::string stem = bus + "/" + host_name() + ".";
  const char* kinds[] = {"config", "affinity", "latency", "bandwidth"};
  std::string damaged, why;
  for (const char* kind : kinds) {
    if (!exists(stem + kind)) continue;
    why = bus_damage(stem + kind);
    if (!why.empty()) {
      damaged = stem + kind;
      break;
    }
  }
  if (damaged.empty()) return;
  // The four describe one calibration: StarPU measures the bus again when its config is gone.
  std::string others;
  for (const char* kind : kinds)
    if (stem + kind != damaged && exists(stem + kind) && !move_aside(stem + kind).empty())
      others += std::string(others.empty() ? "" : ", ") + kind;
  const bool aborts = is_directory(damaged) ||
                      damaged.compare(damaged.size() - 6, 6, "config") == 0 ||
                      damaged.compare(damaged.size() - 8, 8, "affinity") == 0;
  say_moved(lines, damaged,
            "the bus calibration file " + damaged + " is damaged (" + why + "), and StarPU would " +
                (aborts ? "abort reading it" : "discard it"),
            (others.empty() ? "" : "its " + others + " files too (one calibration); ") +
                "StarPU measures the bus again at start-up (a few seconds)");
}

}  // namespace

std::string model_damage(const std::string& path) {
  if (is_directory(path)) return "it is a directory, not a model file";
  File f(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!f) return "";  // StarPU does not read what it cannot open either
  return ModelParser(f.get()).parse();
}

std::string bus_damage(const std::string& path) {
  if (is_directory(path)) return "it is a directory, not a calibration file";
  File f(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!f) return "it cannot be opened: " + std::string(std::strerror(errno));
  const std::string kind = path.substr(path.find_last_of('.') + 1);
  if (kind == "config") {  // check_bus_config_file: the CPU count, then a count a memory kind
    drop_comments(f.get());
    unsigned cpus = 0;
    return std::fscanf(f.get(), "%u\t", &cpus) == 1 ? table_damage(f.get(), true, false)
                                                    : "it does not start with a count of CPUs";
  }
  if (kind == "affinity") {  // check_bus_affinity_file, then one row a GPU
    if (std::fscanf(f.get(), "# GPU\t") != 0) return "it is empty";
    std::rewind(f.get());
    const std::string why = table_damage(f.get(), true, true);
    return why == "it holds no figures" ? "" : why;  // no GPU: no row
  }
  return table_damage(f.get(), false, false);  // latency, bandwidth: matrices
}

std::vector<std::string> quarantine_damaged(const std::string& dir) {
  std::vector<std::string> lines;
  if (!is_directory(dir)) return lines;
  check_models(dir, lines);
  check_bus(dir, lines);
  return lines;
}

}  // namespace tessera::detail::model_files
