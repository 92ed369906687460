// Airfoil's mesh: the arrays of OP2's new_grid.dat (node coordinates; cell->node, edge->node,
// edge->cell, boundary edge->node and ->cell maps; boundary flags), generated here or read from
// such a file. The generated mesh has OP2's topology: a C-shaped structured grid of 3I x J
// quadrilaterals around a NACA0012 airfoil (I = 400, J = 600 give OP2's 720,000 cells), the
// wake cut joined, written as unstructured sets and maps.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <tessera/error.hpp>

#include "apps/common/memory.hpp"
#include "apps/common/option_checks.hpp"

namespace apps::airfoil {

// The most of each count (nodes, cells, edges, boundary edges) a mesh may have: its maps and
// the solver index 4 values per cell in 32-bit integers (4 x 2^29 = 2^31).
constexpr std::int64_t kMaxMeshCount = std::int64_t{1} << 29;
// Host bytes per cell, measured (peak resident set, 1 rank): OP2's 720,000-cell mesh 353 MB,
// 45,000 cells 36 MB, so 480 bytes per cell (the mesh, the library's copies of its sets and
// maps, the solver's 5 fields, the partition).
constexpr double kBytesPerCell = 480;

// Refuses counts beyond kMaxMeshCount and a mesh that cannot fit in memory, before the mesh's
// arrays are allocated; `what` names the mesh as the user gave it.
inline void check_mesh_size(const std::string& what, std::int64_t nnode, std::int64_t ncell,
                            std::int64_t nedge, std::int64_t nbedge) {
  const std::pair<const char*, std::int64_t> counts[] = {
      {"nodes", nnode}, {"cells", ncell}, {"edges", nedge}, {"boundary edges", nbedge}};
  for (const auto& [name, n] : counts)
    if (n > kMaxMeshCount)
      throw tessera::Error(what + " has " + std::to_string(n) + " " + name + ", more than the " +
                           std::to_string(kMaxMeshCount) +
                           " a mesh may have (its indices are 32-bit); give a smaller mesh");
  const double cells_that_fit = tessera::detail::available_memory_bytes() / kBytesPerCell;
  require_memory(what + " (" + std::to_string(ncell) + " cells)",
                 kBytesPerCell * static_cast<double>(ncell),
                 "give a mesh of at most about " +
                     std::to_string(static_cast<long long>(cells_that_fit)) + " cells");
}

struct Mesh {
  std::int32_t nnode = 0, ncell = 0, nedge = 0, nbedge = 0;
  std::vector<double> x;             // 2 per node
  std::vector<std::int32_t> cell;    // 4 nodes per cell, anticlockwise
  std::vector<std::int32_t> edge;    // 2 nodes per edge
  std::vector<std::int32_t> ecell;   // 2 cells per edge: the flux goes from the second to the first
  std::vector<std::int32_t> bedge;   // 2 nodes per boundary edge
  std::vector<std::int32_t> becell;  // its cell
  std::vector<std::int32_t> bound;   // 1: wall (airfoil), 2: far field
};

/// The NACA0012 mesh of OP2's generator (apps/mesh_generators/naca0012.m, new format), with the
/// airfoil's surface interpolated linearly rather than by a spline in the square-root plane.
inline Mesh generate_mesh(std::int64_t size_i, std::int64_t size_j) {
  const std::string what = "--mesh-size " + std::to_string(size_i) + " " + std::to_string(size_j);
  if (size_i < 1 || size_j < 2)
    throw tessera::Error(what + ": need I >= 1 and J >= 2 (3I x J cells)");
  // In doubles first: 3I x J overflows 64 bits from I, J about 2^31 each.
  const double cells = 3.0 * static_cast<double>(size_i) * static_cast<double>(size_j);
  if (cells > static_cast<double>(kMaxMeshCount))
    throw tessera::Error(what + " makes " + std::to_string(static_cast<long long>(cells)) +
                         " cells (3I x J), more than the " + std::to_string(kMaxMeshCount) +
                         " a mesh may have (its indices are 32-bit); give a smaller mesh, e.g. "
                         "--mesh-size 400 600 (OP2's 720,000 cells)");
  // About 2 edges per cell: 3I(J-1) between rows, (3I-1)J between columns, I on the wake cut.
  check_mesh_size(what, (3 * size_i + 1) * (size_j + 1), 3 * size_i * size_j,
                  3 * size_i * (size_j - 1) + (3 * size_i - 1) * size_j + size_i,
                  6 * size_i + 2 * size_j);
  const int I = static_cast<int>(size_i), J = static_cast<int>(size_j);
  // The upper surface, mapped to the square-root plane, where the airfoil is nearly flat.
  const int np = 100;
  const double pi = 3.14159265358979323846, x0 = 0.0077;
  std::vector<double> sx, sy;
  std::vector<std::complex<double>> upper;
  for (int k = 0; k < np; ++k) {
    const double s = std::sin(0.5 * pi * k / (np - 1));
    const double x = s * s;
    double y = 0.594689181 * (0.298222773 * std::sqrt(x) - 0.127125232 * x - 0.357907906 * x * x +
                              0.291984971 * x * x * x - 0.105174696 * x * x * x * x);
    if (k == np - 1) y = 0;
    upper.push_back(std::sqrt(std::complex<double>(x - x0, y)));
  }
  for (int k = np - 1; k >= 0; --k) {  // the lower surface: -conj(z), trailing edge first
    sx.push_back(-upper[static_cast<std::size_t>(k)].real());
    sy.push_back(upper[static_cast<std::size_t>(k)].imag());
  }
  for (int k = 1; k < np; ++k) {
    sx.push_back(upper[static_cast<std::size_t>(k)].real());
    sy.push_back(upper[static_cast<std::size_t>(k)].imag());
  }
  const int ni = 3 * I + 1, nj = J + 1;
  auto node = [&](int i, int j) { return i + j * ni; };
  auto cellno = [&](int i, int j) { return i + j * 3 * I; };
  Mesh m;
  m.nnode = ni * nj;
  m.ncell = 3 * I * J;
  m.x.resize(static_cast<std::size_t>(2 * m.nnode));
  for (int i = 0; i < ni; ++i) {
    const double xb = -3.0 + 6.0 * i / (3 * I);
    double yb = 0;
    if (i > I && i < 2 * I && xb > sx.front() && xb < sx.back()) {
      const auto k =
          static_cast<std::size_t>(std::upper_bound(sx.begin(), sx.end(), xb) - sx.begin());
      yb = sy[k - 1] + (sy[k] - sy[k - 1]) * (xb - sx[k - 1]) / (sx[k] - sx[k - 1]);
    }
    for (int j = 0; j < nj; ++j) {
      const double yg = yb + (3.0 - yb) * j / J;
      const std::complex<double> z = std::complex<double>(xb, yg) * std::complex<double>(xb, yg);
      m.x[static_cast<std::size_t>(2 * node(i, j))] = z.real();
      m.x[static_cast<std::size_t>(2 * node(i, j) + 1)] = z.imag();
    }
  }
  for (int j = 0; j < J; ++j)
    for (int i = 0; i < 3 * I; ++i)
      m.cell.insert(m.cell.end(), {node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)});
  for (int j = 0; j < J; ++j)
    for (int i = 0; i < 3 * I; ++i) {
      if (j == 0 && i < I) {  // the wake cut: the bottom of cell i meets the bottom of cell 3I-1-i
        m.edge.insert(m.edge.end(), {node(i, j), node(i + 1, j)});
        m.ecell.insert(m.ecell.end(), {cellno(3 * I - 1 - i, j), cellno(i, j)});
      }
      if (j < J - 1) {
        m.edge.insert(m.edge.end(), {node(i, j + 1), node(i + 1, j + 1)});
        m.ecell.insert(m.ecell.end(), {cellno(i, j), cellno(i, j + 1)});
      }
      if (i < 3 * I - 1) {
        m.edge.insert(m.edge.end(), {node(i + 1, j), node(i + 1, j + 1)});
        m.ecell.insert(m.ecell.end(), {cellno(i + 1, j), cellno(i, j)});
      }
    }
  auto boundary = [&](int n1, int n2, int c, int b) {
    m.bedge.insert(m.bedge.end(), {n1, n2});
    m.becell.push_back(c);
    m.bound.push_back(b);
  };
  for (int i = I; i < 2 * I; ++i) boundary(node(i + 1, 0), node(i, 0), cellno(i, 0), 1);
  for (int j = 0; j < J; ++j) boundary(node(3 * I, j + 1), node(3 * I, j), cellno(3 * I - 1, j), 2);
  for (int i = 3 * I - 1; i >= 0; --i) boundary(node(i, J), node(i + 1, J), cellno(i, J - 1), 2);
  for (int j = J - 1; j >= 0; --j) boundary(node(0, j), node(0, j + 1), cellno(0, j), 2);
  m.nedge = static_cast<std::int32_t>(m.ecell.size() / 2);
  m.nbedge = static_cast<std::int32_t>(m.becell.size());
  return m;
}

