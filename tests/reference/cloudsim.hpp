// Serial reference of CloudSim (apps/cloudsim): a plain port of PSkel's sequential kernel on
// whole arrays, input(i, j) with i the row (y) and j the column (x), never optimised.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/cloudsim/cloudsim.hpp"

namespace reference {

// `steps` steps from temperatures t (x fastest) with winds wx, wy; returns the temperatures.
inline std::vector<float> cloudsim(std::int64_t width, std::int64_t height, int steps,
                                   std::vector<float> t, const std::vector<float>& wx,
                                   const std::vector<float>& wy, const apps::CloudParams& c) {
  std::vector<float> out(t.size());
  for (int s = 0; s < steps; ++s) {
    auto input = [&](std::int64_t i, std::int64_t j) {
      return t[static_cast<std::size_t>(i * width + j)];
    };
    for (std::int64_t i = 0; i < height; ++i)
      for (std::int64_t j = 0; j < width; ++j) {
        int numNeighbor = 0;
        float sum = 0.0f;
        const float inValue = input(i, j);
        float temp_wind = 0.0f;
        if (j == 0 && i == 0) {
          sum = (inValue - input(i + 1, j)) + (inValue - input(i, j + 1));
          numNeighbor = 2;
        } else if (j == 0 && i == height - 1) {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i, j + 1));
          numNeighbor = 2;
        } else if (j == width - 1 && i == height - 1) {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i, j - 1));
          numNeighbor = 2;
        } else if (j == width - 1 && i == 0) {
          sum = (inValue - input(i, j - 1)) + (inValue - input(i + 1, j));
          numNeighbor = 2;
        } else if (j == 0) {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i + 1, j)) +
                (inValue - input(i, j + 1));
          numNeighbor = 3;
        } else if (i == height - 1) {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i, j - 1)) +
                (inValue - input(i, j + 1));
          numNeighbor = 3;
        } else if (j == width - 1) {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i, j - 1)) +
                (inValue - input(i + 1, j));
          numNeighbor = 3;
        } else if (i == 0) {
          sum = (inValue - input(i, j - 1)) + (inValue - input(i, j + 1)) +
                (inValue - input(i + 1, j));
          numNeighbor = 3;
        } else {
          sum = (inValue - input(i - 1, j)) + (inValue - input(i, j - 1)) +
                (inValue - input(i, j + 1)) + (inValue - input(i + 1, j));
          numNeighbor = 4;
          const float xwind = wx[static_cast<std::size_t>(i * width + j)];
          const float ywind = wy[static_cast<std::size_t>(i * width + j)];
          const int xfactor = xwind > 0 ? 1 : -1;
          const int yfactor = ywind > 0 ? 1 : -1;
          const float temperaturaNeighborX = input(i, j + xfactor);
          const float componenteVentoX = xfactor * xwind;
          const float temperaturaNeighborY = input(i + yfactor, j);
          const float componenteVentoY = yfactor * ywind;
          temp_wind = (-componenteVentoX * ((inValue - temperaturaNeighborX) / c.cell_length)) -
                      (componenteVentoY * ((inValue - temperaturaNeighborY) / c.cell_length));
        }
        const float temperatura_conducao = -c.k * (sum / numNeighbor) * c.dt;
        const float result = inValue + temperatura_conducao;
        out[static_cast<std::size_t>(i * width + j)] = result + temp_wind * c.dt;
      }
    std::swap(t, out);
  }
  return t;
}

}  // namespace reference
