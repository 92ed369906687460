// Checkpoint and restart: every field's tiles written by tasks on their owners (one file per
// tile), with the step, a description of the run's options and a checksum per file in a
// manifest; the checkpoint directory appears whole (renamed into place once the manifest is
// written) or not at all. A restart reads it back into fields of any tiling and rank count,
// refusing a truncated or corrupted checkpoint with a message.
#pragma once

#include <memory>
#include <string>

#include "tessera/field.hpp"

namespace tessera {

namespace detail {
struct CheckpointState;
struct RestartState;
void checkpoint_add(CheckpointState& s, FieldStorage& f, const std::string& name);
void restart_restore(const RestartState& s, FieldStorage& f, const std::string& name);
}  // namespace detail

/// A checkpoint of step `step` into directory `dir` (which must not be a file; an existing
/// checkpoint there is replaced only once the new one is complete; a `dir` or `dir.old` that
/// no checkpoint made, without the marker file `tessera-checkpoint`, is refused, never
/// removed; the folder holding `dir` is locked for the Runtime's life, so a second process
/// checkpointing into it is refused):
///   tessera::Checkpoint ck("ckpt/step-120", 120, "heat3d --size 64 64 64 --alpha 0.1");
///   ck.add("u", u);   // submits one task per tile; returns at once
///   ...               // more steps may be submitted meanwhile
///   ck.commit();      // waits for the files, writes the manifest, renames into place
/// Every call is collective (every rank, same order). Fields are named explicitly, since a
/// Field object swapped with another carries the other's storage and name.
class Checkpoint {
 public:
  Checkpoint(std::string dir, long step, std::string about);
  ~Checkpoint();  // without commit(): the partial directory is removed, nothing else changes
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  template <class T, int D>
  void add(const std::string& name, const Field<T, D>& f) {
    detail::checkpoint_add(*state_, f.storage(), name);
  }
  /// Throws tessera::Error (on every rank) when a file could not be written.
  void commit();
  const std::string& directory() const;

 private:
  std::unique_ptr<detail::CheckpointState> state_;
};

/// A checkpoint read back: its manifest is read and checked on construction (collective);
/// restore() reads each file this rank needs and checks its size and checksum.
class Restart {
 public:
  explicit Restart(std::string dir);
  ~Restart();
  long step() const;
  /// The run's description given to the Checkpoint (compare it with this run's).
  const std::string& about() const;
  /// Sets `f` to the checkpointed field `name` (same element type and extent; any tiling).
  template <class T, int D>
  void restore(const std::string& name, Field<T, D>& f) const {
    detail::restart_restore(*state_, f.storage(), name);
  }

 private:
  std::unique_ptr<detail::RestartState> state_;
};

}  // namespace tessera
