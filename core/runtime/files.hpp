// Files the runtime writes (trace, report; later field output and checkpoints): whole or
// absent. Each is written to a temporary file in its directory and renamed over its name only
// once every byte is on disk, so an existing file stays untouched until the new one is
// complete, and every write is checked.
#pragma once

#include <string>

namespace tessera::detail::files {

/// The directory part of `path` ("." for a bare name).
std::string directory_of(const std::string& path);
/// Throws tessera::Error, naming `flag` and `path`, unless a file could be written at `path`
/// (a temporary file can be created in its directory, or it is a device or pipe open for
/// writing). Touches no existing file.
void check_writable(const std::string& path, const char* flag);
/// Throws tessera::Error unless `dir` is (or can be made, with its parents) a directory that
/// files can be created and written in (a full disk is refused); `what` names the setting in
/// the message.
void check_directory(const std::string& dir, const std::string& what);
/// Writes `content` to `path`: through a temporary file and a rename for a regular file (or a
/// new one), straight to it for a device or pipe (/dev/stdout, /dev/null). Throws
/// tessera::Error naming `what` (the kind of file, e.g. "--trace file", "tile file"), `path`,
/// the system's reason and `flag` (the option that chose the path) when any step fails, leaving
/// no temporary file and the previous file untouched.
void write_atomically(const std::string& path, const std::string& content, const char* what,
                      const char* flag);
/// Whether `a` and `b` name the same file (the same path, or the same existing file).
bool same_file(const std::string& a, const std::string& b);

}  // namespace tessera::detail::files
