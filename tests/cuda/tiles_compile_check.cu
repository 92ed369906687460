// nvcc compiles the device code of user tasks with a CUDA body and of all-pairs interactions
// (apps/nbody) and of MG's Box stencils (apps/mg) even where no GPU exists.
#include <tessera/pairs.hpp>
#include <tessera/task.hpp>

#include "apps/mg/mg.hpp"
#include "apps/nbody/nbody.hpp"

namespace {

__global__ void scale_kernel(double* p, std::int64_t n, double f) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i] *= f;
}

struct ScaleRow {  // a body with both implementations (halo 0 tiles: contiguous interior)
  double factor;
  void cpu(tessera::TileView<double, 2> v) const {
    for (std::int64_t i = 0; i < v.points(); ++i) v.data[i] *= factor;
  }
  void cuda(void* stream, tessera::TileView<double, 2> v) const {
    scale_kernel<<<static_cast<unsigned>((v.points() + 127) / 128), 128, 0,
                   static_cast<cudaStream_t>(stream)>>>(v.data, v.points(), factor);
  }
};

}  // namespace

void tessera_tiles_compile_check(tessera::Field<double, 2>& u, apps::NBody& sim, apps::Mg& mg) {
  mg.mg3p();
  tessera::Task("scale-row").submit(ScaleRow{2.0}, tessera::update_tile(u, 0));
  sim.step();
  (void)sim.energies();
}
