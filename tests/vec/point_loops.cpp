// The CPU point loops of the applications, one per compilation (-DPOINT_LOOP=name), for
// scripts/vec-report.sh: it compiles each with the compiler's vectorisation report and checks
// that the x loop of detail::TilePoints (tile_points.hpp) is vectorised. Only instantiated,
// never run.
#include <cstdint>

#include <tessera/tessera.hpp>

#include "apps/cardiac/cardiac.hpp"
#include "apps/cloudsim/cloudsim.hpp"
#include "apps/heat3d/heat3d.hpp"
#include "apps/jacobi2d/jacobi2d.hpp"
#include "apps/life/life.hpp"

namespace {

// A 9-point Box blur on floats: the Box shape with a narrow type.
struct Blur {
  float w;
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<float> u, tessera::Out<float> v) const {
    v = w *
        (u(-1, -1) + u(0, -1) + u(1, -1) + u(-1, 0) + u() + u(1, 0) + u(-1, 1) + u(0, 1) + u(1, 1));
  }
};

// Life with the rule written with | and &, as docs/api.md suggests for conditions in general.
struct LifeBitwise {
  TESSERA_HD void operator()(tessera::Index<2>, tessera::In<std::uint8_t> c,
                             tessera::Out<std::uint8_t> next) const {
    const int n =
        c(-1, -1) + c(0, -1) + c(1, -1) + c(-1, 0) + c(1, 0) + c(-1, 1) + c(0, 1) + c(1, 1);
    next = static_cast<std::uint8_t>((n == 3) | ((n == 2) & (c() != 0)));
  }
};

template <int D, class F, class In, class Out>
using Interior =
    tessera::detail::Interior<D, F, tessera::detail::TypeList<In>, tessera::detail::TypeList<Out>>;

}  // namespace

tessera::detail::KernelFn point_loop() {
#if POINT_LOOP == 1  // heat3d: double, Star, 3-D
  return &Interior<3, apps::Heat3d, double, double>::cpu;
#elif POINT_LOOP == 2  // jacobi2d: float, Star, two inputs
  return &tessera::detail::Interior<2, apps::Jacobi2d, tessera::detail::TypeList<float, float>,
                                    tessera::detail::TypeList<float>>::cpu;
#elif POINT_LOOP == 3  // life as the app writes it: uint8, Box, || and &&
  return &Interior<2, apps::Life, std::uint8_t, std::uint8_t>::cpu;
#elif POINT_LOOP == 4  // life with | and &
  return &Interior<2, LifeBitwise, std::uint8_t, std::uint8_t>::cpu;
#elif POINT_LOOP == 5  // float, Box
  return &Interior<2, Blur, float, float>::cpu;
#elif POINT_LOOP == 6  // cardiac reaction: a loop, two InOut doubles, 3-D
  return &tessera::detail::TilePoints<
      3, apps::CardiacReaction<3>,
      tessera::detail::TypeList<tessera::InOut<double>, tessera::InOut<double>>,
      tessera::detail::TypeList<>>::cpu;
#elif POINT_LOOP == 7  // cardiac: a stencil with a field updated in place (InOut), 2-D
  return &tessera::detail::Interior<2, apps::CardiacPoint<2>, tessera::detail::TypeList<double>,
                                    tessera::detail::TypeList<double>,
                                    tessera::detail::TypeList<double>>::cpu;
#elif POINT_LOOP == 8  // cloudsim: PSkel's edge cases as selects, upwind neighbours by value
  return &tessera::detail::Interior<2, apps::CloudStep,
                                    tessera::detail::TypeList<float, float, float>,
                                    tessera::detail::TypeList<float>>::cpu;
#else
#error "POINT_LOOP must be 1-8"
#endif
}
