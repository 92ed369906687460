// Field output for ParaView: VTK XML image data, one piece (.vti) per tile plus the parallel
// index (.pvti) that lists them. Each piece is written by a task that reads its tile, on the
// rank that owns it, so writing overlaps the steps submitted after it and no rank gathers the
// field. Every file is whole or absent (written to a temporary file, then renamed).
#pragma once

#include <memory>
#include <string>

#include "tessera/field.hpp"

namespace tessera {

namespace detail {
struct OutputState;
void submit_output(OutputState& s, FieldStorage& f, long step, const std::string& name);
}  // namespace detail

/// Writes snapshots of fields into one directory:
///   tessera::Output out("frames");            // created if missing (checked on every rank)
///   for (step...) { ...; if (step % 10 == 0) out.write(u, step); }
///   out.finish();                             // waits for the pieces, writes the last index
/// Snapshot `step` of field `u` is `frames/u_<step>.pvti`, pieces `frames/u_<step>_<tile>.vti`
/// (step zero-padded to 8 digits). Grid points are written as VTK cells (CellData; cell (i, j,
/// k) spans [i, i+1] x [j, j+1] x [k, k+1], spacing 1), so pieces tile the whole extent with no
/// gap. Every call is collective (call it on every rank, in the same order). A write returns
/// without waiting; the index file of a snapshot is written once its pieces are on disk, at
/// the next write or finish(), which throw tessera::Error (on every rank) when a piece could
/// not be written.
class Output {
 public:
  explicit Output(std::string directory);
  ~Output();  // finishes; a failure there is printed (a destructor cannot throw): call finish()
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  /// Snapshot `step` of `f` under `name` (default: the field's name; give one where fields
  /// are swapped, since a name stays with its storage).
  template <class T, int D>
  void write(const Field<T, D>& f, long step, const std::string& name = {}) {
    detail::submit_output(*state_, f.storage(), step, name.empty() ? f.name() : name);
  }
  /// Waits for every piece submitted so far and writes their index files.
  void finish();
  const std::string& directory() const;

 private:
  std::unique_ptr<detail::OutputState> state_;
};

}  // namespace tessera
