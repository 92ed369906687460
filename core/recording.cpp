#include "core/recording.hpp"

#include <fstream>

#include "core/comm.hpp"
#include "tessera/error.hpp"
#include "trace/encoding.hpp"

namespace tessera::detail {

namespace {
void check_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  std::ofstream probe(path);
  if (!probe)
    throw Error(std::string("cannot write the ") + flag + " file '" + path + "'; give " + flag +
                " a path in a writable directory");
}
}  // namespace

Recording::Recording(std::string json_path, std::string html_path)
    : json_path_(std::move(json_path)), html_path_(std::move(html_path)) {
  check_writable(json_path_, "--trace");
  check_writable(html_path_, "--report");
}

std::vector<trace::RankTrace> Recording::gather(const trace::RankTrace& mine) {
  if (comm::ranks() == 1) return {mine};
  std::string bytes;
  trace::encode(mine, bytes);
  const std::vector<unsigned char> all = comm::all_gather(bytes.data(), bytes.size());
  return trace::decode(all.data(), all.size());
}

void Recording::write(const std::vector<trace::RankTrace>& ranks, const std::string& title) const {
  if (!json_path_.empty()) {
    std::ofstream out(json_path_);
    trace::write_chrome_json(ranks, out);
  }
  if (!html_path_.empty()) {
    std::ofstream out(html_path_);
    trace::write_html_report(ranks, title, out);
  }
}

}  // namespace tessera::detail