/// `text` with every byte that does not print (a control character, a stray byte of another
/// encoding) written as \xNN, so that a message quotes what the file holds.
inline std::string visible(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    }
  }
  return out;
}

/// Reads OP2's text mesh format (new_grid.dat): "nnode ncell nedge nbedge", then per node
/// "x y", per cell 4 node numbers, per edge "node node cell cell", per boundary edge
/// "node node cell bound"; 0-based numbers.
inline Mesh read_mesh(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))  // which fopen opens, and fscanf reads as empty
    throw tessera::Error("mesh file '" + path +
                         "' is a directory; give the path of an OP2 new_grid.dat");
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr)
    throw tessera::Error("cannot open mesh file '" + path + "' (" + std::strerror(errno) +
                         "); give the path of an OP2 new_grid.dat");
  auto fail = [&](const std::string& what) {
    std::fclose(f);
    throw tessera::Error("mesh file '" + path + "': " + what +
                         " (OP2's new_grid.dat format expected)");
  };
  Mesh m;
  // A byte-order mark, which some editors put before UTF-8 text, is no part of the numbers.
  unsigned char bom[3] = {0, 0, 0};
  if (std::fread(bom, 1, 3, f) != 3 || bom[0] != 0xEF || bom[1] != 0xBB || bom[2] != 0xBF)
    std::rewind(f);
  // The counts as written: read as text, so that 4294967298 is not taken as 2 (fscanf's %d
  // wraps) and 10^12 not as a negative count.
  char text[4][32];
  if (std::fscanf(f, "%31s %31s %31s %31s", text[0], text[1], text[2], text[3]) != 4)
    fail("no header line of 4 counts");
  std::int64_t header[4];
  const char* names[] = {"nodes", "cells", "edges", "boundary edges"};
  for (int k = 0; k < 4; ++k) {
    long v = 0;
    if (!whole_number(text[k], v).empty() || v < 1 || v > kMaxMeshCount)
      fail(std::string("its header's count of ") + names[k] + ", " + visible(text[k]) +
           ", is not a whole number between 1 and " + std::to_string(kMaxMeshCount) +
           " (a mesh's indices are 32-bit)");
    header[k] = v;
  }
  try {
    check_mesh_size("mesh file '" + path + "'", header[0], header[1], header[2], header[3]);
  } catch (const tessera::Error&) {
    std::fclose(f);
    throw;
  }
  m.nnode = static_cast<std::int32_t>(header[0]);
  m.ncell = static_cast<std::int32_t>(header[1]);
  m.nedge = static_cast<std::int32_t>(header[2]);
  m.nbedge = static_cast<std::int32_t>(header[3]);
  // Before allocating for the header's counts: every number the counts promise takes at least
  // two bytes (a digit and a separator), so a file too short for them is refused here, with
  // its counts, rather than by an allocation of gigabytes (or its failure).
  const long header_end = std::ftell(f);
  std::fseek(f, 0, SEEK_END);
  const long file_end = std::ftell(f);
  std::fseek(f, header_end, SEEK_SET);
  const auto count = [](std::int32_t n) { return static_cast<std::uint64_t>(n); };
  const std::uint64_t numbers =
      2 * count(m.nnode) + 4 * count(m.ncell) + 4 * count(m.nedge) + 4 * count(m.nbedge);
  if (header_end < 0 || file_end < header_end ||
      static_cast<std::uint64_t>(file_end - header_end) + 1 < 2 * numbers)
    fail("its header promises " + std::to_string(m.nnode) + " nodes, " + std::to_string(m.ncell) +
         " cells, " + std::to_string(m.nedge) + " edges and " + std::to_string(m.nbedge) +
         " boundary edges, " + std::to_string(numbers) + " numbers, but the " +
         std::to_string(file_end - header_end) +
         " bytes after it cannot hold them; give the file its true counts, or the complete file");
  m.x.resize(static_cast<std::size_t>(2 * count(m.nnode)));
  for (std::int32_t n = 0; n < m.nnode; ++n)
    if (std::fscanf(f, "%lf %lf", &m.x[static_cast<std::size_t>(2 * n)],
                    &m.x[static_cast<std::size_t>(2 * n + 1)]) != 2)
      fail("node " + std::to_string(n) + " lacks 2 coordinates");
    else if (!std::isfinite(m.x[static_cast<std::size_t>(2 * n)]) ||
             !std::isfinite(m.x[static_cast<std::size_t>(2 * n + 1)]))
      fail("node " + std::to_string(n) + "'s coordinates are not finite numbers; give finite ones");
  // The body's numbers as text too, read into 64 bits and checked against the set each one
  // indexes: fscanf's %d took 4294967297 as 1 and ran on the wrong cell without a word.
  const auto index = [&](const std::string& what, std::int32_t below, const char* set) {
    char number[32];
    if (std::fscanf(f, "%31s", number) != 1) fail(what + " is missing (the file ends early)");
    long v = 0;
    if (!whole_number(number, v).empty() || v < 0 || v >= below)
      fail(what + ", " + visible(number) + ", is not a " + set + " number between 0 and " +
           std::to_string(below - 1) + " (the header's count of " + set + "s is " +
           std::to_string(below) + ", numbered from 0); give the " + set + "'s 0-based number");
    return static_cast<std::int32_t>(v);
  };
  const auto flag = [&](const std::string& what) {
    char number[32];
    if (std::fscanf(f, "%31s", number) != 1) fail(what + " is missing (the file ends early)");
    long v = 0;
    if (!whole_number(number, v).empty() || (v != 1 && v != 2))
      fail(what + ", " + visible(number) +
           ", is neither 1 (a wall) nor 2 (the far field); give 1 or 2");
    return static_cast<std::int32_t>(v);
  };
  const auto nth = [](const char* what, std::int64_t k, const char* part) {
    return std::string(what) + " " + std::to_string(k) + "'s " + part;
  };
  m.cell.resize(static_cast<std::size_t>(4 * count(m.ncell)));
  for (std::size_t k = 0; k < m.cell.size(); ++k)
    m.cell[k] = index(nth("cell", static_cast<std::int64_t>(k / 4), "node"), m.nnode, "node");
  for (std::int32_t e = 0; e < m.nedge; ++e) {
    for (int k = 0; k < 2; ++k) m.edge.push_back(index(nth("edge", e, "node"), m.nnode, "node"));
    for (int k = 0; k < 2; ++k) m.ecell.push_back(index(nth("edge", e, "cell"), m.ncell, "cell"));
  }
  for (std::int32_t e = 0; e < m.nbedge; ++e) {
    for (int k = 0; k < 2; ++k)
      m.bedge.push_back(index(nth("boundary edge", e, "node"), m.nnode, "node"));
    m.becell.push_back(index(nth("boundary edge", e, "cell"), m.ncell, "cell"));
    m.bound.push_back(flag(nth("boundary edge", e, "flag")));
  }
  std::fclose(f);
  return m;  // the maps check their indices against the sets when the application declares them
}

