// A reader of the VTK XML image data Tessera writes (tessera::Output): the parallel index
// (.pvti) and its pieces (.vti, appended raw data with UInt64 sizes), enough to check every
// value against Field::gather. Throws std::runtime_error on anything malformed.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtk {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The element <tag ...> starting at or after `from` (its text up to '>'), and where it ends.
inline std::string element(const std::string& xml, const std::string& tag, std::size_t& from) {
  const std::size_t at = xml.find("<" + tag + " ", from);
  if (at == std::string::npos) return {};
  const std::size_t end = xml.find('>', at);
  if (end == std::string::npos) throw std::runtime_error("unterminated <" + tag);
  from = end + 1;
  return xml.substr(at, end - at + 1);
}

inline std::string attribute(const std::string& element_text, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = element_text.find(key);
  if (at == std::string::npos)
    throw std::runtime_error("no attribute " + name + " in " + element_text);
  const std::size_t end = element_text.find('"', at + key.size());
  return element_text.substr(at + key.size(), end - at - key.size());
}

using Extent = std::array<long, 6>;
inline Extent extent_of(const std::string& text) {
  Extent e{};
  std::istringstream in(text);
  for (long& v : e)
    if (!(in >> v)) throw std::runtime_error("bad extent '" + text + "'");
  return e;
}

struct Piece {
  Extent extent;
  std::string source;
};
struct Index {
  Extent whole;
  std::string type, name;
  std::vector<Piece> pieces;
};

inline Index read_pvti(const std::string& path) {
  const std::string xml = slurp(path);
  std::size_t at = 0;
  const std::string file = element(xml, "VTKFile", at);
  if (attribute(file, "type") != "PImageData") throw std::runtime_error(path + ": not PImageData");
  Index index;
  index.whole = extent_of(attribute(element(xml, "PImageData", at), "WholeExtent"));
  const std::string array = element(xml, "PDataArray", at);
  index.type = attribute(array, "type");
  index.name = attribute(array, "Name");
  for (std::string p; !(p = element(xml, "Piece", at)).empty();)
    index.pieces.push_back({extent_of(attribute(p, "Extent")), attribute(p, "Source")});
  if (xml.find("</VTKFile>") == std::string::npos) throw std::runtime_error(path + ": truncated");
  return index;
}

struct ImagePiece {
  Extent whole, extent;
  std::string type, name;
  std::string bytes;  // the appended raw values
};

inline ImagePiece read_vti(const std::string& path) {
  const std::string xml = slurp(path);
  std::size_t at = 0;
  const std::string file = element(xml, "VTKFile", at);
  if (attribute(file, "type") != "ImageData") throw std::runtime_error(path + ": not ImageData");
  if (attribute(file, "header_type") != "UInt64")
    throw std::runtime_error(path + ": header not UInt64");
  ImagePiece p;
  p.whole = extent_of(attribute(element(xml, "ImageData", at), "WholeExtent"));
  p.extent = extent_of(attribute(element(xml, "Piece", at), "Extent"));
  const std::string array = element(xml, "DataArray", at);
  p.type = attribute(array, "type");
  p.name = attribute(array, "Name");
  if (attribute(array, "format") != "appended" || attribute(array, "offset") != "0")
    throw std::runtime_error(path + ": expected appended data at offset 0");
  const std::string appended = element(xml, "AppendedData", at);
  if (attribute(appended, "encoding") != "raw") throw std::runtime_error(path + ": not raw");
  const std::size_t underscore = xml.find('_', at);
  if (underscore == std::string::npos) throw std::runtime_error(path + ": no '_' before the data");
  std::uint64_t size = 0;
  if (underscore + 1 + sizeof(size) > xml.size()) throw std::runtime_error(path + ": truncated");
  std::memcpy(&size, xml.data() + underscore + 1, sizeof(size));
  const std::size_t data = underscore + 1 + sizeof(size);
  if (data + size > xml.size()) throw std::runtime_error(path + ": data truncated");
  p.bytes = xml.substr(data, size);
  if (xml.find("</VTKFile>", data + size) == std::string::npos)
    throw std::runtime_error(path + ": no </VTKFile> after the data");
  return p;
}

// Every point of the snapshot in global order (x fastest), from its index and pieces; checks
// that the pieces agree with the index and cover every point exactly once.
template <class T>
std::vector<T> assemble(const std::string& dir, const std::string& pvti) {
  const Index index = read_pvti(dir + "/" + pvti);
  long n[3];
  for (int a = 0; a < 3; ++a) n[a] = std::max(1L, index.whole[2 * a + 1] - index.whole[2 * a]);
  std::vector<T> out(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  std::vector<int> seen(out.size(), 0);
  for (const Piece& entry : index.pieces) {
    const ImagePiece p = read_vti(dir + "/" + entry.source);
    if (p.extent != entry.extent || p.whole != index.whole || p.type != index.type ||
        p.name != index.name)
      throw std::runtime_error(entry.source + ": does not match its index entry");
    long e[3];
    for (int a = 0; a < 3; ++a) e[a] = std::max(1L, p.extent[2 * a + 1] - p.extent[2 * a]);
    if (p.bytes.size() != sizeof(T) * static_cast<std::size_t>(e[0] * e[1] * e[2]))
      throw std::runtime_error(entry.source + ": wrong number of bytes");
    std::size_t k = 0;
    for (long z = 0; z < e[2]; ++z)
      for (long y = 0; y < e[1]; ++y)
        for (long x = 0; x < e[0]; ++x, ++k) {
          const std::size_t at = static_cast<std::size_t>(
              (p.extent[0] + x) + n[0] * ((p.extent[2] + y) + n[1] * (p.extent[4] + z)));
          std::memcpy(&out[at], p.bytes.data() + k * sizeof(T), sizeof(T));
          ++seen[at];
        }
  }
  for (int s : seen)
    if (s != 1) throw std::runtime_error(pvti + ": pieces do not cover every point once");
  return out;
}

}  // namespace vtk
