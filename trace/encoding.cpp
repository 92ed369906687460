#include "trace/encoding.hpp"

#include <cstdint>
#include <cstring>

namespace tessera::trace {

namespace {

// `fields` lists once what travels; the Encoder writes and the Decoder reads through it.
struct Encoder {
  std::string& bytes;
  template <class T>
  void field(const T& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void field(const std::string& s) {
    field(static_cast<std::uint64_t>(s.size()));
    bytes += s;
  }
  template <class T>
  void count(const std::vector<T>& v) {
    field(static_cast<std::uint64_t>(v.size()));
  }
};

struct Decoder {
  const unsigned char* p;
  template <class T>
  void field(T& v) {
    std::memcpy(&v, p, sizeof(v));
    p += sizeof(v);
  }
  void field(std::string& s) {
    std::uint64_t n = 0;
    field(n);
    s.assign(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  template <class T>
  void count(std::vector<T>& v) {
    std::uint64_t n = 0;
    field(n);
    v.resize(n);
  }
};

// RankTrace is `RankTrace` or `const RankTrace`.
template <class Io, class Record>
void fields(Io& io, Record& r) {
  io.field(r.rank);
  io.field(r.begin_us);
  io.field(r.end_us);
  io.field(r.critical_path_us);
  io.count(r.workers);
  for (auto& w : r.workers) {
    io.field(w.id);
    io.field(w.name);
    io.field(w.arch);
    io.field(w.memory_node);
  }
  io.count(r.tasks);
  for (auto& t : r.tasks) {
    io.field(t.stencil);
    io.field(t.kind);
    io.field(t.field);
    io.field(t.tile);
    io.field(t.step);
    io.field(t.worker);
    io.field(t.pinned_worker);
    io.field(t.early_copies);
    io.field(t.submit_us);
    io.field(t.start_us);
    io.field(t.end_us);
    io.field(t.predicted_us);
    io.field(t.seq);
    io.count(t.data);
    for (auto& a : t.data) {
      io.field(a.data);
      io.field(a.bytes);
      io.field(a.mode);
    }
  }
  io.count(r.totals);
  for (auto& t : r.totals) {
    io.field(t.worker);
    io.field(t.kind);
    io.field(t.tasks);
    io.field(t.measured_us);
    io.field(t.predicted_tasks);
    io.field(t.predicted_us);
    io.field(t.measured_with_prediction_us);
  }
  io.count(r.model_times);
  for (auto& m : r.model_times) {
    io.field(m.kind);
    io.field(m.arch);
    io.field(m.tasks);
    io.field(m.predicted_us);
  }
  io.count(r.transfers);
  for (auto& t : r.transfers) {
    io.field(t.from);
    io.field(t.to);
    io.field(t.bytes);
    io.field(t.count);
    io.field(t.mpi);
  }
  io.count(r.transfer_samples);
  for (auto& t : r.transfer_samples) {
    io.field(t.at_us);
    io.field(t.link);
    io.field(t.bytes);
    io.field(t.count);
  }
}

}  // namespace

void encode(const RankTrace& r, std::string& out) {
  Encoder e{out};
  fields(e, r);
}

std::vector<RankTrace> decode(const unsigned char* bytes, std::size_t size) {
  std::vector<RankTrace> out;
  Decoder d{bytes};
  while (d.p < bytes + size) fields(d, out.emplace_back());
  return out;
}

}  // namespace tessera::trace