/// Writes `m` in the format read_mesh reads (coordinates with 17 significant digits).
inline void write_mesh(const Mesh& m, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw tessera::Error("cannot write mesh file '" + path + "'");
  std::fprintf(f, " %d %d %d %d \n", m.nnode, m.ncell, m.nedge, m.nbedge);
  for (std::int32_t n = 0; n < m.nnode; ++n)
    std::fprintf(f, " %.17g %.17g \n", m.x[static_cast<std::size_t>(2 * n)],
                 m.x[static_cast<std::size_t>(2 * n + 1)]);
  for (std::int32_t c = 0; c < m.ncell; ++c) {
    const std::int32_t* v = &m.cell[static_cast<std::size_t>(4 * c)];
    std::fprintf(f, " %d %d %d %d \n", v[0], v[1], v[2], v[3]);
  }
  for (std::int32_t e = 0; e < m.nedge; ++e)
    std::fprintf(f, " %d %d %d %d \n", m.edge[static_cast<std::size_t>(2 * e)],
                 m.edge[static_cast<std::size_t>(2 * e + 1)],
                 m.ecell[static_cast<std::size_t>(2 * e)],
                 m.ecell[static_cast<std::size_t>(2 * e + 1)]);
  for (std::int32_t e = 0; e < m.nbedge; ++e)
    std::fprintf(f, " %d %d %d %d \n", m.bedge[static_cast<std::size_t>(2 * e)],
                 m.bedge[static_cast<std::size_t>(2 * e + 1)],
                 m.becell[static_cast<std::size_t>(e)], m.bound[static_cast<std::size_t>(e)]);
  std::fclose(f);
}

}  // namespace apps::airfoil
