// NAS MG's problem and its check (NPB 3.x): the classes and their official rnm2, the random
// charges of the right-hand side (zran3), and norm2u3, the norms of the top residual, computed
// with bits that do not depend on the tiling or the device.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <tessera/task.hpp>
#include <tessera/tessera.hpp>

#include "apps/mg/gpu.hpp"
#include "apps/mg/npb_random.hpp"

namespace apps {

// The grid points of NPB's charges: +1 at the ten largest of the random numbers laid over the
// grid (x fastest, number g + 1 of the sequence at global index g), -1 at the ten smallest,
// chosen as NPB's zran3 does (strict comparisons while scanning z, y, x).
struct Charges {
  std::vector<std::int64_t> plus, minus;  // global indices x + n (y + n z)
};
inline Charges zran3(std::int64_t n) {
  constexpr int mm = 10;
  double big[mm], small[mm];
  std::int64_t big_at[mm], small_at[mm];
  for (int i = 0; i < mm; ++i) {
    big[i] = 0.0;
    small[i] = 1.0;
    big_at[i] = small_at[i] = 0;
  }
  std::uint64_t x = NpbRandom::mul(314159265, NpbRandom::kA);  // the first number
  for (std::int64_t g = 0; g < n * n * n; ++g, x = NpbRandom::mul(x, NpbRandom::kA)) {
    const double v = NpbRandom::value(x);
    if (v > big[0]) {  // big[0] is the smallest of the ten largest: bubble the new one up
      big[0] = v;
      big_at[0] = g;
      for (int i = 0; i < mm - 1 && big[i] > big[i + 1]; ++i) {
        std::swap(big[i], big[i + 1]);
        std::swap(big_at[i], big_at[i + 1]);
      }
    }
    if (v < small[0]) {
      small[0] = v;
      small_at[0] = g;
      for (int i = 0; i < mm - 1 && small[i] < small[i + 1]; ++i) {
        std::swap(small[i], small[i + 1]);
        std::swap(small_at[i], small_at[i + 1]);
      }
    }
  }
  return {std::vector<std::int64_t>(big_at, big_at + mm),
          std::vector<std::int64_t>(small_at, small_at + mm)};
}

// A problem: its size, iterations, the official rnm2 of its class (0: class U, none).
struct MgClass {
  std::string name;  // "S", "W", "A", "B", "W-npb3.0", "U"
  std::int64_t n;
  int iterations;
  double verify_value;
};
inline MgClass mg_class(const std::string& name, std::int64_t n_u = 32, int it_u = 4) {
  if (name == "S") return {"S", 32, 4, 0.5307707005734e-04};
  if (name == "W") return {"W", 128, 4, 0.6467329375339e-05};               // NPB 3.3 and later
  if (name == "W-npb3.0") return {"W-npb3.0", 64, 40, 0.250391406439e-17};  // NPB 2.x and 3.0
  if (name == "A") return {"A", 256, 4, 0.2433365309069e-05};
  if (name == "B") return {"B", 256, 20, 0.1800564401355e-05};
  if (name == "U") return {"U", n_u, it_u, 0.0};
  throw tessera::Error(
      "--class " + name +
      " is not an MG class; give S, W (NPB 3.3+: 128^3, 4 "
      "iterations), W-npb3.0 (64^3, 40 iterations), A, B, or U with --size and --iterations");
}

// NPB's norm2u3 (the sum of squares and the largest magnitude of the top residual) with bits
// that do not depend on the tiling: per z plane the exact sum of the squares (tessera::ExactSum,
// fed by four SumFronts along x, so that the additions overlap) and the largest |r|, written
// into `planes` (kPlaneWords x 1 x n: the accumulator's bytes, then the max), one task per top
// tile (z slab); MgNorms merges the planes' accumulators and rounds once. So --tile-z, and the
// default tiling, can differ between one rank and several without changing rnm2.
constexpr int kPlaneWords = sizeof(tessera::ExactSum) / sizeof(double) + 1;

// Plane z of r: its squares added to `sum` (exact), its largest |r| returned. Written once for
// the CPU and the GPU bodies.
template <class R>
TESSERA_HD double plane_sum(const R& r, std::int64_t z, tessera::ExactSum& sum) {
  constexpr int kLanes = 4;
  const auto larger = [](double a, double b) { return a < b ? b : a; };  // std::max's choice
  const std::int64_t nx = r.extent[0];
  tessera::SumFront front[kLanes] = {};
  double max[kLanes] = {};
  for (std::int64_t y = 0; y < r.extent[1]; ++y) {
    const double* p = &r(0, y, z);
    std::int64_t x = 0;
    for (; x + kLanes <= nx; x += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        front[j].add(p[x + j] * p[x + j], sum);
        max[j] = larger(max[j], fabs(p[x + j]));
      }
    for (int j = 0; x < nx; ++x, ++j) {
      front[j].add(p[x] * p[x], sum);
      max[j] = larger(max[j], fabs(p[x]));
    }
  }
  for (int j = 0; j < kLanes; ++j) {
    front[j].flush(sum);
    max[0] = larger(max[0], max[j]);
  }
  return max[0];
}

template <class R, class P>
void plane_norms(const R& r, const P& planes, std::int64_t z0, std::int64_t z1) {
  for (std::int64_t z = z0; z < z1; ++z) {
    tessera::ExactSum sum{};
    const double max = plane_sum(r, z, sum);
    std::memcpy(&planes(0, 0, z), &sum, sizeof sum);
    planes(kPlaneWords - 1, 0, z) = max;
  }
}

#if TESSERA_CUDA_BODIES
// A thread per plane. On a GPU an ExactSum adds its words with atomics, which need global
// memory: the plane's accumulator is built in place, in the planes tile (the bytes plane_norms
// copies there), and the host normalises it when MgNorms merges the planes.
struct PlaneNormsAt {
  tessera::TileView<const double, 3> r;
  tessera::TileView<double, 3> planes;
  TESSERA_HD void operator()(std::int64_t z, std::int64_t, std::int64_t) const {
    auto& sum = *reinterpret_cast<tessera::ExactSum*>(&planes(0, 0, z));
    sum = tessera::ExactSum{};
    planes(kPlaneWords - 1, 0, z) = plane_sum(r, z, sum);
  }
};
#endif

struct PlaneNorms {
  void cpu(tessera::TileView<const double, 3> r, tessera::TileView<double, 3> planes) const {
    plane_norms(r, planes, 0, r.extent[2]);
  }
#if TESSERA_CUDA_BODIES
  void cuda(void* stream, tessera::TileView<const double, 3> r,
            tessera::TileView<double, 3> planes) const {
    for_points("mg_plane_norms", stream, PlaneNormsAt{r, planes}, r.extent[2], 1, 1);
  }
#endif
};

// The planes' sums merged (exact) and rounded once, and their largest maximum: {sum of squares,
// max |r|}. get() waits (collective under mpirun: every rank calls it).
class MgNorms {
 public:
  explicit MgNorms(tessera::Field<double, 3> planes) : planes_(std::move(planes)) {}
  const std::array<double, 2>& get() {
    if (!done_) {
      const std::vector<double> v = planes_.gather();
      tessera::ExactSum sum{};
      values_ = {0.0, 0.0};
      for (std::size_t z = 0; z * kPlaneWords < v.size(); ++z) {
        tessera::ExactSum plane;
        std::memcpy(&plane, &v[z * kPlaneWords], sizeof plane);
        sum.merge(plane);
        values_[1] = std::max(values_[1], v[z * kPlaneWords + kPlaneWords - 1]);
      }
      values_[0] = sum.round();
      done_ = true;
    }
    return values_;
  }
  double get(int k) { return get()[static_cast<std::size_t>(k)]; }

 private:
  tessera::Field<double, 3> planes_;
  std::array<double, 2> values_{};
  bool done_ = false;
};

}  // namespace apps
