// The codelets of a run: one per (stencil or loop, task kind, element types), built from the
// kind's one declaration (detail::TaskKind) with its history-based perfmodel.
#pragma once

#include <map>
#include <unordered_map>
#include <vector>
#include <memory>
#include <string>

#include "tessera/detail/task.hpp"

namespace tessera::tasks {

struct Codelet;  // tasks/starpu.hpp

class CodeletRegistry {
 public:
  CodeletRegistry();
  ~CodeletRegistry();
  CodeletRegistry(const CodeletRegistry&) = delete;
  CodeletRegistry& operator=(const CodeletRegistry&) = delete;

  /// The codelet of `kind` for `stencil` (a stencil, loop or "reduce") on element types
  /// `types` (e.g. "double-double"); its perfmodel symbol is tessera.<stencil>.<kind>.<types>.
  /// Built once, then the same one. Throws tessera::Error when a timed kind's symbol is taken
  /// by another implementation (one name, one functor).
  Codelet& get(const std::string& stencil, const std::string& types, const detail::TaskKind& kind);

  /// The codelet `get` built for the same name, kind and CPU entry, found without the types
  /// string (which the CPU entry, a template instance, already determines): the per-task
  /// path of user tasks. Null until `get` built it.
  Codelet* find(const std::string& stencil, const detail::TaskKind& kind) const;

  /// The entry CPU workers run for `kind`: its CPU body, or on the emulated device
  /// (TESSERA_EMULATED_CUDA=1 or strict in a TESSERA_EMULATE_CUDA build) its CUDA body when
  /// it has one. (In the split mode the CPU body; the stand-ins run the CUDA body.)
  detail::KernelFn cpu_entry(const detail::TaskKind& kind) const;

  /// The emulated device's split mode (TESSERA_EMULATED_CUDA=split or split:K, docs/gpu.md):
  /// how many CPU workers stand in for CUDA workers (K, 1 for `split`); 0 in any other run.
  int cuda_stand_ins() const { return stand_ins_; }

  /// Every codelet built so far, by key.
  const std::map<std::string, std::unique_ptr<Codelet>>& all() const { return codelets_; }

 private:
  // Codelets and perfmodels must outlive StarPU's shutdown, which saves the models: the
  // Engine that owns this registry shuts StarPU down first.
  std::map<std::string, std::unique_ptr<Codelet>> codelets_;
  std::unordered_map<detail::KernelFn, std::vector<Codelet*>> by_entry_;  // for find()
  bool emulate_ = false;  // CPU workers run the kinds' CUDA bodies (the emulated device)
  bool strict_ = false;   // and a kind without one is an error (TESSERA_EMULATED_CUDA=strict)
  int stand_ins_ = 0;     // the split mode's stand-ins (TESSERA_EMULATED_CUDA=split[:K])
};

/// Whether TESSERA_EMULATED_CUDA asks for the emulated device: set, and neither empty nor 0
/// (off, as unset). Its value is checked when the engine starts (docs/gpu.md).
bool emulated_cuda_asked();

/// Whether the model of `c`'s tasks is sized by Placement::streamed_bytes (a time block's, in
/// simulation only), so that their submitter computes them.
bool sized_by_streamed_bytes(const Codelet& c);

}  // namespace tessera::tasks
