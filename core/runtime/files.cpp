#include "core/runtime/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::detail::files {

namespace {

std::string reason(int err) { return std::strerror(err); }

// What check_directory writes to see that a directory takes data, not only a new file: more
// than StarPU's bus calibration files of a node (a few KiB).
constexpr std::size_t kProbeBytes = 64 * 1024;

std::string base_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A new, empty temporary file next to `path` (hidden, unique); its name in `name`. -1 and errno
// on failure.
int make_temporary(const std::string& path, std::string& name) {
  name = directory_of(path) + "/." + base_of(path) + ".tmp-XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  const int fd = mkstemp(buf.data());
  name = buf.data();
  return fd;
}

// Writes all of `data`, through short writes and interruptions; false with errno on failure.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool is_special(const struct stat& st) { return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode); }

// The permissions a new file gets from the umask (mkstemp creates it 0600).
mode_t new_file_mode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) != nullptr) return buf;
  if (realpath(directory_of(path).c_str(), buf) != nullptr)
    return std::string(buf) + "/" + base_of(path);
  return path;
}

}  // namespace

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void check_writable(const std::string& path, const char* flag) {
  const std::string fix = std::string("; give ") + flag + " a path in a writable directory";
  if (path.empty() || path.back() == '/')
    throw Error(std::string(flag) + " '" + path + "' names no file" + fix);
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw Error(std::string(flag) + " '" + path + "' is a directory" + fix);
    if (is_special(st)) {  // a device or pipe: written in place, never replaced
      const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        throw Error(std::string("cannot write the ") + flag + " file '" + path +
                    "': " + reason(errno) + fix);
      close(fd);
      return;
    }
  }
  std::string name;
  const int fd = make_temporary(path, name);
  if (fd < 0)
    throw Error(std::string("cannot write the ") + flag + " file '" + path +
                "': cannot create a file in '" + directory_of(path) + "': " + reason(errno) + fix);
  close(fd);
  unlink(name.c_str());
}

void check_directory(const std::string& dir, const std::string& what) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error(what + " '" + dir +
                "' is not a directory; give a directory (it is created if missing)");
  // Create it and its parents, as StarPU would (which aborts the program when it cannot).
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error("cannot create " + what + " '" + dir + "' ('" + part + "': " + reason(errno) +
                  "); give a directory you can write");
    if (stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw Error(what + " '" + dir + "': '" + part +
                  "' is not a directory; give a directory you can write");
  }
  std::string name;
  const int fd = make_temporary(dir + "/probe", name);
  if (fd < 0)
    throw Error("cannot write in " + what + " '" + dir + "': " + reason(errno) +
                "; give a directory you can write");
  // A full disk still lets a file be created, and then fails its writes: StarPU aborts the
  // program when it cannot write its bus calibration or models, so some bytes are written (and
  // synced, which is where a full disk with delayed allocation says so) before it starts.
  const std::vector<char> probe(kProbeBytes, '\0');
  const bool written = write_all(fd, probe.data(), probe.size()) && fsync(fd) == 0;
  const int err = errno;
  close(fd);
  unlink(name.c_str());
  if (!written)
    throw Error("cannot write in " + what + " '" + dir + "' (a test file of " +
                std::to_string(kProbeBytes / 1024) + " KiB: " + reason(err) +
                "); free some space there, or give a directory on another disk");
}

void write_atomically(const std::string& given, const std::string& content, const char* what,
                      const char* flag) {
  // Through a symbolic link, replace the file it points to, not the link.
  struct stat link {};
  const std::string path =
      lstat(given.c_str(), &link) == 0 && S_ISLNK(link.st_mode) ? resolved(given) : given;
  auto fail = [&](const std::string& step, int err) {
    return Error(std::string("could not write the ") + what + " '" + path + "' (" + step + ": " +
                 reason(err) + "); free some space or give " + flag + " another path");
  };
  struct stat st {};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && is_special(st)) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw fail("open", errno);
    const bool ok = write_all(fd, content.data(), content.size());
    const int err = errno;
    if (close(fd) != 0 && ok) throw fail("close", errno);
    if (!ok) throw fail("write", err);
    return;
  }
  std::string temporary;
  const int fd = make_temporary(path, temporary);
  if (fd < 0) throw fail("create a temporary file in '" + directory_of(path) + "'", errno);
  std::string step;
  if (!write_all(fd, content.data(), content.size()))
    step = "write";
  else if (fchmod(fd, exists ? (st.st_mode & 07777) : new_file_mode()) != 0)
    step = "chmod";
  else if (fsync(fd) != 0)  // a full disk may only tell at this point
    step = "fsync";
  const int err = errno;
  if (close(fd) != 0 && step.empty()) step = "close";
  if (step.empty() && rename(temporary.c_str(), path.c_str()) != 0) step = "rename";
  if (!step.empty()) {
    const int e = step == "close" || step == "rename" ? errno : err;
    unlink(temporary.c_str());
    throw fail(step, e);
  }
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa {
  }, sb{};
  if (stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return resolved(a) == resolved(b);
}

}  // namespace tessera::detail::files
